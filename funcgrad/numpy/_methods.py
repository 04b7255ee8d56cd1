"""Operators and array methods of tracers, so traced code reads like NumPy code."""

from __future__ import annotations

from typing import Any

from funcgrad.core.interp import Tracer


def _swap(f: Any) -> Any:
    return lambda self, other: f(other, self)


def install() -> None:
    from funcgrad import numpy as fnp
    from funcgrad.numpy import _indexing, _linalg

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
        "__pow__": fnp.power,
        "__rpow__": _swap(fnp.power),
        "__matmul__": _linalg.matmul,
        "__rmatmul__": _swap(_linalg.matmul),
        "__and__": fnp.bitwise_and,
        "__rand__": _swap(fnp.bitwise_and),
        "__or__": fnp.bitwise_or,
        "__ror__": _swap(fnp.bitwise_or),
        "__xor__": fnp.bitwise_xor,
        "__rxor__": _swap(fnp.bitwise_xor),
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
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return fnp.reshape(self, shape, order=order)

    def transpose(self: Any, *axes: Any) -> Any:
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return fnp.transpose(self, axes or None)

    methods = {
        "reshape": reshape,
        "transpose": transpose,
        "sum": fnp.sum,
        "mean": fnp.mean,
        "var": fnp.var,
        "std": fnp.std,
        "max": fnp.max,
        "min": fnp.min,
        "prod": fnp.prod,
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
        "conj": fnp.conjugate,
        "repeat": fnp.repeat,
        "astype": lambda self, dtype: fnp.asarray(self, dtype),
    }
    for name, f in methods.items():
        setattr(Tracer, name, f)
    Tracer.T = property(lambda self: fnp.transpose(self))  # type: ignore[attr-defined]
    Tracer.mT = property(lambda self: fnp.swapaxes(self, -1, -2))  # type: ignore[attr-defined]
    Tracer.at = property(lambda self: _indexing.at(self))  # type: ignore[attr-defined]
    Tracer.real = property(lambda self: fnp.real(self))  # type: ignore[attr-defined]
