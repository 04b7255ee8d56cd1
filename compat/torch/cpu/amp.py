"""``torch.cpu.amp``: PyTorch's deprecated aliases of ``torch.amp`` for the ``cpu`` device."""

from __future__ import annotations

import warnings
from typing import Any

from compat.torch import amp as _amp

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):
    """Deprecated alias of ``torch.amp.autocast('cpu', ...)``."""

    def __init__(
        self,
        enabled: bool = True,
        dtype: Any = None,
        cache_enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """Deprecated alias of ``torch.amp.GradScaler('cpu', ...)``."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
