"""Operators and array methods of tracers, so traced code reads like NumPy code.

Outside transforms, values are ``jax.Array``s with JAX's own methods; inside,
:class:`~funcgrad.core.interp.Tracer` gets the same names from here, each a thin
call into ``funcgrad.numpy``.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from funcgrad.core.array_row import array_methods
from funcgrad.core.interp import Tracer
from funcgrad.core.symbolic import SymDim
from funcgrad.numpy import (
    _at,
    _bitviews,
    _creation,
    _indexing,
    _linalg,
    _reductions,
    _setops,
    _shape,
    _sorting,
    _ufuncs,
)


def _swap(f: Any) -> Any:
    def g(self: Any, other: Any) -> Any:
        return f(other, self)

    return g


#: the operand types a tracer's binary operators take (besides ``__jax_array__`` objects)
_OPERANDS = (Tracer, jax.Array, np.ndarray, np.generic, bool, int, float, complex, SymDim)
#: containers a binary operator refuses itself (exact types: a ``NamedTuple`` is deferred to)
_REFUSED = (list, tuple, set, dict)
_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "divmod": "divmod()", "pow": "** or pow()", "matmul": "@", "and": "&", "or": "|", "xor": "^",
    "lshift": "<<", "rshift": ">>", "eq": "==", "ne": "==",  # (JAX's words for != too)
}  # fmt: skip


def _defer(f: Any, name: str) -> Any:
    """``f`` as the binary operator ``name`` (``"__rmul__"``...), taking JAX's arrays' stand on
    other operands: a plain list, tuple, set or dict is refused with a ``TypeError`` (but for
    the ordering comparisons, where Python's own error follows), and any other kind of
    object gets ``NotImplemented``, so Python tries its reflected method (a ``NamedTuple``
    of arrays with ``__rmul__``) or raises its "unsupported operand type(s)" error."""

    bare = name.strip("_")
    reflected = bare.startswith("r") and bare[1:] in _SYMBOLS
    symbol = _SYMBOLS.get(bare[1:] if reflected else bare)

    def op(self: Any, other: Any) -> Any:
        if isinstance(other, _OPERANDS) or hasattr(other, "__jax_array__"):
            return f(self, other)
        if symbol is not None and type(other) in _REFUSED:
            a, b = (other, self) if reflected else (self, other)
            raise TypeError(
                f"unsupported operand type(s) for {symbol}: {type(a).__name__!r} and "
                f"{type(b).__name__!r}"
            )
        return NotImplemented

    op.__name__ = name
    return op


def _shape_args(args: tuple) -> Any:
    """``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` alike."""
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0]) if args[0] is not None else None
    return args


def install() -> None:
    """Install the operators and methods on :class:`Tracer`."""

    ops = {
        "__add__": _ufuncs.add,
        "__radd__": _swap(_ufuncs.add),
        "__sub__": _ufuncs.subtract,
        "__rsub__": _swap(_ufuncs.subtract),
        "__mul__": _ufuncs.multiply,
        "__rmul__": _swap(_ufuncs.multiply),
        "__truediv__": _ufuncs.true_divide,
        "__rtruediv__": _swap(_ufuncs.true_divide),
        "__floordiv__": _ufuncs.floor_divide,
        "__rfloordiv__": _swap(_ufuncs.floor_divide),
        "__mod__": _ufuncs.remainder,
        "__rmod__": _swap(_ufuncs.remainder),
        "__divmod__": _ufuncs.divmod,
        "__rdivmod__": _swap(_ufuncs.divmod),
        "__pow__": _ufuncs.power,
        "__rpow__": _swap(_ufuncs.power),
        "__matmul__": _linalg.matmul,
        "__rmatmul__": _swap(_linalg.matmul),
        "__and__": _ufuncs.bitwise_and,
        "__rand__": _swap(_ufuncs.bitwise_and),
        "__or__": _ufuncs.bitwise_or,
        "__ror__": _swap(_ufuncs.bitwise_or),
        "__xor__": _ufuncs.bitwise_xor,
        "__rxor__": _swap(_ufuncs.bitwise_xor),
        "__lshift__": _ufuncs.DECLARED["left_shift"],
        "__rlshift__": _swap(_ufuncs.DECLARED["left_shift"]),
        "__rshift__": _ufuncs.DECLARED["right_shift"],
        "__rrshift__": _swap(_ufuncs.DECLARED["right_shift"]),
        "__lt__": _ufuncs.less,
        "__le__": _ufuncs.less_equal,
        "__gt__": _ufuncs.greater,
        "__ge__": _ufuncs.greater_equal,
        "__eq__": _ufuncs.equal,
        "__ne__": _ufuncs.not_equal,
        "__neg__": _ufuncs.negative,
        "__pos__": _ufuncs.DECLARED["positive"],
        "__abs__": _ufuncs.abs,
        "__invert__": _ufuncs.invert,
        "__getitem__": _indexing.getitem,
    }
    for name, f in ops.items():
        unary = name in ("__neg__", "__pos__", "__abs__", "__invert__", "__getitem__")
        setattr(Tracer, name, f if unary else _defer(f, name))
    Tracer.__hash__ = object.__hash__  # type: ignore[assignment]

    def reshape(self: Any, *shape: Any, order: str = "C") -> Any:
        return _shape.reshape(self, _shape_args(shape), order=order)

    def transpose(self: Any, *axes: Any) -> Any:
        return _shape.transpose(self, _shape_args(axes) or None)

    def astype(self: Any, dtype: Any, copy: bool = False) -> Any:
        return _creation.asarray(self, dtype)

    def sort(self: Any, axis: int | None = -1, **kw: Any) -> Any:
        return _sorting.sort(self, axis, **kw)

    def argsort(self: Any, axis: int | None = -1, **kw: Any) -> Any:
        return _sorting.argsort(self, axis, **kw)

    def nonzero(self: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
        return _setops.nonzero(self, size=size, fill_value=fill_value)

    def round_(self: Any, ndigits: int | None = None) -> Any:
        # Python's round(): an integer array without ndigits (as jax.Array's), else
        # rounded to ndigits decimals in the array's dtype
        if ndigits is None:
            return _creation.asarray(_ufuncs.round(self), int)
        return _ufuncs.round(self, ndigits)

    def searchsorted(self: Any, v: Any, side: str = "left", sorter: Any = None, **kw: Any):
        return _setops.searchsorted(self, v, side=side, sorter=sorter, **kw)

    def tobytes(self: Any, order: str = "C") -> bytes:
        v = self._value("The tobytes() method was called on traced array: tobytes()")
        return np.asarray(v).tobytes(order)

    def tolist(self: Any) -> Any:
        v = self._value("The tolist() method was called on traced array: tolist()")
        return np.asarray(v).tolist()

    def copy_(self: Any, *args: Any) -> Any:
        # values are immutable: a copy of a traced value is the value (``copy.copy``,
        # ``copy.deepcopy`` and ``x.copy()`` inside a transform, as JAX's tracers)
        return self

    methods = {
        "__copy__": copy_,
        "__deepcopy__": copy_,
        "copy": copy_,
        "view": _bitviews.view,
        "byteswap": _bitviews.byteswap,
        "tobytes": tobytes,
        "tolist": tolist,
        "reshape": reshape,
        "transpose": transpose,
        "astype": astype,
        **_reductions.METHODS,  # (the reduction rows: sum, mean, var, argmax, cumsum, ...)
        **array_methods(),  # (the array rows declaring one: trace)
        "ptp": _reductions.ptp,
        "squeeze": _shape.squeeze,
        "ravel": _shape.ravel,
        "flatten": _shape.ravel,
        "clip": _ufuncs.clip,
        "dot": _linalg.dot,
        "round": _ufuncs.round,
        "swapaxes": _shape.swapaxes,
        "take": _indexing.take,
        "repeat": _shape.repeat,
        "diagonal": _shape.diagonal,
        "conj": _ufuncs.conjugate,
        "conjugate": _ufuncs.conjugate,
        "sort": sort,
        "argsort": argsort,
        "nonzero": nonzero,
        "__round__": round_,
        "searchsorted": searchsorted,
    }
    for name, f in methods.items():
        setattr(Tracer, name, f)
    props = {
        "T": lambda self: _shape.transpose(self),
        "mT": lambda self: _shape.matrix_transpose(self),
        "at": lambda self: _at.at(self),
        "real": lambda self: _ufuncs.real(self),
        "imag": lambda self: _ufuncs.imag(self),
        "nbytes": lambda self: self.size * self.dtype.itemsize,
        "itemsize": lambda self: self.dtype.itemsize,
    }
    for name, f in props.items():
        setattr(Tracer, name, property(f))
