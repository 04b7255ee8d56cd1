"""Torch ops: elementwise math, reductions and linear algebra.

Each op is a pure function of arrays written with ``funcgrad.numpy`` /
``funcgrad.nn`` and applied by :func:`~compat._core.tensor.apply`, so its
gradient is funcgrad's VJP of it. Ops are written so that the VJP follows
PyTorch's subgradient conventions:

* ``relu``/``abs`` at 0 → 0 (``where(x > 0, x, 0)``; ``sign(0) = 0``);
* ``clamp`` at a bound → 1, ``clamp(min > max)`` → 0 (a mask ``lo <= x <= hi``);
* ``x ** 0.`` at 0 → 0 and the exponent's gradient at a zero base → 0 (funcgrad's
  ``pow`` rule);
* ``max(dim)``/``min(dim)`` ties → the whole gradient to the first index (``argmax``
  then ``take_along_axis``); full ``max``/``min``/``amax`` ties → split evenly
  (funcgrad's ``reduce_max`` rule), binary ``maximum`` ties → halves.

Type promotion follows PyTorch (:func:`compat._core.dtypes.result_type`), computed
in Python and passed to each op as a static ``dtype``.
"""

from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

import numpy as np

import funcgrad as fg
from compat._core import dtypes as _dt
from compat._core.tensor import Tensor, _wrap_dim, apply, apply_inplace
from funcgrad import nn as fnn
from funcgrad import numpy as fnp

_NUM = (bool, int, float, complex)


def _c(x: Any, dt: np.dtype) -> Any:
    return fnp.asarray(x, dt)


def coerce(x: Any) -> Any:
    """Tensors and Python numbers pass; NumPy values become tensors."""
    if isinstance(x, Tensor) or type(x) in _NUM:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        from compat._core.creation import tensor

        return tensor(x)
    if isinstance(x, _NUM):
        return type(x).__mro__[-2](x) if not isinstance(x, bool) else bool(x)
    raise TypeError(f"unsupported operand type {type(x).__name__} for a tensor op")


def _dtype_of(x: Any) -> np.dtype:
    return x._npdtype if isinstance(x, Tensor) else _dt.result_type(x)


# --------------------------------------------------------------------------- binary


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


# --------------------------------------------------------------------------- unary

_UNARY = {
    "exp": (fnp.exp, "ExpBackward0", "result"),
    "log": (fnp.log, "LogBackward0", None),
    "log2": (fnp.log2, "Log2Backward0", None),
    "log10": (fnp.log10, "Log10Backward0", None),
    "log1p": (fnp.log1p, "Log1PBackward0", None),
    "expm1": (fnp.expm1, "Expm1Backward0", "result"),
    "sin": (fnp.sin, "SinBackward0", None),
    "cos": (fnp.cos, "CosBackward0", None),
    "tan": (fnp.tan, "TanBackward0", "result"),
    "asin": (fnp.arcsin, "AsinBackward0", None),
    "acos": (fnp.arccos, "AcosBackward0", None),
    "atan": (fnp.arctan, "AtanBackward0", None),
    "sinh": (fnp.sinh, "SinhBackward0", None),
    "cosh": (fnp.cosh, "CoshBackward0", None),
    "tanh": (fnp.tanh, "TanhBackward0", "result"),
    "sigmoid": (fnn.sigmoid, "SigmoidBackward0", "result"),
    "sqrt": (fnp.sqrt, "SqrtBackward0", "result"),
    "rsqrt": (lambda x: 1.0 / fnp.sqrt(x), "RsqrtBackward0", "result"),
    "erf": (None, "ErfBackward0", None),
    "reciprocal": (lambda x: 1.0 / x, "ReciprocalBackward0", "result"),
}


def _unary_float_f(x: Any, *, op: str, dtype: np.dtype) -> Any:
    f = _UNARY[op][0]
    if f is None:
        from funcgrad.primitives.elementwise import erf

        return erf(_c(x, dtype))
    return f(_c(x, dtype))


def _unary_float(op: str) -> Any:
    _, name, saves = _UNARY[op]

    def f(input: Tensor) -> Tensor:
        dt = _dt.float_type(input._npdtype)
        return apply(_unary_float_f, name, (input,), (("op", op), ("dtype", dt)), saves)

    f.__name__ = op
    f.__doc__ = f"Elementwise ``{op}`` (integer inputs give the default float dtype)."
    return f


for _op in _UNARY:
    globals()[_op] = _unary_float(_op)

exp = globals()["exp"]
log = globals()["log"]
sin = globals()["sin"]
cos = globals()["cos"]
tanh = globals()["tanh"]
sigmoid = globals()["sigmoid"]
sqrt = globals()["sqrt"]
rsqrt = globals()["rsqrt"]
reciprocal = globals()["reciprocal"]


def _neg_f(x: Any) -> Any:
    return -x


def _abs_f(x: Any) -> Any:
    return fnp.abs(x)


def _sign_f(x: Any) -> Any:
    return fnp.sign(x)


def _relu_f(x: Any) -> Any:
    return fnp.where(x > 0, x, fnp.zeros_like(x))


def _square_f(x: Any) -> Any:
    return x * x


def _round_f(x: Any, *, op: str) -> Any:
    return {"floor": fnp.floor, "ceil": fnp.ceil, "round": fnp.round, "trunc": fnp.trunc}[op](x)


def neg(input: Tensor) -> Tensor:
    if input._npdtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return apply(_neg_f, "NegBackward0", (input,))


negative = neg


def abs(input: Tensor) -> Tensor:
    return apply(_abs_f, "AbsBackward0", (input,))


absolute = abs


def sign(input: Tensor) -> Tensor:
    return apply(_sign_f, "SignBackward0", (input,))


def relu(input: Tensor) -> Tensor:
    return apply(_relu_f, "ReluBackward0", (input,), saves="result")


def square(input: Tensor) -> Tensor:
    return pow(input, 2)


def floor(input: Tensor) -> Tensor:
    return apply(_round_f, "FloorBackward0", (input,), (("op", "floor"),))


def ceil(input: Tensor) -> Tensor:
    return apply(_round_f, "CeilBackward0", (input,), (("op", "ceil"),))


def round(input: Tensor, decimals: int = 0) -> Tensor:
    if decimals:
        scale = 10.0**decimals
        return round(input * scale) / scale
    return apply(_round_f, "RoundBackward0", (input,), (("op", "round"),))


def trunc(input: Tensor) -> Tensor:
    return apply(_round_f, "TruncBackward0", (input,), (("op", "trunc"),))


def _logical_not_f(x: Any) -> Any:
    return fnp.logical_not(x)


def logical_not(input: Tensor) -> Tensor:
    return apply(_logical_not_f, "logical_not", (input,))


def _invert_f(x: Any) -> Any:
    return fnp.invert(x)


def bitwise_not(input: Tensor) -> Tensor:
    if input._npdtype.kind == "f":
        raise TypeError("bitwise_not is not implemented for floating-point tensors")
    return apply(_invert_f, "bitwise_not", (input,))


def _isx_f(x: Any, *, op: str) -> Any:
    return {"isnan": fnp.isnan, "isinf": fnp.isinf, "isfinite": fnp.isfinite}[op](x)


def isnan(input: Tensor) -> Tensor:
    return apply(_isx_f, "isnan", (input,), (("op", "isnan"),))


def isinf(input: Tensor) -> Tensor:
    return apply(_isx_f, "isinf", (input,), (("op", "isinf"),))


def isfinite(input: Tensor) -> Tensor:
    return apply(_isx_f, "isfinite", (input,), (("op", "isfinite"),))


def _clamp_f(x: Any, lo: Any, hi: Any, *, has_lo: bool, has_hi: bool, dtype: np.dtype) -> Any:
    # value min(max(x, lo), hi); gradient 1 for lo <= x <= hi (bounds included), else to
    # the bound that was selected (none when lo > hi, as in PyTorch)
    y = _c(x, dtype)
    if has_lo:
        lo = _c(lo, dtype)
        y = fnp.where(y < lo, lo, y)
    if has_hi:
        hi = _c(hi, dtype)
        y = fnp.where(y > hi, hi, y)
    return y


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo = coerce(min) if min is not None else 0
    hi = coerce(max) if max is not None else 0
    dt = _dt.result_type(input, *(v for v in (min, max) if v is not None))
    name = (
        "ClampBackward1"
        if not isinstance(lo, Tensor) and not isinstance(hi, Tensor)
        else "ClampBackward0"
    )
    return apply(
        _clamp_f,
        name,
        (input, lo, hi),
        (("has_lo", min is not None), ("has_hi", max is not None), ("dtype", dt)),
    )


clip = clamp


def clamp_min(input: Tensor, min: Any) -> Tensor:
    return clamp(input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    return clamp(input, max=max)


def _where_f(c: Any, x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.where(c, _c(x, dtype), _c(y, dtype))


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    input, other = coerce(input), coerce(other)
    dt = _dt.result_type(input, other)
    if condition._npdtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor "
            f"with dtype {condition.dtype}"
        )
    return apply(_where_f, "WhereBackward0", (condition, input, other), (("dtype", dt),))


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    from compat._core.creation import tensor

    idx = np.nonzero(np.asarray(input._st.array))
    if as_tuple:
        return tuple(tensor(i.astype(np.int64)) for i in idx)
    return tensor(np.stack(idx, axis=-1).astype(np.int64))


def _lerp_f(x: Any, y: Any, w: Any, *, dtype: np.dtype) -> Any:
    x, y, w = _c(x, dtype), _c(y, dtype), _c(w, dtype)
    return x + w * (y - x)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    dt = _dt.result_type(input, end)
    return apply(_lerp_f, "LerpBackward0", (input, coerce(end), coerce(weight)), (("dtype", dt),))


def _addcmul_f(x: Any, a: Any, b: Any, v: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) + _c(v, dtype) * _c(a, dtype) * _c(b, dtype)


def _addcdiv_f(x: Any, a: Any, b: Any, v: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) + _c(v, dtype) * (_c(a, dtype) / _c(b, dtype))


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    dt = _dt.result_type(input, tensor1, tensor2)
    return apply(_addcmul_f, "AddcmulBackward0", (input, tensor1, tensor2, value), (("dtype", dt),))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    dt = _dt.result_type(input, tensor1, tensor2)
    return apply(_addcdiv_f, "AddcdivBackward0", (input, tensor1, tensor2, value), (("dtype", dt),))


# --------------------------------------------------------------------------- reductions

_ValuesIndices = namedtuple("_ValuesIndices", ["values", "indices"])


def _dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        return tuple(sorted({_wrap_dim(d, ndim) for d in dim}))
    return (_wrap_dim(dim, ndim),)


def _sum_f(x: Any, *, axes: Any, keepdims: bool, dtype: np.dtype) -> Any:
    return fnp.sum(_c(x, dtype), axis=axes, keepdims=keepdims)


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    axes = _dims(dim, input.ndim)
    if dtype is not None:
        dt = _dt.np_dtype(dtype)
    elif input._npdtype.kind in "biu":
        dt = np.dtype(np.int64)
    else:
        dt = input._npdtype
    return apply(
        _sum_f,
        "SumBackward1" if axes else "SumBackward0",
        (input,),
        (("axes", axes), ("keepdims", bool(keepdim)), ("dtype", dt)),
    )


def _mean_f(x: Any, *, axes: Any, keepdims: bool, dtype: np.dtype) -> Any:
    return fnp.mean(_c(x, dtype), axis=axes, keepdims=keepdims)


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    dt = _dt.np_dtype(dtype) if dtype is not None else input._npdtype
    if dt.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_dt.from_np(dt).name.capitalize()}"
        )
    axes = _dims(dim, input.ndim)
    return apply(
        _mean_f,
        "MeanBackward1" if axes else "MeanBackward0",
        (input,),
        (("axes", axes), ("keepdims", bool(keepdim)), ("dtype", dt)),
    )


def _prod_f(x: Any, *, axes: Any, keepdims: bool, dtype: np.dtype) -> Any:
    return fnp.prod(_c(x, dtype), axis=axes, keepdims=keepdims)


def prod(
    input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    if dtype is not None:
        dt = _dt.np_dtype(dtype)
    elif input._npdtype.kind in "biu":
        dt = np.dtype(np.int64)
    else:
        dt = input._npdtype
    axes = _dims(dim, input.ndim)
    return apply(
        _prod_f,
        "ProdBackward1" if axes else "ProdBackward0",
        (input,),
        (("axes", axes), ("keepdims", bool(keepdim)), ("dtype", dt)),
    )


def _amax_f(x: Any, *, axes: Any, keepdims: bool, op: str) -> Any:
    f = fnp.max if op == "max" else fnp.min
    return f(x, axis=axes, keepdims=keepdims)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    axes = _dims(dim, input.ndim)
    return apply(
        _amax_f,
        "AmaxBackward0",
        (input,),
        (("axes", axes), ("keepdims", bool(keepdim)), ("op", "max")),
    )


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    axes = _dims(dim, input.ndim)
    return apply(
        _amax_f,
        "AminBackward0",
        (input,),
        (("axes", axes), ("keepdims", bool(keepdim)), ("op", "min")),
    )


def _max_dim_f(x: Any, *, axis: int, keepdims: bool, op: str) -> Any:
    # ties: the first index gets the whole gradient (argmax + take_along_axis)
    idx = fnp.argmax(x, axis=axis) if op == "max" else fnp.argmin(x, axis=axis)
    idx = fnp.expand_dims(idx, axis)
    vals = fnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        vals = fnp.squeeze(vals, axis=axis)
        idx = fnp.squeeze(idx, axis=axis)
    return vals, fnp.asarray(idx, np.int64)


def _extremum(op: str, input: Tensor, dim: Any, keepdim: bool, other: Any) -> Any:
    if isinstance(dim, Tensor):
        return maximum(input, dim) if op == "max" else minimum(input, dim)
    if other is not None:
        return maximum(input, other) if op == "max" else minimum(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        name = "MaxBackward1" if op == "max" else "MinBackward1"
        return apply(_amax_f, name, (input,), (("axes", None), ("keepdims", False), ("op", op)))
    axis = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return _ValuesIndices(input * 1, zeros_like_int(input))
    name = "MaxBackward0" if op == "max" else "MinBackward0"
    vals, idx = apply(
        _max_dim_f, name, (input,), (("axis", axis), ("keepdims", bool(keepdim)), ("op", op))
    )
    return _ValuesIndices(vals, idx)


def zeros_like_int(t: Tensor) -> Tensor:
    from compat._core.creation import zeros

    return zeros(*t.shape, dtype=_dt.int64)


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    return _extremum("max", input, dim, keepdim, other)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    return _extremum("min", input, dim, keepdim, other)


def _arg_f(x: Any, *, axis: Any, keepdims: bool, op: str) -> Any:
    f = fnp.argmax if op == "max" else fnp.argmin
    if axis is None:
        return fnp.asarray(f(fnp.ravel(x)), np.int64)
    return fnp.asarray(f(x, axis=axis, keepdims=keepdims), np.int64)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    axis = None if dim is None else _wrap_dim(dim, input.ndim)
    return apply(
        _arg_f,
        "argmax",
        (input,),
        (("axis", axis), ("keepdims", bool(keepdim) and axis is not None), ("op", "max")),
    )


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    axis = None if dim is None else _wrap_dim(dim, input.ndim)
    return apply(
        _arg_f,
        "argmin",
        (input,),
        (("axis", axis), ("keepdims", bool(keepdim) and axis is not None), ("op", "min")),
    )


def _var_f(x: Any, *, axes: Any, keepdims: bool, correction: float, std: bool) -> Any:
    m = fnp.mean(x, axis=axes, keepdims=True)
    d = x - m
    n = builtins.int(np.prod([x.shape[a] for a in (axes if axes is not None else range(x.ndim))]))
    v = fnp.sum(d * d, axis=axes, keepdims=keepdims) / builtins.max(n - correction, 0)
    return fnp.sqrt(v) if std else v


def _var_args(dim: Any, unbiased: Any, correction: Any) -> tuple[Any, float]:
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, float(correction)


def _var_std(input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any, std: bool):
    dim, corr = _var_args(dim, unbiased, correction)
    static = (
        ("axes", _dims(dim, input.ndim)),
        ("keepdims", bool(keepdim)),
        ("correction", corr),
        ("std", std),
    )
    return apply(_var_f, "StdBackward0" if std else "VarBackward0", (input,), static)


def var(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> Tensor:
    return _var_std(input, dim, unbiased, keepdim, correction, std=False)


def std(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> Tensor:
    return _var_std(input, dim, unbiased, keepdim, correction, std=True)


def _anyall_f(x: Any, *, axes: Any, keepdims: bool, op: str) -> Any:
    return (fnp.any if op == "any" else fnp.all)(x, axis=axes, keepdims=keepdims)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return apply(
        _anyall_f,
        "any",
        (input,),
        (("axes", _dims(dim, input.ndim)), ("keepdims", bool(keepdim)), ("op", "any")),
    )


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    return apply(
        _anyall_f,
        "all",
        (input,),
        (("axes", _dims(dim, input.ndim)), ("keepdims", bool(keepdim)), ("op", "all")),
    )


def _logsumexp_f(x: Any, *, axes: Any, keepdims: bool) -> Any:
    return fnn.logsumexp(x, axis=axes, keepdims=keepdims)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    x = input if input._npdtype.kind == "f" else input.to(_dt.get_default_dtype())
    return apply(
        _logsumexp_f,
        "LogsumexpBackward0",
        (x,),
        (("axes", _dims(dim, input.ndim)), ("keepdims", bool(keepdim))),
    )


def _softmax_f(x: Any, *, axis: int, log: bool, dtype: np.dtype) -> Any:
    x = _c(x, dtype)
    return fnn.log_softmax(x, axis=axis) if log else fnn.softmax(x, axis=axis)


def softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    dt = _dt.np_dtype(dtype) if dtype is not None else _dt.float_type(input._npdtype)
    axis = _wrap_dim(dim if dim is not None else -1, input.ndim)
    return apply(
        _softmax_f,
        "SoftmaxBackward0",
        (input,),
        (("axis", axis), ("log", False), ("dtype", dt)),
        saves="result",
    )


def log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    dt = _dt.np_dtype(dtype) if dtype is not None else _dt.float_type(input._npdtype)
    axis = _wrap_dim(dim if dim is not None else -1, input.ndim)
    return apply(
        _softmax_f,
        "LogSoftmaxBackward0",
        (input,),
        (("axis", axis), ("log", True), ("dtype", dt)),
        saves="result",
    )


def _cum_f(x: Any, *, axis: int, op: str, dtype: np.dtype) -> Any:
    return (fnp.cumsum if op == "sum" else fnp.cumprod)(_c(x, dtype), axis=axis)


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    dt = (
        _dt.np_dtype(dtype)
        if dtype is not None
        else (np.dtype(np.int64) if input._npdtype.kind in "biu" else input._npdtype)
    )
    return apply(
        _cum_f,
        "CumsumBackward0",
        (input,),
        (("axis", _wrap_dim(dim, input.ndim)), ("op", "sum"), ("dtype", dt)),
    )


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    dt = (
        _dt.np_dtype(dtype)
        if dtype is not None
        else (np.dtype(np.int64) if input._npdtype.kind in "biu" else input._npdtype)
    )
    return apply(
        _cum_f,
        "CumprodBackward0",
        (input,),
        (("axis", _wrap_dim(dim, input.ndim)), ("op", "prod"), ("dtype", dt)),
    )


def _norm_f(x: Any, *, p: float, axes: Any, keepdims: bool) -> Any:
    if p == 2:
        s = fnp.sum(x * x, axis=axes, keepdims=keepdims)
        return fnp.sqrt(s)
    if p == 1:
        return fnp.sum(fnp.abs(x), axis=axes, keepdims=keepdims)
    if p == float("inf"):
        return fnp.max(fnp.abs(x), axis=axes, keepdims=keepdims)
    return fnp.sum(fnp.abs(x) ** p, axis=axes, keepdims=keepdims) ** (1.0 / p)


def norm(
    input: Tensor,
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    dtype: Any = None,
) -> Tensor:
    pv = 2.0 if p in ("fro", None) else float(p)
    return apply(
        _norm_f,
        "NormBackward1",
        (input,),
        (("p", pv), ("axes", _dims(dim, input.ndim)), ("keepdims", bool(keepdim))),
    )


# --------------------------------------------------------------------------- linear algebra


def _matmul_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.matmul(_c(x, dtype), _c(y, dtype))


def matmul(input: Tensor, other: Tensor) -> Tensor:
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
            f"{other.ndim}D"
        )
    if input._npdtype != other._npdtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {input.dtype} != {other.dtype}"
        )
    nd = (input.ndim, other.ndim)
    name = {(1, 1): "DotBackward0", (2, 2): "MmBackward0", (2, 1): "MvBackward0"}.get(
        nd, "MatmulBackward0" if builtins.max(nd) < 3 else "BmmBackward0"
    )
    if input.shape[-1] != other.shape[0 if other.ndim == 1 else -2]:
        a, b = tuple(input.shape), tuple(other.shape)
        if nd == (2, 2):
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})"
            )
        raise RuntimeError(f"matmul: shapes {list(a)} and {list(b)} are not aligned")
    return apply(_matmul_f, name, (input, other), (("dtype", input._npdtype),))


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    return matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    return matmul(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


def _outer_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.outer(_c(x, dtype), _c(y, dtype))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    return apply(
        _outer_f, "OuterBackward0", (input, vec2), (("dtype", _dt.result_type(input, vec2)),)
    )


ger = outer


def _einsum_f(*xs: Any, eq: str) -> Any:
    return fnp.einsum(eq, *xs)


def einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return apply(_einsum_f, "EinsumBackward0", operands, (("eq", equation),))


def _linear_f(x: Any, w: Any, *b: Any) -> Any:
    y = fnp.matmul(x, fnp.transpose(w))
    return y + b[0] if b else y


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` as one op (one node in the graph)."""
    args = (input, weight) if bias is None else (input, weight, bias)
    return apply(_linear_f, "AddmmBackward0" if bias is not None else "MmBackward0", args)


# --------------------------------------------------------------------------- in-place


_SCALAR_TYPE = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def _inplace_dtype_check(self: Tensor, dt: np.dtype) -> None:
    if _dt.category(dt) > _dt.category(self._npdtype):
        raise RuntimeError(
            f"result type {_SCALAR_TYPE.get(dt.name, dt.name)} can't be cast to the desired "
            f"output type {_SCALAR_TYPE.get(self._npdtype.name, self._npdtype.name)}"
        )


def _ip_binary_f(x: Any, y: Any, *, op: str, dtype: np.dtype, out: np.dtype) -> Any:
    x, y = _c(x, dtype), _c(y, dtype)
    r = {
        "add": fnp.add,
        "sub": fnp.subtract,
        "mul": fnp.multiply,
        "div": fnp.true_divide,
        "pow": _torch_power if dtype.kind in "fc" else fnp.power,
        "maximum": fnp.maximum,
        "minimum": fnp.minimum,
    }[op](x, y)
    return _c(fnp.broadcast_to(r, r.shape), out)


def _ip_alpha_f(x: Any, y: Any, a: Any, *, op: str, dtype: np.dtype, out: np.dtype) -> Any:
    x, y, a = _c(x, dtype), _c(y, dtype), _c(a, dtype)
    r = x + y * a if op == "add" else x - y * a
    return _c(r, out)


def inplace_binary(self: Tensor, op: str, other: Any, alpha: Any = 1) -> Tensor:
    other = coerce(other)
    dt = _dt.result_type(self, other)
    if op == "div":
        dt = _dt.float_type(dt)
    _inplace_dtype_check(self, dt)
    static = (("op", op), ("dtype", dt), ("out", self._npdtype))
    if alpha != 1:
        return apply_inplace(
            self, _ip_alpha_f, f"{op.capitalize()}Backward0", (other, alpha), static
        )
    name = {
        "add": "AddBackward0",
        "sub": "SubBackward0",
        "mul": "MulBackward0",
        "div": "DivBackward0",
        "pow": "PowBackward0",
    }.get(op, op)
    return apply_inplace(self, _ip_binary_f, name, (other,), static)


def _ip_fill_f(x: Any, v: Any, *, dtype: np.dtype) -> Any:
    return fnp.broadcast_to(_c(v, dtype), x.shape)


def _ip_unary_f(x: Any, *, fn: str, dtype: np.dtype) -> Any:
    f = {
        "neg": lambda v: -v,
        "exp": fnp.exp,
        "sqrt": fnp.sqrt,
        "relu": _relu_f,
        "abs": fnp.abs,
        "log": fnp.log,
        "sigmoid": fnn.sigmoid,
        "tanh": fnp.tanh,
        "floor": fnp.floor,
        "ceil": fnp.ceil,
        "round": fnp.round,
        "trunc": fnp.trunc,
        "sin": fnp.sin,
        "cos": fnp.cos,
        "reciprocal": lambda v: 1.0 / v,
        "rsqrt": lambda v: 1.0 / fnp.sqrt(v),
        "square": lambda v: v * v,
        "sign": fnp.sign,
    }[fn]
    return _c(f(x), dtype)


def inplace_unary(self: Tensor, fn: str) -> Tensor:
    dt = self._npdtype
    return apply_inplace(
        self, _ip_unary_f, fn.capitalize() + "Backward0", (), (("fn", fn), ("dtype", dt))
    )


def inplace_fill(self: Tensor, value: Any) -> Tensor:
    value = coerce(value)
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.ndim} dimensions."
        )
    return apply_inplace(self, _ip_fill_f, "FillBackward0", (value,), (("dtype", self._npdtype),))


def _ip_copy_f(x: Any, src: Any, *, dtype: np.dtype) -> Any:
    return fnp.broadcast_to(_c(src, dtype), x.shape)


def inplace_copy(self: Tensor, src: Any) -> Tensor:
    src = coerce(src)
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    return apply_inplace(self, _ip_copy_f, "CopyBackwards", (src,), (("dtype", self._npdtype),))


def _ip_clamp_f(x: Any, lo: Any, hi: Any, *, has_lo: bool, has_hi: bool, dtype: np.dtype) -> Any:
    return _c(_clamp_f(x, lo, hi, has_lo=has_lo, has_hi=has_hi, dtype=dtype), dtype)


def inplace_clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    lo = coerce(min) if min is not None else 0
    hi = coerce(max) if max is not None else 0
    return apply_inplace(
        self,
        _ip_clamp_f,
        "ClampBackward1",
        (lo, hi),
        (("has_lo", min is not None), ("has_hi", max is not None), ("dtype", self._npdtype)),
    )


def _ip_addc_f(x: Any, a: Any, b: Any, v: Any, *, op: str, dtype: np.dtype) -> Any:
    f = _addcmul_f if op == "mul" else _addcdiv_f
    return _c(f(x, a, b, v, dtype=dtype), dtype)


def inplace_addc(self: Tensor, op: str, t1: Tensor, t2: Tensor, value: Any) -> Tensor:
    return apply_inplace(
        self,
        _ip_addc_f,
        f"Addc{op}Backward0",
        (t1, t2, value),
        (("op", op), ("dtype", self._npdtype)),
    )


def _ip_lerp_f(x: Any, e: Any, w: Any, *, dtype: np.dtype) -> Any:
    return _c(_lerp_f(x, e, w, dtype=dtype), dtype)


def inplace_lerp(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    return apply_inplace(
        self, _ip_lerp_f, "LerpBackward0", (end, coerce(weight)), (("dtype", self._npdtype),)
    )


def inplace_random(self: Tensor, kind: str, a: float, b: float, generator: Any = None) -> Tensor:
    """``uniform_``/``normal_``/``bernoulli_``: new values from the global generator (recorded
    as a copy of a constant, so no gradient flows to the old values)."""
    from compat._core import creation

    rng = creation._gen(generator)
    shape = tuple(self.shape)
    if kind == "uniform":
        vals = a + (b - a) * rng.random(shape)
    elif kind == "normal":
        vals = a + b * rng.standard_normal(shape)
    elif kind == "bernoulli":
        vals = rng.random(shape) < a
    else:
        raise ValueError(kind)
    src = creation._leaf(np.asarray(vals, self._npdtype), False)
    return inplace_copy(self, src)


def ops_by_name(name: str) -> Any:
    """An elementwise float op defined from the table above (``log2``, ``erf``, ...)."""
    return globals()[name]
