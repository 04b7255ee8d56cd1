"""``torch.amp.GradScaler`` and the two fused updates it runs, as PyTorch's.

The scale and the growth tracker are tensors (``float32`` and ``int32``, 0-d) made
lazily by the first ``scale`` on the output's device; each optimizer goes through the
stages ready -> unscaled -> stepped between two ``update`` calls, with PyTorch's errors
when called out of order. Optimizers that handle scaling themselves
(``_step_supports_amp_scaling``) get ``grad_scaler=`` or the ``grad_scale``/``found_inf``
attributes, as PyTorch's protocol says.
"""

from __future__ import annotations

import enum
import inspect
import math
import warnings
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from compat._core import creation as _cr
from compat._core import creation_rows as _rows
from compat._core import device as _dev
from compat._core import dtypes as _dt
from compat._core.grad_mode import no_grad
from compat._core.tensor import Tensor

__all__ = ["GradScaler", "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"]


def _amp_foreach_non_finite_check_and_unscale_(
    grads: list[Tensor], found_inf: Tensor, inv_scale: Tensor
) -> None:
    """``torch._amp_foreach_non_finite_check_and_unscale_``: multiply each of ``grads`` by
    the one-element ``inv_scale`` in place, and set ``found_inf`` (one element) to 1 when
    any of them holds an inf or a NaN."""
    if inv_scale.numel() != 1:
        raise RuntimeError("inv_scale must be a 1-element tensor.")
    if found_inf.numel() != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    if inv_scale.dtype != _dt.float32:
        raise RuntimeError("inv_scale must be a float tensor.")
    if found_inf.dtype != _dt.float32:
        raise RuntimeError("found_inf must be a float tensor.")
    with no_grad():
        for g in grads:
            if not (g.dtype.is_floating_point or g.dtype.is_complex):
                raise RuntimeError(
                    "_amp_foreach_non_finite_check_and_unscale_: expected floating-point "
                    f"gradients, got {g.dtype}"
                )
            if not bool(g.isfinite().all()):
                found_inf.fill_(1.0)
            g.mul_(inv_scale.to(g.dtype) if g.dtype != _dt.float32 else inv_scale)


def _amp_update_scale_(
    scale: Tensor,
    growth_tracker: Tensor,
    found_inf: Tensor,
    growth_factor: float,
    backoff_factor: float,
    growth_interval: int,
) -> Tensor:
    """``torch._amp_update_scale_``: after a step with non-finite gradients
    (``found_inf`` non-zero) multiply ``scale`` by ``backoff_factor`` and reset the
    tracker; otherwise count the step, and after ``growth_interval`` of them multiply the
    scale by ``growth_factor`` (kept only if finite) and reset the tracker. In place;
    returns ``scale``."""
    if growth_tracker.dtype != _dt.int32:
        raise RuntimeError("growth_tracker must be an int tensor.")
    if scale.dtype != _dt.float32:
        raise RuntimeError("current_scale must be a float tensor.")
    if found_inf.dtype != _dt.float32:
        raise RuntimeError("found_inf must be a float tensor.")
    with no_grad():
        if float(found_inf.item()):
            scale.mul_(backoff_factor)
            growth_tracker.fill_(0)
        else:
            done = int(growth_tracker.item()) + 1
            if done == growth_interval:
                grown = _cr.tensor(float(scale.item()) * growth_factor, dtype=_dt.float32)
                if math.isfinite(float(grown.item())):
                    scale.copy_(grown)
                growth_tracker.fill_(0)
            else:
                growth_tracker.fill_(done)
    return scale


class _Stage(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": _Stage.READY, "found_inf_per_device": {}}


_FIX = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."


class GradScaler:
    """Loss scaling for mixed precision: ``scale`` multiplies losses by the scale,
    ``step`` unscales the gradients and skips the step when they hold an inf or a NaN,
    ``update`` backs the scale off after a skipped step or grows it after
    ``growth_interval`` good ones. Disabled (with PyTorch's warning) for ``cuda``
    without a GPU: ``scale`` returns its input and ``step`` just steps."""

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
        self._enabled = enabled
        if self._device == "cuda" and enabled and not _dev.gpus():
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
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(_fresh_state)

    # -- the scale tensors ---------------------------------------------------------
    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _FIX)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + _FIX)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: Any) -> None:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = _rows.full((), self._init_scale, dtype=_dt.float32, device=dev)
        self._growth_tracker = _rows.full(
            (), self._init_growth_tracker, dtype=_dt.int32, device=dev
        )

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or an iterable of them, nested) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            assert self._scale is not None
            return outputs * self._scale.to(device=outputs.device)

        def apply(val: Any) -> Any:
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                assert self._scale is not None
                return val * self._scale.to(device=val.device)
            if isinstance(val, Iterable):
                scaled = map(apply, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    # -- unscaling -----------------------------------------------------------------
    def _unscale_grads_(
        self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor, allow_fp16: bool
    ) -> dict[Any, Tensor]:
        """Unscale ``optimizer``'s gradients grouped by device and dtype; the found-inf
        flag of each device."""
        groups: dict[Any, dict[Any, list[Tensor]]] = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not allow_fp16 and p.grad.dtype == _dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    groups[p.grad.device][p.grad.dtype].append(p.grad)
            per_device: dict[Any, Tensor] = {}
            for device, by_dtype in groups.items():
                flag = per_device.setdefault(device, found_inf.to(device))
                for grads in by_dtype.values():
                    _amp_foreach_non_finite_check_and_unscale_(grads, flag, inv_scale.to(device))
        return per_device

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per iteration)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is _Stage.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _rows.full((), 0.0, dtype=_dt.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = _Stage.UNSCALED

    def _check_inf_per_device(self, optimizer: Any) -> dict[Any, Tensor]:
        """Note the non-finite gradients of ``optimizer`` without unscaling them."""
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        one = _rows.full((), 1.0, dtype=_dt.float32, device=scale.device)
        found_inf = _rows.full((), 0.0, dtype=_dt.float32, device=scale.device)
        found = self._unscale_grads_(optimizer, one, found_inf, True)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = found
        return found

    def _found_inf_per_device(self, optimizer: Any) -> dict[Any, Tensor]:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    # -- stepping and updating -------------------------------------------------------
    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, skipped when they
        hold an inf or a NaN; its return value, or ``None`` when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_by_optimizer(optimizer, state, args, kwargs)
        if state["stage"] is _Stage.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        out = None
        if not sum(float(v.item()) for v in state["found_inf_per_device"].values()):
            out = optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        return out

    def _step_by_optimizer(
        self, optimizer: Any, state: dict[str, Any], args: tuple, kwargs: dict
    ) -> Any:
        """An optimizer that handles the scale itself: passed ``grad_scaler=self`` if its
        ``step`` takes it (deprecated), else given ``grad_scale`` and ``found_inf``."""
        takes_scaler = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if takes_scaler:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the passed "
                "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                "`found_inf: Tensor` to the passed optimizer and let the optimizer use them "
                "directly.",
                FutureWarning,
                stacklevel=3,
            )
            kwargs = {**kwargs, "grad_scaler": self}
        else:
            if state["stage"] is _Stage.READY:
                self._check_inf_per_device(optimizer)
            scale = self._scale
            assert scale is not None
            found = [t.to(scale.device) for t in state["found_inf_per_device"].values()]
            found_inf = sum(found[1:], found[0]) if found else scale.new_zeros(())
            if state["stage"] is _Stage.UNSCALED:
                optimizer.grad_scale = getattr(optimizer, "grad_scale", None)
            else:
                optimizer.grad_scale = scale * getattr(optimizer, "grad_scale", 1)
            optimizer.found_inf = found_inf
        out = optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        if not takes_scaler:
            del optimizer.grad_scale
            del optimizer.found_inf
        return out

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back the scale off after a skipped step, grow it after ``growth_interval`` good
        ones, or set it to ``new_scale``; then start a new iteration."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False."
                )
                if not isinstance(new_scale, Tensor) or new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [
                f.to(scale.device)
                for st in self._per_optimizer_states.values()
                for f in st["found_inf_per_device"].values()
            ]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = sum(found[1:], found[0])
            _amp_update_scale_(
                scale, tracker, combined,
                self._growth_factor, self._backoff_factor, self._growth_interval,
            )  # fmt: skip
        self._per_optimizer_states = defaultdict(_fresh_state)

    # -- getters, setters, state -------------------------------------------------------
    def _get_scale_async(self) -> Tensor | None:
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` (empty when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take the state :meth:`state_dict` gave (nothing when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
