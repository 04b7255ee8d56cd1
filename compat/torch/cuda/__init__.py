"""``torch.cuda``: CUDA queries answered from jax's GPU devices.

With no jax GPU (a CPU-only jax) every function behaves as in a CPU-only build of
PyTorch 2.13: ``is_available()`` is ``False``, ``device_count()`` is 0, seeding and
``empty_cache`` do nothing, memory counters are 0, and functions that need a device
raise ``AssertionError('Torch not compiled with CUDA enabled')``.
"""

from __future__ import annotations

from typing import Any

import jax

from compat._core import device as _dev
from compat._core.creation import initial_seed as _initial_seed
from compat.torch.cuda import amp

__all__ = [
    "amp",
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "is_tf32_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "synchronize",
]


def _need() -> Any:
    g = _dev.gpus()
    if not g:
        raise AssertionError(_dev.NO_CUDA)
    return g


def _gpu(device: Any) -> Any:
    g = _need()
    if device is None:
        return g[0]
    d = _dev.as_device(device)
    return _dev.jax_device(d if d.type == "cuda" else _dev.device("cuda", 0))


def is_available() -> bool:
    """Whether jax has a GPU device."""
    return bool(_dev.gpus())


def device_count() -> int:
    return len(_dev.gpus())


def is_initialized() -> bool:
    return bool(_dev.gpus())


def current_device() -> int:
    _need()
    return 0


def set_device(device: Any) -> None:
    """Only device 0 can be current (compat does not switch jax's default device)."""
    _need()
    idx = device if isinstance(device, int) else _dev.as_device(device).index or 0
    if idx != 0:
        raise NotImplementedError("torch.cuda.set_device: compat uses cuda:0 as current device")


def synchronize(device: Any = None) -> None:
    """Wait for queued work on the GPU (jax's effects barrier)."""
    _need()
    jax.effects_barrier()


def get_device_name(device: Any = None) -> str:
    return str(getattr(_gpu(device), "device_kind", "GPU"))


def get_device_capability(device: Any = None) -> tuple[int, int]:
    cc = getattr(_gpu(device), "compute_capability", "0.0")
    major, _, minor = str(cc).partition(".")
    return (int(major), int(minor or 0))


def get_device_properties(device: Any = None) -> Any:
    return _gpu(device)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    """Whether the GPU has TF32 matmuls (compute capability 8.0 or newer); no GPU: False."""
    if not _dev.gpus():
        return False
    return get_device_capability()[0] >= 8


def _stat(device: Any, key: str) -> int:
    if not _dev.gpus():
        return 0
    stats = _gpu(device).memory_stats() or {}
    return int(stats.get(key, 0))


def memory_allocated(device: Any = None) -> int:
    return _stat(device, "bytes_in_use")


def max_memory_allocated(device: Any = None) -> int:
    return _stat(device, "peak_bytes_in_use")


def memory_reserved(device: Any = None) -> int:
    return _stat(device, "bytes_reserved")


def reset_peak_memory_stats(device: Any = None) -> None:
    """Accepted; jax keeps its own peak counter."""


def empty_cache() -> None:
    """Accepted; jax manages its GPU memory pool itself."""


def manual_seed(seed: int) -> None:
    """Accepted: compat draws random numbers from the one CPU generator (``torch.manual_seed``)."""


def manual_seed_all(seed: int) -> None:
    """Accepted, as ``manual_seed``."""


def seed() -> None:
    """Accepted, as ``manual_seed``."""


def seed_all() -> None:
    """Accepted, as ``manual_seed``."""


def initial_seed() -> int:
    _need()
    return _initial_seed()
