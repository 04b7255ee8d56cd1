"""``torch.autograd.Variable``: the legacy constructor, now a tensor factory.

``Variable(data, requires_grad=False, volatile=False)`` returns a plain ``Tensor``: a
leaf sharing ``data``'s storage (as ``data.detach()``) with ``requires_grad`` set;
``volatile`` has no effect and warns as PyTorch does. ``isinstance(t, Variable)`` is
``True`` for every tensor.
"""

from __future__ import annotations

import warnings
from typing import Any

from compat._core import dtypes as _dt
from compat._core.creation_rows import empty
from compat._core.engine import queue_callback
from compat._core.tensor import Tensor

__all__ = ["Variable"]

_ARGS = ("data", "requires_grad", "volatile", "_grad_fn", "name")


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class _ExecutionEngine:
    """``Variable._execution_engine``: what PyTorch programs reach of its C++ engine."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        """Run ``callback()`` when the backward now running finishes."""
        queue_callback(callback)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: see the module
    docstring."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:  # type: ignore[misc]
        if len(args) > len(_ARGS):
            raise TypeError(f"Variable() takes at most {len(_ARGS)} arguments ({len(args)} given)")
        params: dict[str, Any] = dict(zip(_ARGS, args))
        for k, v in kwargs.items():
            if k not in _ARGS:
                raise TypeError(f"'{k}' is an invalid keyword argument for this function")
            params[k] = v
        data = params.get("data")
        if params.get("volatile"):
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                UserWarning,
                stacklevel=2,
            )
        if data is None:
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        var = data.detach()
        if params.get("requires_grad"):
            if _dt.kind(var._npdtype) not in "fc":
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            var._requires_grad = True
        return var

    _execution_engine = _ExecutionEngine()
