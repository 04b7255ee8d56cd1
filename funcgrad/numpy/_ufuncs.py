"""Elementwise NumPy functions: promotion and broadcasting, then one primitive each.

Composites (``square``, ``log2``, ``clip``, ...) are plain functions of the
primitives, with no rules of their own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy._core import (
    ArrayLike,
    aval,
    broadcast_shapes,
    broadcast_to_shape,
    cast,
    prep,
    promote,
    promote_broadcast,
    result_dtype,
)
from funcgrad.primitives import elementwise as ew


def _float_arg(name: str, x: ArrayLike) -> Any:
    """Promote integer/bool inputs of float-only functions to the default float."""
    x = prep(x, name)
    a = aval(x)
    if not dtypes.is_inexact(a.dtype):
        return cast(x, dtypes.default_dtype(2), a.weak_type)
    return x


def _unary_float(name: str, fn: Any) -> Any:
    def f(x: ArrayLike) -> Any:
        return fn(_float_arg(name, x))

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` (NumPy semantics; integers promote to float)."
    return f


def _unary_num(name: str, fn: Any) -> Any:
    def f(x: ArrayLike) -> Any:
        x = prep(x, name)
        if type(x) in (bool, int, float, complex):
            x = np.asarray(x, dtypes.python_scalar_dtype(x))
        return fn(x)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}``."
    return f


def _binary(name: str, fn: Any, floats: bool = False) -> Any:
    def f(x: ArrayLike, y: ArrayLike) -> Any:
        if floats:
            x, y = promote_broadcast(name, x, y)
            if not dtypes.is_inexact(aval(x).dtype) and not dtypes.is_inexact(aval(y).dtype):
                dt = dtypes.default_dtype(2)
                x, y = cast(x, dt, aval(x).weak_type), cast(y, dt, aval(y).weak_type)
            return fn(x, y)
        return fn(*promote_broadcast(name, x, y))

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` with NumPy broadcasting and JAX type promotion."
    return f


sin = _unary_float("sin", ew.sin)
cos = _unary_float("cos", ew.cos)
tan = _unary_float("tan", ew.tan)
arcsin = _unary_float("arcsin", ew.asin)
arccos = _unary_float("arccos", ew.acos)
arctan = _unary_float("arctan", ew.atan)
sinh = _unary_float("sinh", ew.sinh)
cosh = _unary_float("cosh", ew.cosh)
tanh = _unary_float("tanh", ew.tanh)
arcsinh = _unary_float("arcsinh", ew.asinh)
arccosh = _unary_float("arccosh", ew.acosh)
arctanh = _unary_float("arctanh", ew.atanh)
exp = _unary_float("exp", ew.exp)
expm1 = _unary_float("expm1", ew.expm1)
log = _unary_float("log", ew.log)
log1p = _unary_float("log1p", ew.log1p)
sqrt = _unary_float("sqrt", ew.sqrt)
cbrt = _unary_float("cbrt", ew.cbrt)
negative = _unary_num("negative", ew.neg)
sign = _unary_num("sign", ew.sign)
absolute = _unary_num("absolute", ew.abs)
abs = absolute  # noqa: A001
asin, acos, atan = arcsin, arccos, arctan


def exp2(x: ArrayLike) -> Any:
    """``2 ** x``."""
    x = _float_arg("exp2", x)
    return ew.exp(ew.mul(x, math.log(2.0)))


def log2(x: ArrayLike) -> Any:
    """Base-2 logarithm."""
    x = _float_arg("log2", x)
    return ew.div(ew.log(x), math.log(2.0))


def log10(x: ArrayLike) -> Any:
    """Base-10 logarithm."""
    x = _float_arg("log10", x)
    return ew.div(ew.log(x), math.log(10.0))


def square(x: ArrayLike) -> Any:
    """``x * x``."""
    return ew.integer_pow(_unary_num_prep(x), 2)


def _unary_num_prep(x: ArrayLike) -> Any:
    x = prep(x, "funcgrad.numpy")
    if type(x) in (bool, int, float, complex):
        return np.asarray(x, dtypes.python_scalar_dtype(x))
    return x


def reciprocal(x: ArrayLike) -> Any:
    """``1 / x``."""
    x = _float_arg("reciprocal", x)
    return ew.div(1.0, x) if aval(x).shape == () else ew.div(_ones_like(x), x)


def _ones_like(x: Any) -> Any:
    from funcgrad.primitives.shape import full

    a = aval(x)
    return full(a.shape, 1, a.dtype)


def _floor_or_id(fn: Any, name: str) -> Any:
    def f(x: ArrayLike) -> Any:
        x = _unary_num_prep(x)
        if not dtypes.is_inexact(aval(x).dtype):
            return x
        return fn(x)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` (identity on integers)."
    return f


floor = _floor_or_id(ew.floor, "floor")
ceil = _floor_or_id(ew.ceil, "ceil")
rint = _floor_or_id(ew.round, "rint")


def round(x: ArrayLike, decimals: int = 0) -> Any:  # noqa: A001
    """Round half to even, like NumPy."""
    x = _unary_num_prep(x)
    if not dtypes.is_inexact(aval(x).dtype):
        return x
    if decimals == 0:
        return ew.round(x)
    s = 10.0**decimals
    return ew.div(ew.round(ew.mul(x, s)), s)


around = round


def trunc(x: ArrayLike) -> Any:
    """Round toward zero."""
    x = _unary_num_prep(x)
    if not dtypes.is_inexact(aval(x).dtype):
        return x
    return ew.round_toward_zero(x)


def isfinite(x: ArrayLike) -> Any:
    """Elementwise finiteness (True for integers)."""
    x = _unary_num_prep(x)
    if not dtypes.is_inexact(aval(x).dtype):
        from funcgrad.primitives.shape import full

        return full(aval(x).shape, True, np.dtype("bool"))
    return ew.is_finite(x)


def isnan(x: ArrayLike) -> Any:
    """Elementwise NaN test."""
    x = _unary_num_prep(x)
    return ew.ne(x, x)


def isinf(x: ArrayLike) -> Any:
    """Elementwise infinity test."""
    x = _unary_num_prep(x)
    if not dtypes.is_inexact(aval(x).dtype):
        return ew.ne(x, x)
    return ew.eq(ew.abs(x), np.asarray(np.inf, aval(x).dtype))


add = _binary("add", ew.add)
subtract = _binary("subtract", ew.sub)
multiply = _binary("multiply", ew.mul)
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)
arctan2 = _binary("arctan2", ew.atan2, floats=True)
atan2 = arctan2
equal = _binary("equal", ew.eq)
not_equal = _binary("not_equal", ew.ne)
less = _binary("less", ew.lt)
less_equal = _binary("less_equal", ew.le)
greater = _binary("greater", ew.gt)
greater_equal = _binary("greater_equal", ew.ge)
bitwise_and = _binary("bitwise_and", ew.bitwise_and)
bitwise_or = _binary("bitwise_or", ew.bitwise_or)
bitwise_xor = _binary("bitwise_xor", ew.bitwise_xor)


def logical_and(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise logical and."""
    return ew.bitwise_and(*promote_broadcast("logical_and", _as_bool(x), _as_bool(y)))


def logical_or(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise logical or."""
    return ew.bitwise_or(*promote_broadcast("logical_or", _as_bool(x), _as_bool(y)))


def logical_xor(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise logical xor."""
    return ew.bitwise_xor(*promote_broadcast("logical_xor", _as_bool(x), _as_bool(y)))


def logical_not(x: ArrayLike) -> Any:
    """Elementwise logical not."""
    return ew.bitwise_not(_as_bool(x))


def _as_bool(x: ArrayLike) -> Any:
    x = _unary_num_prep(x)
    if aval(x).dtype == np.dtype("bool"):
        return x
    return ew.ne(x, np.asarray(0, aval(x).dtype))


def invert(x: ArrayLike) -> Any:
    """Bitwise not."""
    return ew.bitwise_not(_unary_num_prep(x))


bitwise_not = invert


def true_divide(x: ArrayLike, y: ArrayLike) -> Any:
    """``x / y``; integers divide to float."""
    x, y = promote_broadcast("divide", x, y)
    if not dtypes.is_inexact(aval(x).dtype):
        dt = dtypes.default_dtype(2)
        x, y = cast(x, dt, aval(x).weak_type), cast(y, dt, aval(y).weak_type)
    return ew.div(x, y)


divide = true_divide


def floor_divide(x: ArrayLike, y: ArrayLike) -> Any:
    """``x // y`` rounding toward negative infinity."""
    x, y = promote_broadcast("floor_divide", x, y)
    if dtypes.is_inexact(aval(x).dtype):
        return ew.floor(ew.div(x, y))
    q = ew.div(x, y)  # truncates toward zero for integers
    r = ew.rem(x, y)
    zero = np.asarray(0, aval(q).dtype)
    adjust = ew.bitwise_and(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
    return ew.select_n(adjust, q, ew.sub(q, np.asarray(1, aval(q).dtype)))


def remainder(x: ArrayLike, y: ArrayLike) -> Any:
    """``x % y`` with the sign of ``y`` (NumPy's ``mod``)."""
    x, y = promote_broadcast("remainder", x, y)
    r = ew.rem(x, y)
    zero = np.asarray(0, aval(r).dtype)
    fix = ew.bitwise_and(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
    return ew.select_n(fix, r, ew.add(r, y))


mod = remainder


def fmod(x: ArrayLike, y: ArrayLike) -> Any:
    """C-style remainder (sign of ``x``)."""
    return ew.rem(*promote_broadcast("fmod", x, y))


def power(x: ArrayLike, y: ArrayLike) -> Any:
    """``x ** y``; integer exponents known at trace time use ``integer_pow``."""
    if isinstance(y, int) and not isinstance(y, bool):
        x = _unary_num_prep(x)
        if dtypes.is_inexact(aval(x).dtype) or y >= 0:
            return ew.integer_pow(x, y)
    x, y = promote_broadcast("power", x, y)
    if not dtypes.is_inexact(aval(x).dtype):
        raise NotImplementedError(
            "funcgrad.numpy.power with a traced integer exponent on integer arrays"
        )
    return ew.pow(x, y)


pow = power  # noqa: A001


def float_power(x: ArrayLike, y: ArrayLike) -> Any:
    """``x ** y`` in floating point."""
    return power(_float_arg("float_power", x), y)


def clip(a: ArrayLike, a_min: ArrayLike | None = None, a_max: ArrayLike | None = None) -> Any:
    """Clamp ``a`` to ``[a_min, a_max]``."""
    out = prep(a, "clip")
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


def where(condition: ArrayLike, x: ArrayLike | None = None, y: ArrayLike | None = None) -> Any:
    """``x`` where ``condition`` else ``y`` (three-argument form)."""
    if x is None or y is None:
        raise NotImplementedError(
            "funcgrad.numpy.where with one argument (its output shape depends on values); "
            "use the three-argument form"
        )
    c = _as_bool(condition)
    x, y = promote("where", x, y)
    dtype, _ = result_dtype(x, y)
    x, y = (np.asarray(v, dtype) if type(v) in (bool, int, float, complex) else v for v in (x, y))
    shape = broadcast_shapes("where", aval(c).shape, aval(x).shape, aval(y).shape)
    c, x, y = (broadcast_to_shape(v, shape) for v in (c, x, y))
    return ew.select_n(c, y, x)


def heaviside(x: ArrayLike, h0: ArrayLike) -> Any:
    """0 for x < 0, h0 at 0, 1 for x > 0."""
    x, h0 = promote_broadcast("heaviside", x, h0)
    zero = ew._c(x, 0.0) if aval(x).ndim == 0 else np.asarray(0, aval(x).dtype)
    one = np.asarray(1, aval(x).dtype)
    return where(ew.lt(x, zero), np.asarray(0, aval(x).dtype), where(ew.gt(x, zero), one, h0))


def copysign(x: ArrayLike, y: ArrayLike) -> Any:
    """Magnitude of ``x`` with the sign of ``y``."""
    x, y = promote_broadcast("copysign", _float_arg("copysign", x), y)
    return where(ew.lt(y, np.asarray(0, aval(y).dtype)), ew.neg(ew.abs(x)), ew.abs(x))


def logaddexp(x: ArrayLike, y: ArrayLike) -> Any:
    """``log(exp(x) + exp(y))`` computed stably."""
    x, y = promote_broadcast("logaddexp", _float_arg("logaddexp", x), _float_arg("logaddexp", y))
    m = ew.max(x, y)
    return ew.add(m, ew.log1p(ew.exp(ew.neg(ew.abs(ew.sub(x, y))))))


def deg2rad(x: ArrayLike) -> Any:
    """Degrees to radians."""
    return ew.mul(_float_arg("deg2rad", x), math.pi / 180.0)


def rad2deg(x: ArrayLike) -> Any:
    """Radians to degrees."""
    return ew.mul(_float_arg("rad2deg", x), 180.0 / math.pi)


radians, degrees = deg2rad, rad2deg


def positive(x: ArrayLike) -> Any:
    """``+x``."""
    return _unary_num_prep(x)


def conjugate(x: ArrayLike) -> Any:
    """Complex conjugate (identity on real arrays)."""
    x = _unary_num_prep(x)
    if dtypes.kind(aval(x).dtype) == 3:
        raise NotImplementedError("funcgrad.numpy.conjugate of complex arrays")
    return x


conj = conjugate


def real(x: ArrayLike) -> Any:
    """Real part (identity on real arrays)."""
    return conjugate(x)


def sinc(x: ArrayLike) -> Any:
    """``sin(pi x) / (pi x)`` with ``sinc(0) = 1``."""
    x = _float_arg("sinc", x)
    px = ew.mul(x, math.pi)
    zero = np.asarray(0, aval(x).dtype)
    is0 = ew.eq(x, zero)
    safe = where(is0, np.asarray(1, aval(x).dtype), px)
    return where(is0, np.asarray(1, aval(x).dtype), ew.div(ew.sin(safe), safe))
