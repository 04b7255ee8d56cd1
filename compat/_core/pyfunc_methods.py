"""``Tensor.apply_``, ``map_`` and ``map2_``: a Python callable applied to each element
(with one or two other tensors broadcast to this one), the results written in place, as
PyTorch's CPU-only methods do (not for tensors requiring grad)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from compat._core import creation as _cr
from compat._core import dtypes as _dt
from compat._core.tensor import Tensor

__all__ = ["apply_", "map2_", "map_"]


def _caster(t: Tensor) -> Callable[[Any], Any]:
    """The Python conversion of a result to ``t``'s dtype (PyTorch's ``TypeError`` for
    a value of the wrong kind: a string into an integer tensor)."""
    kind = _dt.kind(t._npdtype)
    if kind == "b":
        return bool
    if kind in "iu":

        def to_int(v: Any) -> int:
            if isinstance(v, (int, float)):
                return int(v)
            return operator.index(v)

        return to_int
    if kind == "c":
        return complex

    def to_float(v: Any) -> float:
        if not (hasattr(type(v), "__float__") or hasattr(type(v), "__index__")):
            raise TypeError(f"must be real number, not {type(v).__name__}")
        return float(v)

    return to_float


def _run(name: str, self: Tensor, others: tuple[Tensor, ...], fn: Any) -> Tensor:
    for t in (self, *others):
        if t.requires_grad:
            raise RuntimeError(
                f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() "
                "instead."
            )
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    for o in others:
        if o.dtype != self.dtype:
            raise TypeError(f"{name}: expected {self.type()} for 'other' (got {o.type()})")
    columns = [self.reshape(-1).tolist()]
    columns += [o.expand(self.shape).reshape(-1).tolist() for o in others]
    cast = _caster(self)
    values = [cast(fn(*args)) for args in zip(*columns)]
    result = _cr.tensor(values, dtype=self.dtype).reshape(self.shape)
    return self.copy_(result)


def apply_(self: Tensor, callable: Any) -> Tensor:
    """Each element replaced by ``callable(element)``."""
    return _run("apply_", self, (), callable)


def map_(self: Tensor, tensor: Tensor, callable: Any) -> Tensor:
    """Each element replaced by ``callable(element, other)``, ``tensor`` broadcast."""
    return _run("map_", self, (tensor,), callable)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Any) -> Tensor:
    """Each element replaced by ``callable(element, x_i, y_i)``, ``x``/``y`` broadcast."""
    return _run("map2_", self, (x, y), callable)
