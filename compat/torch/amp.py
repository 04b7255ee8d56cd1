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
import math
import warnings
from collections.abc import Callable
from typing import Any

from compat._core import device as _dev
from compat._core.grad_mode import no_grad
from compat._core.tensor import Tensor

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


class GradScaler:
    """Loss scaling for mixed precision (see the module docstring)."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if enabled and device == "cuda" and not _dev.gpus():
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer: Any) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "inf": False})

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place; note non-finite ones."""
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["unscaled"]:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        inv = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not math.isfinite(float(p.grad.abs().sum())):
                        found = True
        st["unscaled"], st["inf"] = True, found

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` unless the unscaled gradients hold an inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        st = self._state(optimizer)
        if not st["unscaled"]:
            self.unscale_(optimizer)
        if st["inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off the scale after a skipped step; grow it after ``growth_interval`` good ones."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(st["inf"] for st in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a "
                "disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
