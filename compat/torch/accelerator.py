"""``torch.accelerator``: the current accelerator is jax's GPU (``cuda``) when there is one."""

from __future__ import annotations

from compat._core import device as _dev

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    return bool(_dev.gpus())


def current_accelerator(check_available: bool = False) -> _dev.device | None:
    """``device('cuda')`` with a jax GPU, else ``None``."""
    return _dev.device("cuda") if _dev.gpus() else None


def device_count() -> int:
    return len(_dev.gpus())
