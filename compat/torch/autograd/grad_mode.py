"""``torch.autograd.grad_mode``: the grad-mode context managers, and
``_unsafe_preserve_version_counter``."""

from __future__ import annotations

from typing import Any

from compat._core import views as _views
from compat._core.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from compat._core.tensor import Tensor

__all__ = [
    "enable_grad",
    "inference_mode",
    "no_grad",
    "set_grad_enabled",
]


class _unsafe_preserve_version_counter:
    """Context manager: the version counters of ``tensors`` are what they were on entry
    when it exits (in-place changes inside are hidden from autograd's checks)."""

    def __init__(self, tensors: Tensor | tuple[Tensor, ...]) -> None:
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)

    def __enter__(self) -> None:
        self.prev = [t._vc.v for t in self.tensors]

    def __exit__(self, *exc: Any) -> None:
        for t, v in zip(self.tensors, self.prev):
            t._vc.v = v


def is_view_replay_enabled() -> bool:
    """Whether views regenerated after an in-place change are named after their view op."""
    return _views.REPLAY[0]


def _set_view_replay_enabled(mode: bool) -> None:
    _views.REPLAY[0] = bool(mode)


class _force_original_view_tracking:
    """Switch view replay to ``mode`` now (a call) or for a ``with`` block (restored on
    exit), as PyTorch's."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_view_replay_enabled()
        _set_view_replay_enabled(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        _set_view_replay_enabled(self.prev)
