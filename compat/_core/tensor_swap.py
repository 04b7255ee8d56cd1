"""``torch.utils.swap_tensors`` and ``Tensor.module_load``: exchanging what two tensor
objects hold while each keeps its identity, the mechanism ``nn.Module`` uses under
``torch.__future__.set_swap_module_params_on_conversion(True)``.

A compat tensor is its Python object (array storage, version counter, autograd state and
view base are slots), so swapping the class, the ``__dict__`` and every slot swaps
everything PyTorch's ``swap_tensors`` swaps with its C++ ``TensorImpl``. As in PyTorch,
a tensor with weak references is refused, the two must have the same slot names, and a
leaf's gradient accumulator already in a recorded graph is poisoned: a backward reaching
it raises PyTorch's error instead of accumulating into a tensor that changed.
"""

from __future__ import annotations

import copyreg
import weakref
from typing import Any

from compat._core.tensor import Tensor

__all__ = ["module_load", "swap_tensors"]

POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can "
    "happen when you try to run backward on a tensor that was swapped. For a module m with "
    "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change "
    "the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running "
    "forward and backward. To resolve this, please only change the device/dtype before "
    "running forward (or after both forward and backward)."
)

_UNSET = object()


def _poisoned(grad_outputs: Any) -> None:
    raise RuntimeError(POISONED)


def _live_accumulator(t: Tensor) -> Any:
    """The leaf's ``AccumulateGrad`` node while a recorded graph still holds it."""
    ref = t._acc if t._gfn is None else None
    return None if ref is None else ref()


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Exchange the contents (values, dtype, shape, autograd state, class and attributes)
    of ``t1`` and ``t2``; each object keeps its ``id`` and the references to it."""
    for t, name in ((t1, "t1"), (t2, "t2")):
        if not isinstance(t, Tensor):
            raise TypeError(f"swap_tensors(): {name} must be a Tensor, not {type(t).__name__}")
        if weakref.getweakrefs(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))  # type: ignore[attr-defined]
    if slots != set(copyreg._slotnames(type(t2))):  # type: ignore[attr-defined]
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):
        acc = _live_accumulator(t)
        if acc is not None:
            acc.register_prehook(_poisoned)
    t1.__class__, t2.__class__ = type(t2), type(t1)
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in slots:
        a, b = getattr(t1, slot, _UNSET), getattr(t2, slot, _UNSET)
        for t, value in ((t1, b), (t2, a)):
            if value is _UNSET:
                if hasattr(t, slot):
                    delattr(t, slot)
            else:
                setattr(t, slot, value)


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """What ``load_state_dict`` swaps into a parameter or buffer ``self`` under the swap
    switch: ``other`` detached (``assign=True``), or ``self`` with ``other`` copied in,
    detached. A subclass may override it to load differently."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()
