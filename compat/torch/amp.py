"""``torch.amp``: ``autocast`` and ``GradScaler``.

compat does not autocast: ops compute in their inputs' dtypes. ``autocast`` is a
context manager (and decorator) that never changes dtypes; where PyTorch itself would
disable it (``cuda`` without a GPU) it warns as PyTorch does, elsewhere it warns that
compat does not autocast. ``GradScaler`` follows PyTorch: disabled (with PyTorch's
warning) for ``cuda`` without a GPU, where ``scale`` returns its input and ``step``
just steps; enabled, it scales the loss, unscales gradients, skips steps with
non-finite gradients and grows or backs off the scale as PyTorch's does.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from compat._core import device as _dev
from compat.torch._grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "is_autocast_available"]


def is_autocast_available(device_type: str) -> bool:
    return device_type in ("cpu", "cuda")


class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: accepted,
    never changes dtypes (see the module docstring)."""

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        if not enabled:
            return
        if device_type == "cuda" and not _dev.gpus():
            warnings.warn(
                "CUDA is not available or torch_xla is imported. Disabling autocast.",
                UserWarning,
                stacklevel=2,
            )
        else:
            warnings.warn(
                "compat.torch does not autocast: ops compute in their inputs' dtypes",
                UserWarning,
                stacklevel=2,
            )
        self._enabled = False

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


def device_aliases(device: str, module: str) -> tuple[type, type]:
    """PyTorch's deprecated per-device aliases (``torch.cpu.amp``, ``torch.cuda.amp``):
    ``autocast`` and ``GradScaler`` bound to ``device``, warning as PyTorch's on use."""

    def deprecated(what: str) -> None:
        warnings.warn(
            f"`torch.{device}.amp.{what}(args...)` is deprecated. Please use "
            f"`torch.amp.{what}('{device}', args...)` instead.",
            FutureWarning,
            stacklevel=3,
        )

    class DeviceAutocast(autocast):
        __doc__ = f"Deprecated alias of ``torch.amp.autocast('{device}', ...)``."

        def __init__(
            self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True
        ) -> None:
            deprecated("autocast")
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class DeviceGradScaler(GradScaler):
        __doc__ = f"Deprecated alias of ``torch.amp.GradScaler('{device}', ...)``."

        def __init__(
            self,
            init_scale: float = 2.0**16,
            growth_factor: float = 2.0,
            backoff_factor: float = 0.5,
            growth_interval: int = 2000,
            enabled: bool = True,
        ) -> None:
            deprecated("GradScaler")
            super().__init__(
                device, init_scale, growth_factor, backoff_factor, growth_interval, enabled
            )

    for cls, name in ((DeviceAutocast, "autocast"), (DeviceGradScaler, "GradScaler")):
        cls.__name__ = cls.__qualname__ = name
        cls.__module__ = module
    return DeviceAutocast, DeviceGradScaler
