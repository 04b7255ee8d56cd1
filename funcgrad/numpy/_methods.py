"""Operators and array methods of tracers, so traced code reads like NumPy code.

Outside transforms, values are ``jax.Array``s with JAX's own methods; inside,
:class:`~funcgrad.core.interp.Tracer` gets the same names from here, each a thin
call into ``funcgrad.numpy``.
"""

from __future__ import annotations

from typing import Any

from funcgrad.core.interp import Tracer


def _swap(f: Any) -> Any:
    def g(self: Any, other: Any) -> Any:
        return f(other, self)

    return g


def _shape_args(args: tuple) -> Any:
    """``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` alike."""
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0]) if args[0] is not None else None
    return args


def install() -> None:
    """Install the operators and methods on :class:`Tracer`."""
    from funcgrad import numpy as fnp
    from funcgrad.numpy import _indexing

    ops = {
        "__add__": fnp.add,
        "__radd__": _swap(fnp.add),
        "__sub__": fnp.subtract,
        "__rsub__": _swap(fnp.subtract),
        "__mul__": fnp.multiply,
        "__rmul__": _swap(fnp.multiply),
        "__truediv__": fnp.true_divide,
        "__rtruediv__": _swap(fnp.true_divide),
        "__floordiv__": fnp.floor_divide,
        "__rfloordiv__": _swap(fnp.floor_divide),
        "__mod__": fnp.remainder,
        "__rmod__": _swap(fnp.remainder),
        "__divmod__": fnp.divmod,
        "__rdivmod__": _swap(fnp.divmod),
        "__pow__": fnp.power,
        "__rpow__": _swap(fnp.power),
        "__matmul__": fnp.matmul,
        "__rmatmul__": _swap(fnp.matmul),
        "__and__": fnp.bitwise_and,
        "__rand__": _swap(fnp.bitwise_and),
        "__or__": fnp.bitwise_or,
        "__ror__": _swap(fnp.bitwise_or),
        "__xor__": fnp.bitwise_xor,
        "__rxor__": _swap(fnp.bitwise_xor),
        "__lshift__": fnp.left_shift,
        "__rlshift__": _swap(fnp.left_shift),
        "__rshift__": fnp.right_shift,
        "__rrshift__": _swap(fnp.right_shift),
        "__lt__": fnp.less,
        "__le__": fnp.less_equal,
        "__gt__": fnp.greater,
        "__ge__": fnp.greater_equal,
        "__eq__": fnp.equal,
        "__ne__": fnp.not_equal,
        "__neg__": fnp.negative,
        "__pos__": fnp.positive,
        "__abs__": fnp.abs,
        "__invert__": fnp.invert,
        "__getitem__": _indexing.getitem,
    }
    for name, f in ops.items():
        setattr(Tracer, name, f)
    Tracer.__hash__ = object.__hash__  # type: ignore[assignment]

    def reshape(self: Any, *shape: Any, order: str = "C") -> Any:
        return fnp.reshape(self, _shape_args(shape), order=order)

    def transpose(self: Any, *axes: Any) -> Any:
        return fnp.transpose(self, _shape_args(axes) or None)

    def astype(self: Any, dtype: Any, copy: bool = False) -> Any:
        return fnp.asarray(self, dtype)

    def sort(self: Any, axis: int | None = -1, **kw: Any) -> Any:
        return fnp.sort(self, axis, **kw)

    def argsort(self: Any, axis: int | None = -1, **kw: Any) -> Any:
        return fnp.argsort(self, axis, **kw)

    def nonzero(self: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
        return fnp.nonzero(self, size=size, fill_value=fill_value)

    methods = {
        "reshape": reshape,
        "transpose": transpose,
        "astype": astype,
        "sum": fnp.sum,
        "prod": fnp.prod,
        "mean": fnp.mean,
        "var": fnp.var,
        "std": fnp.std,
        "max": fnp.max,
        "min": fnp.min,
        "ptp": fnp.ptp,
        "any": fnp.any,
        "all": fnp.all,
        "argmax": fnp.argmax,
        "argmin": fnp.argmin,
        "cumsum": fnp.cumsum,
        "cumprod": fnp.cumprod,
        "squeeze": fnp.squeeze,
        "ravel": fnp.ravel,
        "flatten": fnp.ravel,
        "clip": fnp.clip,
        "dot": fnp.dot,
        "round": fnp.round,
        "swapaxes": fnp.swapaxes,
        "take": fnp.take,
        "repeat": fnp.repeat,
        "diagonal": fnp.diagonal,
        "trace": fnp.trace,
        "conj": fnp.conjugate,
        "conjugate": fnp.conjugate,
        "sort": sort,
        "argsort": argsort,
        "nonzero": nonzero,
    }
    for name, f in methods.items():
        setattr(Tracer, name, f)
    props = {
        "T": lambda self: fnp.transpose(self),
        "mT": lambda self: fnp.matrix_transpose(self),
        "at": lambda self: _indexing.at(self),
        "real": lambda self: fnp.real(self),
        "imag": lambda self: fnp.imag(self),
        "nbytes": lambda self: self.size * self.dtype.itemsize,
        "itemsize": lambda self: self.dtype.itemsize,
    }
    for name, f in props.items():
        setattr(Tracer, name, property(f))
