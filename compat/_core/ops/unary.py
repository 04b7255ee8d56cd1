"""Unary and ternary elementwise torch ops.

Float math (``exp``, ``log``, ``sigmoid``, ... from one table), rounding, ``isnan``-style
tests, ``clamp``, ``where``, ``nonzero``, ``lerp``, ``addcmul``/``addcdiv``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import _c, coerce
from compat._core.tensor import Tensor, apply
from funcgrad import lax as flax
from funcgrad import nn as fnn
from funcgrad import numpy as fnp

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
    "erf": (flax.erf, "ErfBackward0", None),
    "reciprocal": (lambda x: 1.0 / x, "ReciprocalBackward0", "result"),
}


def _unary_float_f(x: Any, *, op: str, dtype: np.dtype) -> Any:
    return _UNARY[op][0](_c(x, dtype))


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


def ops_by_name(name: str) -> Any:
    """An elementwise float op defined from the table above (``log2``, ``erf``, ...)."""
    return globals()[name]
