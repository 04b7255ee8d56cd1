"""Binary torch ops: arithmetic with PyTorch's type promotion, comparisons, logical and
bitwise ops."""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad as fg
from compat._core import dtypes as _dt
from compat._core.ops._common import _c, coerce
from compat._core.ops.unary import trunc
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp


def _add_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) + _c(y, dtype)


def _add_alpha_f(x: Any, y: Any, a: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) + _c(y, dtype) * _c(a, dtype)


def _sub_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) - _c(y, dtype)


def _sub_alpha_f(x: Any, y: Any, a: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) - _c(y, dtype) * _c(a, dtype)


def _mul_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) * _c(y, dtype)


def _div_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) / _c(y, dtype)


def _floordiv_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.floor_divide(_c(x, dtype), _c(y, dtype))


def _rem_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.remainder(_c(x, dtype), _c(y, dtype))


def _maximum_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.maximum(_c(x, dtype), _c(y, dtype))


def _minimum_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.minimum(_c(x, dtype), _c(y, dtype))


def _atan2_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.arctan2(_c(x, dtype), _c(y, dtype))


def _torch_power(x: Any, y: Any) -> Any:
    """``x ** y`` with PyTorch's derivative convention: no gradient to ``x`` where
    ``y == 0`` (funcgrad, like JAX, gives ``0 * x**-1``, NaN at ``x == 0``). The base
    seen by ``power`` is ``x`` with its gradient stopped there, and the select drops
    the NaN instead of multiplying it by 0."""
    base = fnp.where(fnp.equal(y, 0), fg.stop_gradient(x), x)
    return fnp.power(base, y)


def _pow_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    x, y = _c(x, dtype), _c(y, dtype)
    if dtype.kind in "iub":
        return fnp.power(x, y) if not isinstance(y, int) else x**y
    return _torch_power(x, y)


def _ipow_f(x: Any, *, n: int, dtype: np.dtype) -> Any:
    return fnp.power(_c(x, dtype), n)


_CMP = {
    "eq": fnp.equal,
    "ne": fnp.not_equal,
    "lt": fnp.less,
    "le": fnp.less_equal,
    "gt": fnp.greater,
    "ge": fnp.greater_equal,
}


def _cmp_f(x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    return _CMP[op](_c(x, dtype), _c(y, dtype))


def _logical_f(x: Any, y: Any, *, op: str) -> Any:
    f = {"and": fnp.logical_and, "or": fnp.logical_or, "xor": fnp.logical_xor}[op]
    return f(x, y)


def _bitwise_f(x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    f = {"and": fnp.bitwise_and, "or": fnp.bitwise_or, "xor": fnp.bitwise_xor}[op]
    return f(_c(x, dtype), _c(y, dtype))


_BIN_NAMES = {
    _add_f: "AddBackward0",
    _sub_f: "SubBackward0",
    _mul_f: "MulBackward0",
    _div_f: "DivBackward0",
    _floordiv_f: "FloorDivideBackward0",
    _rem_f: "RemainderBackward0",
    _maximum_f: "MaximumBackward0",
    _minimum_f: "MinimumBackward0",
    _atan2_f: "Atan2Backward0",
}


def _fast_dtype(a: Any, b: Any) -> np.dtype | None:
    """The promoted dtype for the common cases (same dtypes; float tensor with a Python
    number), without the general rule."""
    if isinstance(a, Tensor):
        da = a._st.array.dtype
        tb = type(b)
        if tb is float or tb is int:
            return da if da.kind == "f" or (tb is int and da.kind in "iu") else None
        if isinstance(b, Tensor):
            return da if b._st.array.dtype == da else None
    elif isinstance(b, Tensor):
        return _fast_dtype(b, a)
    return None


def _binary(fn: Any, a: Any, b: Any, *, true_div: bool = False) -> Tensor:
    dt = _fast_dtype(a, b)
    if dt is None:
        a, b = coerce(a), coerce(b)
        dt = _dt.result_type(a, b)
    if true_div and dt.kind not in "fc":
        dt = _dt.float_type(dt)
    return apply(fn, _BIN_NAMES.get(fn, fn.__name__), (a, b), (("dtype", dt),))


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha == 1:
        return _binary(_add_f, input, other)
    a, b = coerce(input), coerce(other)
    dt = _dt.result_type(a, b)
    return apply(_add_alpha_f, "AddBackward0", (a, b, alpha), (("dtype", dt),))


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if alpha == 1:
        return _binary(_sub_f, input, other)
    a, b = coerce(input), coerce(other)
    dt = _dt.result_type(a, b)
    return apply(_sub_alpha_f, "SubBackward0", (a, b, alpha), (("dtype", dt),))


def mul(input: Any, other: Any) -> Tensor:
    return _binary(_mul_f, input, other)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is None:
        return _binary(_div_f, input, other, true_div=True)
    if rounding_mode == "floor":
        return _binary(_floordiv_f, input, other)
    q = _binary(_div_f, input, other, true_div=True)
    r = trunc(q)
    dt = _dt.result_type(coerce(input), coerce(other))
    return r if dt.kind == "f" else r.to(_dt.from_np(dt))


def pow(input: Any, exponent: Any) -> Tensor:
    input, exponent = coerce(input), coerce(exponent)
    if (
        isinstance(input, Tensor)
        and isinstance(exponent, int)
        and not isinstance(exponent, bool)
        and (exponent >= 0 or input._npdtype.kind in "fc")
    ):
        dt = _dt.result_type(input, exponent)
        return apply(_ipow_f, "PowBackward0", (input,), (("n", exponent), ("dtype", dt)))
    dt = _dt.result_type(input, exponent)
    name = "PowBackward1" if isinstance(exponent, Tensor) else "PowBackward0"
    return apply(_pow_f, name, (input, exponent), (("dtype", dt),))


def _compare(op: str, a: Any, b: Any) -> Tensor:
    a, b = coerce(a), coerce(b)
    dt = _dt.result_type(a, b)
    return apply(_cmp_f, op, (a, b), (("op", op), ("dtype", dt)))


def eq(input: Any, other: Any) -> Tensor:
    return _compare("eq", input, other)


def ne(input: Any, other: Any) -> Tensor:
    return _compare("ne", input, other)


def lt(input: Any, other: Any) -> Tensor:
    return _compare("lt", input, other)


def le(input: Any, other: Any) -> Tensor:
    return _compare("le", input, other)


def gt(input: Any, other: Any) -> Tensor:
    return _compare("gt", input, other)


def ge(input: Any, other: Any) -> Tensor:
    return _compare("ge", input, other)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return _binary(_maximum_f, input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    return _binary(_minimum_f, input, other)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    return _binary(_atan2_f, input, other, true_div=True)


def remainder(input: Any, other: Any) -> Tensor:
    return _binary(_rem_f, input, other)


def floor_divide(input: Any, other: Any) -> Tensor:
    return _binary(_floordiv_f, input, other)


def logical_and(input: Tensor, other: Tensor) -> Tensor:
    return apply(_logical_f, "logical_and", (coerce(input), coerce(other)), (("op", "and"),))


def logical_or(input: Tensor, other: Tensor) -> Tensor:
    return apply(_logical_f, "logical_or", (coerce(input), coerce(other)), (("op", "or"),))


def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    return apply(_logical_f, "logical_xor", (coerce(input), coerce(other)), (("op", "xor"),))


def _bitwise(op: str, a: Any, b: Any) -> Tensor:
    a, b = coerce(a), coerce(b)
    dt = _dt.result_type(a, b)
    if dt.kind == "f":
        raise TypeError(f"bitwise_{op} is not implemented for floating-point tensors")
    return apply(_bitwise_f, f"bitwise_{op}", (a, b), (("op", op), ("dtype", dt)))
