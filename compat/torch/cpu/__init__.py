"""``torch.cpu``: the CPU device's module, as ``torch.cuda`` is the GPU's.

compat runs on the host, so the device is always there (``is_available()``), there is one
(``device_count()``), it is ``"cpu"`` (``current_device()``) and waiting for it returns at
once (``synchronize``). ``torch.cpu.amp`` holds PyTorch's deprecated aliases of
``torch.amp.autocast('cpu')`` and ``torch.amp.GradScaler('cpu')``. CPU streams and events
are not provided (compat has no streams).
"""

from __future__ import annotations

from typing import Any

from compat.torch.cpu import amp

__all__ = [
    "amp",
    "current_device",
    "device_count",
    "is_available",
    "is_initialized",
    "set_device",
    "synchronize",
]


def is_available() -> bool:
    """Always ``True``: the CPU is there."""
    return True


def device_count() -> int:
    """One CPU device."""
    return 1


def current_device() -> str:
    """``"cpu"``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Accepted and ignored, as PyTorch's (there is one CPU device)."""


def synchronize(device: Any = None) -> None:
    """Returns at once: compat's CPU work is done when its results are read."""


def is_initialized() -> bool:
    """Always ``True`` (nothing to initialize)."""
    return True
