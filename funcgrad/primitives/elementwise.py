"""Elementwise primitives: unary math, binary arithmetic, comparisons, select, convert.

Binary primitives take operands of one dtype and one shape; 0-d operands
broadcast (as in ``jax.lax``), and weakly typed scalars take the other
operand's dtype. ``funcgrad.numpy`` does NumPy broadcasting and promotion
before binding them.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand

FAMILY = "elementwise"


# --------------------------------------------------------------------------- helpers


def _fmt(avals: tuple[Aval, ...]) -> str:
    return ", ".join(str(a) for a in avals)


def _check_dtype(name: str, aval: Aval, allowed: str) -> None:
    k = dtypes.kind(aval.dtype)
    ok = {
        "float": k in (2, 3),
        "real": k == 2,
        "num": k in (1, 2, 3),
        "signed": k in (2, 3) or (k == 1 and aval.dtype.kind == "i"),
        "int": k == 1,
        "intbool": k in (0, 1),
        "any": True,
    }[allowed]
    if not ok:
        need = {
            "float": "a floating (or complex) dtype",
            "real": "a real floating dtype",
            "num": "a numeric dtype",
            "signed": "a signed numeric dtype",
            "int": "an integer dtype",
            "intbool": "an integer or bool dtype",
            "any": "",
        }[allowed]
        raise TypeError(f"{name} requires {need}, got an operand of type {aval}")


def _unary_aval(name: str, allowed: str) -> Callable[..., Aval]:
    def abstract_eval(x: Aval) -> Aval:
        _check_dtype(name, x, allowed)
        return x

    return abstract_eval


def _join_avals(name: str, avals: tuple[Aval, ...], allowed: str) -> Aval:
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        raise TypeError(
            f"{name} requires operands of equal shapes (or 0-d), got {_fmt(avals)}; "
            "funcgrad.numpy broadcasts by NumPy's rules before calling it"
        )
    shape = shapes.pop() if shapes else ()
    strong = {a.dtype for a in avals if not a.weak_type}
    if len(strong) > 1:
        raise TypeError(f"{name} requires operands of one dtype, got {_fmt(avals)}")
    if strong:
        dtype = strong.pop()
        for a in avals:
            if a.weak_type and dtypes.kind(a.dtype) > dtypes.kind(dtype):
                raise TypeError(f"{name}: weak operand {a} does not fit dtype {dtype}")
    else:
        dtype = builtins.max((a.dtype for a in avals), key=lambda d: (dtypes.kind(d), d.itemsize))
    out = Aval(shape, dtype, all(a.weak_type for a in avals))
    _check_dtype(name, out, allowed)
    return out


def _binary_aval(name: str, allowed: str, out_dtype: str | None = None) -> Callable[..., Aval]:
    def abstract_eval(*avals: Aval) -> Aval:
        out = _join_avals(name, avals, allowed)
        if out_dtype is not None:
            return Aval(out.shape, np.dtype(out_dtype), False)
        return out

    return abstract_eval


def lax_convert(x: Any, dtype: np.dtype, weak_type: bool = False) -> Any:
    """(lowering) ``x`` converted to ``dtype``, weakly typed if ``weak_type`` (as the aval says).

    ``lax.convert_element_type`` always gives a strong result; JAX's own weak conversion
    is private, so it is imported here, inside lowering, and nowhere else.
    """
    if weak_type:
        from jax._src.lax.lax import _convert_element_type

        return _convert_element_type(x, np.dtype(dtype), weak_type=True)
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x, dtype)
    return lax.convert_element_type(x, dtype)


def _cast(vals: tuple, dtype: np.dtype, weak: bool = False) -> list:
    """(lowering) operands of a join, all of ``dtype``; weak only if the join is weak."""
    out = []
    for v in vals:
        if isinstance(v, (bool, int, float, complex)) or v.dtype != dtype:
            v = lax_convert(v, dtype, weak)
        out.append(v)
    return out


def _lower_nary(fn: Callable, name: str) -> Callable:
    def lower(*vals: Any) -> Any:
        out = _join_avals(name, tuple(to_aval(v) for v in vals), "any")
        return fn(*_cast(vals, out.dtype, out.weak_type))

    return lower


def vectorized_batch(prim: Primitive) -> Callable:
    """Batching rule for elementwise primitives: align batch axes, then apply."""

    def batch(args: list, dims: list, **params: Any) -> tuple[Any, int]:
        from funcgrad.primitives.shape import broadcast_in_dim

        size = rules.batch_size(args, dims)
        bd = next(d for d in dims if d is not None)
        rest = _rest_shape(args, dims)
        full = (*rest[:bd], size, *rest[bd:])
        out_args = []
        for a, d in zip(args, dims):
            nd = to_aval(a).ndim
            if d is None:
                if nd == 0:
                    out_args.append(a)
                else:
                    keep = tuple(i for i in range(len(full)) if i != bd)
                    out_args.append(broadcast_in_dim(a, full, keep))
            elif nd == 1 and rest:
                out_args.append(broadcast_in_dim(a, full, (bd,)))
            else:
                out_args.append(rules.moveaxis(a, d, bd))
        return prim.bind(*out_args, **params), bd

    return batch


def _rest_shape(args: list, dims: list) -> tuple:
    for a, d in zip(args, dims):
        sh = list(to_aval(a).shape)
        if d is not None:
            sh.pop(d)
        if sh:
            return tuple(sh)
    return ()


def unbroadcast(ct: Any, aval: Aval) -> Any:
    """Sum a cotangent down to a 0-d operand that was broadcast; cast to its dtype."""
    if is_zero(ct):
        return ct
    ct_aval = to_aval(ct)
    if aval.shape == () and ct_aval.shape != ():
        from funcgrad.primitives.reductions import reduce_sum

        ct = reduce_sum(ct, tuple(range(ct_aval.ndim)))
    if to_aval(ct).dtype != aval.dtype and dtypes.is_inexact(aval.dtype):
        ct = cast_tangent(ct, aval.dtype)
    return ct


def _examples_unary(lo: float = -2.0, hi: float = 2.0, smooth: bool = True) -> Callable:
    def examples(rng: np.random.Generator) -> list[Example]:
        return [
            Example([rand(rng, (3,), lo=lo, hi=hi)], smooth=smooth),
            Example([rand(rng, (2, 3), lo=lo, hi=hi)], smooth=smooth),
            Example([rand(rng, (), lo=lo, hi=hi)], smooth=smooth),
        ]

    return examples


def _examples_binary(lo: float = -2.0, hi: float = 2.0, smooth: bool = True, lo2=None, hi2=None):
    lo2 = lo if lo2 is None else lo2
    hi2 = hi if hi2 is None else hi2

    def examples(rng: np.random.Generator) -> list[Example]:
        return [
            Example(
                [rand(rng, (3,), lo=lo, hi=hi), rand(rng, (3,), lo=lo2, hi=hi2)], smooth=smooth
            ),
            Example(
                [rand(rng, (2, 3), lo=lo, hi=hi), rand(rng, (2, 3), lo=lo2, hi=hi2)], smooth=smooth
            ),
            Example(
                [rand(rng, (2, 3), lo=lo, hi=hi), rand(rng, (), lo=lo2, hi=hi2)], smooth=smooth
            ),
        ]

    return examples


# --------------------------------------------------------------------------- unary


def _unary(
    name: str,
    lower: Callable,
    deriv: Callable[[Any, Any], Any] | None,
    *,
    allowed: str = "float",
    lo: float = -2.0,
    hi: float = 2.0,
    smooth: bool = True,
) -> Primitive:
    """Declare a unary elementwise primitive; ``deriv(x, y)`` is dy/dx."""
    p = Primitive(name, family=FAMILY, differentiable=deriv is not None)
    p.abstract_eval = _unary_aval(name, allowed)
    p.lower = lower
    p.batch = lambda args, dims, **kw: (p.bind(args[0]), dims[0])
    if deriv is not None:

        def jvp(primals: list, tangents: list) -> tuple:
            (x,), (t,) = primals, tangents
            y = p.bind(x)
            return y, mul(t, deriv(x, y))

        def vjp(ct: Any, x: Any, *, out: Any) -> tuple:
            return (mul(ct, deriv(x, out)),)

        p.jvp = jvp
        p.vjp = vjp
    if allowed in ("float", "real", "num", "signed"):
        p.examples = _examples_unary(lo, hi, smooth)
    return p


def _full_like(x: Any, v: float) -> Any:
    aval = to_aval(x)
    return np.asarray(v, aval.dtype) if aval.ndim == 0 else _bcast_scalar(v, aval)


def _bcast_scalar(v: float, aval: Aval) -> Any:
    from funcgrad.primitives.shape import full

    return full(aval.shape, v, aval.dtype)


def _c(x: Any, v: float) -> Any:
    """A scalar constant of ``x``'s dtype (0-d operands broadcast in binary ops)."""
    return np.asarray(v, to_aval(x).dtype)


neg_p = _unary("neg", lax.neg, lambda x, y: _c(x, -1.0), allowed="num")
exp_p = _unary("exp", lax.exp, lambda x, y: y)
log_p = _unary("log", lax.log, lambda x, y: div(_c(x, 1.0), x), lo=0.5, hi=3.0)
log1p_p = _unary("log1p", lax.log1p, lambda x, y: div(_c(x, 1.0), add(x, _c(x, 1.0))), lo=-0.5)
expm1_p = _unary("expm1", lax.expm1, lambda x, y: add(y, _c(x, 1.0)))
sin_p = _unary("sin", lax.sin, lambda x, y: cos(x))
cos_p = _unary("cos", lax.cos, lambda x, y: neg(sin(x)))
tan_p = _unary("tan", lax.tan, lambda x, y: add(_c(x, 1.0), mul(y, y)), lo=-1.2, hi=1.2)
asin_p = _unary("asin", lax.asin, lambda x, y: rsqrt(sub(_c(x, 1.0), mul(x, x))), lo=-0.9, hi=0.9)
acos_p = _unary(
    "acos", lax.acos, lambda x, y: neg(rsqrt(sub(_c(x, 1.0), mul(x, x)))), lo=-0.9, hi=0.9
)
atan_p = _unary("atan", lax.atan, lambda x, y: div(_c(x, 1.0), add(_c(x, 1.0), mul(x, x))))
sinh_p = _unary("sinh", lax.sinh, lambda x, y: cosh(x))
cosh_p = _unary("cosh", lax.cosh, lambda x, y: sinh(x))
tanh_p = _unary("tanh", lax.tanh, lambda x, y: sub(_c(x, 1.0), mul(y, y)))
asinh_p = _unary("asinh", lax.asinh, lambda x, y: rsqrt(add(mul(x, x), _c(x, 1.0))))
acosh_p = _unary("acosh", lax.acosh, lambda x, y: rsqrt(sub(mul(x, x), _c(x, 1.0))), lo=1.2, hi=3.0)
atanh_p = _unary(
    "atanh", lax.atanh, lambda x, y: div(_c(x, 1.0), sub(_c(x, 1.0), mul(x, x))), lo=-0.9, hi=0.9
)
sqrt_p = _unary("sqrt", lax.sqrt, lambda x, y: div(_c(x, 0.5), y), lo=0.5, hi=3.0)
rsqrt_p = _unary("rsqrt", lax.rsqrt, lambda x, y: mul(_c(x, -0.5), div(y, x)), lo=0.5, hi=3.0)
cbrt_p = _unary("cbrt", lax.cbrt, lambda x, y: div(_c(x, 1.0 / 3.0), mul(y, y)), lo=0.5, hi=3.0)
logistic_p = _unary("logistic", lax.logistic, lambda x, y: mul(y, sub(_c(x, 1.0), y)))
erf_p = _unary(
    "erf",
    lax.erf,
    lambda x, y: mul(_c(x, 2.0 / math.sqrt(math.pi)), exp(neg(mul(x, x)))),
)
erf_inv_p = _unary(
    "erf_inv",
    lax.erf_inv,
    lambda x, y: mul(_c(x, math.sqrt(math.pi) / 2.0), exp(mul(y, y))),
    lo=-0.9,
    hi=0.9,
)
lgamma_p = _unary("lgamma", lax.lgamma, lambda x, y: digamma(x), lo=0.5, hi=3.0, smooth=False)


def _digamma_deriv(x: Any, y: Any) -> Any:
    from funcgrad.primitives import special  # (special builds on this module)

    return special.polygamma(_c(x, 1.0), x)


digamma_p = _unary("digamma", lax.digamma, _digamma_deriv, lo=0.5, hi=3.0)
# abs: d|x|/dx = sign(x) (0 at 0, as in JAX and PyTorch); complex |z| is real, its rules
# are in the complex section below
# lax.abs rejects unsigned integers (fnp.abs returns them unchanged before binding)
abs_p = _unary("abs", lax.abs, lambda x, y: sign(x), allowed="signed", smooth=False)
sign_p = _unary("sign", lax.sign, None, allowed="num")
floor_p = _unary("floor", lax.floor, None, allowed="real")
ceil_p = _unary("ceil", lax.ceil, None, allowed="real")
round_p = _unary(
    "round", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), None, allowed="real"
)
not_p = _unary("not", lax.bitwise_not, None, allowed="intbool")

is_finite_p = Primitive("is_finite", family=FAMILY, differentiable=False)


@is_finite_p.def_abstract_eval
def _is_finite_abstract_eval(x: Aval) -> Aval:
    _check_dtype("is_finite", x, "real")
    return Aval(x.shape, np.dtype("bool"))


is_finite_p.lower = lax.is_finite
is_finite_p.batch = lambda args, dims: (is_finite_p.bind(args[0]), dims[0])


def neg(x: Any) -> Any:
    return bind(neg_p, x)


def exp(x: Any) -> Any:
    return bind(exp_p, x)


def log(x: Any) -> Any:
    return bind(log_p, x)


def log1p(x: Any) -> Any:
    return bind(log1p_p, x)


def expm1(x: Any) -> Any:
    return bind(expm1_p, x)


def sin(x: Any) -> Any:
    return bind(sin_p, x)


def cos(x: Any) -> Any:
    return bind(cos_p, x)


def tan(x: Any) -> Any:
    return bind(tan_p, x)


def asin(x: Any) -> Any:
    return bind(asin_p, x)


def acos(x: Any) -> Any:
    return bind(acos_p, x)


def atan(x: Any) -> Any:
    return bind(atan_p, x)


def sinh(x: Any) -> Any:
    return bind(sinh_p, x)


def cosh(x: Any) -> Any:
    return bind(cosh_p, x)


def tanh(x: Any) -> Any:
    return bind(tanh_p, x)


def asinh(x: Any) -> Any:
    return bind(asinh_p, x)


def acosh(x: Any) -> Any:
    return bind(acosh_p, x)


def atanh(x: Any) -> Any:
    return bind(atanh_p, x)


def sqrt(x: Any) -> Any:
    return bind(sqrt_p, x)


def rsqrt(x: Any) -> Any:
    return bind(rsqrt_p, x)


def cbrt(x: Any) -> Any:
    return bind(cbrt_p, x)


def logistic(x: Any) -> Any:
    return bind(logistic_p, x)


def erf(x: Any) -> Any:
    return bind(erf_p, x)


def erf_inv(x: Any) -> Any:
    return bind(erf_inv_p, x)


def lgamma(x: Any) -> Any:
    return bind(lgamma_p, x)


def digamma(x: Any) -> Any:
    return bind(digamma_p, x)


def abs(x: Any) -> Any:
    return bind(abs_p, x)


def sign(x: Any) -> Any:
    return bind(sign_p, x)


def floor(x: Any) -> Any:
    return bind(floor_p, x)


def ceil(x: Any) -> Any:
    return bind(ceil_p, x)


def round(x: Any) -> Any:
    return bind(round_p, x)


def bitwise_not(x: Any) -> Any:
    return bind(not_p, x)


def is_finite(x: Any) -> Any:
    return bind(is_finite_p, x)


# --------------------------------------------------------------------------- binary


def _binary(
    name: str,
    lower: Callable,
    *,
    allowed: str = "num",
    out_dtype: str | None = None,
    differentiable: bool = True,
) -> Primitive:
    p = Primitive(name, family=FAMILY, differentiable=differentiable)
    p.abstract_eval = _binary_aval(name, allowed, out_dtype)
    p.lower = _lower_nary(lower, name)
    p.batch = vectorized_batch(p)
    return p


add_p = _binary("add", lax.add)
sub_p = _binary("sub", lax.sub)
mul_p = _binary("mul", lax.mul)
div_p = _binary("div", lax.div)
rem_p = _binary("rem", lax.rem)
pow_p = _binary("pow", lax.pow, allowed="float")
max_p = _binary("max", lax.max)
min_p = _binary("min", lax.min)
atan2_p = _binary("atan2", lax.atan2, allowed="real")
and_p = _binary("and", lax.bitwise_and, allowed="intbool", differentiable=False)
or_p = _binary("or", lax.bitwise_or, allowed="intbool", differentiable=False)
xor_p = _binary("xor", lax.bitwise_xor, allowed="intbool", differentiable=False)
eq_p = _binary("eq", lax.eq, allowed="any", out_dtype="bool", differentiable=False)
ne_p = _binary("ne", lax.ne, allowed="any", out_dtype="bool", differentiable=False)
lt_p = _binary("lt", lax.lt, allowed="any", out_dtype="bool", differentiable=False)
le_p = _binary("le", lax.le, allowed="any", out_dtype="bool", differentiable=False)
gt_p = _binary("gt", lax.gt, allowed="any", out_dtype="bool", differentiable=False)
ge_p = _binary("ge", lax.ge, allowed="any", out_dtype="bool", differentiable=False)


def add(x: Any, y: Any) -> Any:
    return bind(add_p, x, y)


def sub(x: Any, y: Any) -> Any:
    return bind(sub_p, x, y)


def mul(x: Any, y: Any) -> Any:
    return bind(mul_p, x, y)


def div(x: Any, y: Any) -> Any:
    return bind(div_p, x, y)


def rem(x: Any, y: Any) -> Any:
    return bind(rem_p, x, y)


def pow(x: Any, y: Any) -> Any:
    return bind(pow_p, x, y)


def max(x: Any, y: Any) -> Any:
    return bind(max_p, x, y)


def min(x: Any, y: Any) -> Any:
    return bind(min_p, x, y)


def atan2(x: Any, y: Any) -> Any:
    return bind(atan2_p, x, y)


def bitwise_and(x: Any, y: Any) -> Any:
    return bind(and_p, x, y)


def bitwise_or(x: Any, y: Any) -> Any:
    return bind(or_p, x, y)


def bitwise_xor(x: Any, y: Any) -> Any:
    return bind(xor_p, x, y)


def eq(x: Any, y: Any) -> Any:
    return bind(eq_p, x, y)


def ne(x: Any, y: Any) -> Any:
    return bind(ne_p, x, y)


def lt(x: Any, y: Any) -> Any:
    return bind(lt_p, x, y)


def le(x: Any, y: Any) -> Any:
    return bind(le_p, x, y)


def gt(x: Any, y: Any) -> Any:
    return bind(gt_p, x, y)


def ge(x: Any, y: Any) -> Any:
    return bind(ge_p, x, y)


#: a partial derivative that is identically 1 or -1: the rules pass (co)tangents
#: through (negated) instead of multiplying by a constant, as JAX's add/sub do
ONE, MINUS_ONE = "one", "minus_one"


def _scale(t: Any, d: Any, x: Any, y: Any, z: Any) -> Any:
    if d is ONE:
        return t
    if d is MINUS_ONE:
        return neg(t)
    return mul(t, d(x, y, z))


def _binary_ad(
    p: Primitive,
    dx: Callable[[Any, Any, Any], Any] | str | None,
    dy: Callable[[Any, Any, Any], Any] | str | None,
) -> None:
    """JVP and VJP of ``z = p(x, y)`` from the partials ``dz/dx(x, y, z)``, ``dz/dy(x, y, z)``
    (or :data:`ONE` / :data:`MINUS_ONE`)."""

    def jvp(primals: list, tangents: list) -> tuple:
        x, y = primals
        tx, ty = tangents
        z = p.bind(x, y)
        out: Any = Zero(to_aval(z).strip_weak())
        if dx is not None and not is_zero(tx):
            out = rules.add_tangents(out, _bcast_to(_scale(tx, dx, x, y, z), to_aval(z)))
        if dy is not None and not is_zero(ty):
            out = rules.add_tangents(out, _bcast_to(_scale(ty, dy, x, y, z), to_aval(z)))
        return z, out

    def vjp(ct: Any, x: Any, y: Any, *, out: Any) -> tuple:
        gx = unbroadcast(_scale(ct, dx, x, y, out), to_aval(x)) if dx is not None else None
        gy = unbroadcast(_scale(ct, dy, x, y, out), to_aval(y)) if dy is not None else None
        return gx, gy

    p.jvp = jvp
    p.vjp = vjp


def _bcast_to(t: Any, aval: Aval) -> Any:
    ta = to_aval(t)
    if ta.shape == aval.shape:
        return t
    from funcgrad.primitives.shape import broadcast_in_dim

    return broadcast_in_dim(t, aval.shape, ())


def _select_mask(mask: Any, z: Any) -> Any:
    return convert_element_type(mask, to_aval(z).dtype)


def _sel(pred: Any, on_false: Any, on_true: Any) -> Any:
    """``select_n`` broadcasting 0-d cases to the others' shape."""
    shape = builtins.max((to_aval(v).shape for v in (pred, on_false, on_true)), key=len)

    def fit(v: Any) -> Any:
        a = to_aval(v)
        if a.shape == shape:
            return v
        from funcgrad.primitives.shape import broadcast_in_dim

        return broadcast_in_dim(v, shape, ())

    return select_n(fit(pred), fit(on_false), fit(on_true))


def _pow_dx(x: Any, y: Any, z: Any) -> Any:
    # y * x**(y-1), with no special case (JAX's rule for a float exponent): the
    # derivative is a smooth function of (x, y), so the mixed second derivatives
    # agree with ∂/∂x of _pow_dy (at y == 0 too)
    return mul(y, pow(x, sub(y, _c(y, 1.0))))


def _pow_dy(x: Any, y: Any, z: Any) -> Any:
    # log(x) * x**y with log(1) substituted at x == 0 (JAX's _replace_zero): 0 there
    x_is_0 = eq(x, _c(x, 0.0))
    return mul(log(_sel(x_is_0, x, _c(x, 1.0))), z)


def _max_dx(x: Any, y: Any, z: Any) -> Any:
    # ties split the gradient evenly, as JAX does
    return add(_select_mask(gt(x, y), z), mul(_c(z, 0.5), _select_mask(eq(x, y), z)))


def _max_dy(x: Any, y: Any, z: Any) -> Any:
    return add(_select_mask(lt(x, y), z), mul(_c(z, 0.5), _select_mask(eq(x, y), z)))


def _min_dx(x: Any, y: Any, z: Any) -> Any:
    return add(_select_mask(lt(x, y), z), mul(_c(z, 0.5), _select_mask(eq(x, y), z)))


def _min_dy(x: Any, y: Any, z: Any) -> Any:
    return add(_select_mask(gt(x, y), z), mul(_c(z, 0.5), _select_mask(eq(x, y), z)))


_binary_ad(add_p, ONE, ONE)
_binary_ad(sub_p, ONE, MINUS_ONE)
_binary_ad(mul_p, lambda x, y, z: y, lambda x, y, z: x)
_binary_ad(div_p, lambda x, y, z: div(_c(z, 1.0), y), lambda x, y, z: neg(div(z, y)))
_binary_ad(rem_p, ONE, lambda x, y, z: neg(round_toward_zero(div(x, y))))
_binary_ad(pow_p, _pow_dx, _pow_dy)
_binary_ad(max_p, _max_dx, _max_dy)
_binary_ad(min_p, _min_dx, _min_dy)
_binary_ad(
    atan2_p,
    lambda x, y, z: div(y, add(mul(x, x), mul(y, y))),
    lambda x, y, z: div(neg(x), add(mul(x, x), mul(y, y))),
)


def round_toward_zero(x: Any) -> Any:
    return mul(sign(x), floor(abs(x)))


def _examples_nondiff(kind: str) -> Callable:
    def examples(rng: np.random.Generator) -> list[Example]:
        if kind == "bool":
            mk = lambda shape: rand(rng, shape, "bool")
        elif kind == "int":
            mk = lambda shape: rand(rng, shape, "int32", lo=-5, hi=5)
        else:
            mk = lambda shape: np.round(rand(rng, shape), 1)
        return [Example([mk((4,)), mk((4,))]), Example([mk((2, 3)), mk((2, 3))])]

    return examples


for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    _p.examples = _examples_nondiff("float")
for _p in (and_p, or_p, xor_p):
    _p.examples = _examples_nondiff("int")
not_p.examples = lambda rng: [
    Example([rand(rng, (4,), "bool")]),
    Example([rand(rng, (2, 3), "int32")]),
]
is_finite_p.examples = lambda rng: [
    Example([np.array([1.0, np.inf, -np.inf, np.nan, 0.0])]),
    Example([rand(rng, (2, 3))]),
]
add_p.examples = _examples_binary()
sub_p.examples = _examples_binary()
mul_p.examples = _examples_binary()
div_p.examples = _examples_binary(lo2=0.5, hi2=2.0)
rem_p.examples = _examples_binary(lo=0.1, hi=3.0, lo2=0.7, hi2=1.3, smooth=False)
pow_p.examples = _examples_binary(lo=0.5, hi=2.0)
max_p.examples = _examples_binary(smooth=False)
min_p.examples = _examples_binary(smooth=False)
atan2_p.examples = _examples_binary(lo=0.5, hi=2.0)


# --------------------------------------------------------------------------- integer_pow

integer_pow_p = Primitive("integer_pow", family=FAMILY)


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x: Aval, *, y: int) -> Aval:
    _check_dtype("integer_pow", x, "num")
    if not isinstance(y, int):
        raise TypeError(f"integer_pow exponent must be a Python int, got {y!r}")
    if y < 0 and dtypes.kind(x.dtype) == 1:
        raise ValueError(f"integer_pow of an integer {x} to the negative power {y}")
    return x


integer_pow_p.lower = lambda x, *, y: lax.integer_pow(x, y)
integer_pow_p.batch = lambda args, dims, *, y: (integer_pow(args[0], y), dims[0])


def _integer_pow_scale(t: Any, x: Any, y: int) -> Any:
    """``t * y * x**(y-1)``, with no multiply by a constant 1 and no ``x**1``."""
    if y == 0:
        return mul(t, _full_like(x, 0.0))
    if y == 1:
        return t
    return mul(t, mul(_c(x, float(y)), x if y == 2 else integer_pow(x, y - 1)))


@integer_pow_p.def_jvp
def _integer_pow_jvp(primals: list, tangents: list, *, y: int) -> tuple:
    (x,), (t,) = primals, tangents
    return integer_pow(x, y), _integer_pow_scale(t, x, y)


@integer_pow_p.def_vjp
def _integer_pow_vjp(ct: Any, x: Any, *, out: Any, y: int) -> tuple:
    return (_integer_pow_scale(ct, x, y),)


@integer_pow_p.def_examples
def _integer_pow_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,))], {"y": 2}),
        Example([rand(rng, (2, 3))], {"y": 3}),
        Example([rand(rng, (3,), lo=0.5, hi=2.0)], {"y": -2}),
        Example([rand(rng, (3,))], {"y": 0}),
    ]


def integer_pow(x: Any, y: int) -> Any:
    return bind(integer_pow_p, x, y=y)


# --------------------------------------------------------------------------- select_n

select_n_p = Primitive("select_n", family=FAMILY)


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which: Aval, *cases: Aval) -> Aval:
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype != np.dtype("bool") and dtypes.kind(which.dtype) != 1:
        raise TypeError(f"select_n predicate must be bool or int32, got {which}")
    if which.dtype == np.dtype("bool") and len(cases) > 2:
        raise TypeError("select_n with a bool predicate takes at most two cases")
    out = _join_avals("select_n", cases, "any")
    if which.shape not in ((), out.shape):
        raise TypeError(
            f"select_n predicate shape {which} must be 0-d or match the cases {_fmt(cases)}"
        )
    if any(c.shape != out.shape for c in cases):
        cs = [c for c in cases if c.shape != out.shape]
        raise TypeError(f"select_n cases must have equal shapes, got {_fmt(cases)} ({cs})")
    return out


def _select_n_lower(which: Any, *cases: Any) -> Any:
    out = _join_avals("select_n", tuple(to_aval(c) for c in cases), "any")
    return lax.select_n(which, *_cast(cases, out.dtype, out.weak_type))


select_n_p.lower = _select_n_lower


@select_n_p.def_batch
def _select_n_batch(args: list, dims: list) -> tuple:
    which, *cases = args
    wd, *cds = dims
    size = rules.batch_size(args, dims)
    case_aval = next(to_aval(c) for c in cases)
    if wd is None and to_aval(which).ndim == 0:
        # scalar predicate: batch the cases only
        bd = next(d for d in cds if d is not None)
        cs = [
            rules.moveaxis(c, d, bd) if d is not None else _bcast_batch(c, size, bd)
            for c, d in zip(cases, cds)
        ]
        return select_n(which, *cs), bd
    # move everything to the front, broadcasting the predicate and unbatched cases
    shape = list(to_aval(cases[0]).shape)
    if cds[0] is not None:
        shape.pop(cds[0])
    full_shape = (size, *shape)
    from funcgrad.primitives.shape import broadcast_in_dim

    if wd is None:
        which = broadcast_in_dim(
            which, full_shape, tuple(range(1, len(full_shape))) if to_aval(which).ndim else ()
        )
    else:
        which = rules.moveaxis(which, wd, 0)
        if to_aval(which).ndim == 1 and len(full_shape) > 1:
            which = broadcast_in_dim(which, full_shape, (0,))
    cs = [rules.bdim_to_front(c, d, size) for c, d in zip(cases, cds)]
    del case_aval
    return select_n(which, *cs), 0


def _bcast_batch(x: Any, size: int, bd: int) -> Any:
    return rules.moveaxis(rules.bdim_to_front(x, None, size), 0, bd)


@select_n_p.def_jvp
def _select_n_jvp(primals: list, tangents: list) -> tuple:
    which, *cases = primals
    out = select_n(which, *cases)
    tcases = tangents[1:]
    if all(is_zero(t) for t in tcases):
        return out, Zero(to_aval(out).strip_weak())
    aval = to_aval(out).strip_weak()
    ts = [rules.instantiate(t, aval) for t in tcases]
    return out, select_n(which, *ts)


@select_n_p.def_vjp
def _select_n_vjp(ct: Any, which: Any, *cases: Any, out: Any) -> tuple:
    aval = to_aval(out).strip_weak()
    zero = rules.zeros_like_aval(aval)
    n = len(cases)
    res: list[Any] = [None]
    for i in range(n):
        branches = [zero] * n
        branches[i] = ct
        res.append(unbroadcast(select_n(which, *branches), to_aval(cases[i])))
    return tuple(res)


@select_n_p.def_examples
def _select_n_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,), "bool"), rand(rng, (3,)), rand(rng, (3,))], diff_argnums=(1, 2)),
        Example(
            [rand(rng, (2, 3), "bool"), rand(rng, (2, 3)), rand(rng, (2, 3))], diff_argnums=(1, 2)
        ),
        Example(
            [np.asarray(rng.integers(0, 3, (2, 3)), np.int32)]
            + [rand(rng, (2, 3)) for _ in range(3)],
            diff_argnums=(1, 2, 3),
        ),
    ]


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise (``which`` bool: False picks ``cases[0]``)."""
    return bind(select_n_p, which, *cases)


# --------------------------------------------------------------------------- convert

convert_element_type_p = Primitive("convert_element_type", family=FAMILY)


@convert_element_type_p.def_abstract_eval
def _convert_abstract_eval(x: Aval, *, new_dtype: np.dtype, weak_type: bool = False) -> Aval:
    return Aval(x.shape, new_dtype, weak_type)


def _convert_lower(x: Any, *, new_dtype: np.dtype, weak_type: bool = False) -> Any:
    if isinstance(x, (bool, int, float, complex)) and not weak_type:
        x = np.asarray(x, dtypes.canonicalize(dtypes.python_scalar_dtype(x)))
    return lax_convert(x, new_dtype, weak_type)


convert_element_type_p.lower = _convert_lower
convert_element_type_p.batch = lambda args, dims, **kw: (
    convert_element_type_p.bind(args[0], **kw),
    dims[0],
)


@convert_element_type_p.def_jvp
def _convert_jvp(primals: list, tangents: list, *, new_dtype: np.dtype, weak_type: bool = False):
    (x,), (t,) = primals, tangents
    out = convert_element_type(x, new_dtype, weak_type)
    if not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(to_aval(x).dtype):
        return out, Zero(to_aval(out).strip_weak())
    return out, cast_tangent(t, new_dtype)


@convert_element_type_p.def_vjp
def _convert_vjp(ct: Any, x: Any, *, out: Any, new_dtype: np.dtype, weak_type: bool = False):
    src = to_aval(x).dtype
    if not dtypes.is_inexact(src) or not dtypes.is_inexact(new_dtype):
        return (None,)
    return (cast_tangent(ct, src),)


@convert_element_type_p.def_examples
def _convert_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example(
            [rand(rng, (3,))],
            {"new_dtype": np.dtype("float32")},
            rtol=1e-3,
            atol=1e-3,
            smooth=False,
        ),
        Example([rand(rng, (2, 3), "float32")], {"new_dtype": np.dtype("float64")}),
        Example([rand(rng, (3,))], {"new_dtype": np.dtype("float64"), "weak_type": True}),
    ]


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast ``x`` to ``new_dtype`` (canonicalised); a no-op when nothing changes."""
    new_dtype = dtypes.canonicalize(new_dtype)
    aval = to_aval(x)
    if (
        aval.dtype == new_dtype
        and aval.weak_type == weak_type
        and not isinstance(x, (bool, int, float, complex))
    ):
        return x
    return bind(convert_element_type_p, x, new_dtype=new_dtype, weak_type=weak_type)


# --------------------------------------------------------------------------- complex numbers
#
# Derivatives follow JAX's convention: a JVP is the R-linear map on tangents, and a VJP is
# its transpose under the bilinear pairing <a, b> = Re(sum(a * b)) (no conjugation). So
# holomorphic rules (``t * f'(z)``) serve both modes unchanged, ``grad`` of a real function
# of ``z = x + iy`` is ``df/dx - i df/dy``, and the rules below handle the parts that are
# not holomorphic: ``real``, ``imag``, ``conj``, ``complex`` and ``abs``.


def _is_complex(x: Any) -> bool:
    return dtypes.kind(to_aval(x).dtype) == 3


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of a complex one (``complex64`` → ``float32``); real dtypes unchanged."""
    dtype = np.dtype(dtype)
    return np.dtype(np.finfo(dtype).dtype) if dtype.kind == "c" else dtype


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype of a real floating one (``float32`` → ``complex64``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    return dtypes.canonicalize("complex128" if dtype == np.dtype("float64") else "complex64")


def _complex_part_aval(name: str) -> Callable[..., Aval]:
    def abstract_eval(x: Aval) -> Aval:
        if dtypes.kind(x.dtype) != 3:
            raise TypeError(f"{name} requires a complex operand, got {x}")
        return Aval(x.shape, real_dtype(x.dtype), x.weak_type)

    return abstract_eval


def _complex_examples(lo: float = -2.0, hi: float = 2.0, smooth: bool = True) -> Callable:
    def examples(rng: np.random.Generator) -> list[Example]:
        return [
            Example([rand(rng, (3,), "complex128", lo=lo, hi=hi)], smooth=smooth),
            Example([rand(rng, (2, 3), "complex128", lo=lo, hi=hi)], smooth=smooth),
            Example([rand(rng, (), "complex128", lo=lo, hi=hi)], smooth=smooth),
            Example(
                [rand(rng, (4,), "complex64", lo=lo, hi=hi)], smooth=False, rtol=1e-5, atol=1e-5
            ),
        ]

    return examples


def _unary_complex(name: str, lower: Callable, abstract_eval: Callable) -> Primitive:
    p = Primitive(name, family=FAMILY)
    p.abstract_eval = abstract_eval
    p.lower = lower
    p.batch = lambda args, dims, **kw: (p.bind(args[0]), dims[0])
    p.examples = _complex_examples()
    return p


real_p = _unary_complex("real", lax.real, _complex_part_aval("real"))
imag_p = _unary_complex("imag", lax.imag, _complex_part_aval("imag"))
conj_p = _unary_complex("conj", lax.conj, _unary_aval("conj", "any"))


def _conj_abstract_eval(x: Aval) -> Aval:
    if dtypes.kind(x.dtype) != 3:
        raise TypeError(f"conj requires a complex operand, got {x}")
    return x


conj_p.abstract_eval = _conj_abstract_eval


def real(x: Any) -> Any:
    """Real part of a complex array (a real array of the matching precision)."""
    return bind(real_p, x)


def imag(x: Any) -> Any:
    """Imaginary part of a complex array (a real array of the matching precision)."""
    return bind(imag_p, x)


def conj(x: Any) -> Any:
    """Complex conjugate of a complex array."""
    return bind(conj_p, x)


def cast_tangent(t: Any, dtype: np.dtype) -> Any:
    """A (co)tangent converted to ``dtype``; complex to real keeps the real part (what the
    conversion does, without NumPy's warning about discarding the imaginary part)."""
    if _is_complex(t) and dtypes.kind(np.dtype(dtype)) != 3:
        t = real(t)
    return convert_element_type(t, dtype)


def _as_complex(ct: Any, like: Any) -> Any:
    """A real cotangent as a complex array of ``like``'s dtype (imaginary part 0)."""
    return convert_element_type(ct, to_aval(like).dtype)


real_p.jvp = lambda primals, tangents: (real(primals[0]), real(tangents[0]))
real_p.vjp = lambda ct, x, *, out: (_as_complex(ct, x),)
imag_p.jvp = lambda primals, tangents: (imag(primals[0]), imag(tangents[0]))
# transpose of t -> Im(t): Re(w t) = v Im(t) for w = -i v
imag_p.vjp = lambda ct, x, *, out: (make_complex(_full_like(ct, 0.0), neg(ct)),)
conj_p.jvp = lambda primals, tangents: (conj(primals[0]), conj(tangents[0]))
conj_p.vjp = lambda ct, x, *, out: (conj(ct),)


# complex(x, y) = x + iy from two real operands of one dtype
complex_p = Primitive("complex", family=FAMILY)


@complex_p.def_abstract_eval
def _complex_abstract_eval(x: Aval, y: Aval) -> Aval:
    out = _join_avals("complex", (x, y), "real")
    return Aval(out.shape, complex_dtype(out.dtype), out.weak_type)


def _complex_lower(x: Any, y: Any) -> Any:
    out = _join_avals("complex", (to_aval(x), to_aval(y)), "any")
    return lax.complex(*_cast((x, y), out.dtype, out.weak_type))


complex_p.lower = _complex_lower
complex_p.batch = vectorized_batch(complex_p)


@complex_p.def_jvp
def _complex_jvp(primals: list, tangents: list) -> tuple:
    x, y = primals
    tx, ty = tangents
    z = make_complex(x, y)
    aval = to_aval(z)
    part = Aval(aval.shape, real_dtype(aval.dtype))
    tx = _bcast_to(rules.instantiate(tx, part), aval)
    ty = _bcast_to(rules.instantiate(ty, part), aval)
    return z, make_complex(tx, ty)


@complex_p.def_vjp
def _complex_vjp(ct: Any, x: Any, y: Any, *, out: Any) -> tuple:
    # transpose of (tx, ty) -> tx + i ty: Re(v (tx + i ty)) = Re(v) tx - Im(v) ty
    return unbroadcast(real(ct), to_aval(x)), unbroadcast(neg(imag(ct)), to_aval(y))


@complex_p.def_examples
def _complex_prim_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,)), rand(rng, (3,))]),
        Example([rand(rng, (2, 3)), rand(rng, ())]),
        Example([rand(rng, (2, 3), "float32"), rand(rng, (2, 3), "float32")], smooth=False),
    ]


def make_complex(x: Any, y: Any) -> Any:
    """``x + i y`` from two real arrays (``lax.complex``)."""
    return bind(complex_p, x, y)


# abs of a complex operand: a real result, d|z| = Re(t conj(z) / |z|) (0 at z = 0, as JAX)


@abs_p.def_abstract_eval
def _abs_abstract_eval(x: Aval) -> Aval:
    _check_dtype("abs", x, "signed")
    return Aval(x.shape, real_dtype(x.dtype), x.weak_type)


def _abs_direction(x: Any, y: Any) -> Any:
    """``conj(x) / |x|`` with ``|x| = 0`` replaced by 1 (so the derivative at 0 is 0)."""
    yc = convert_element_type(y, to_aval(x).dtype)
    return div(conj(x), _sel(eq(y, _c(y, 0.0)), yc, _c(x, 1.0)))


@abs_p.def_jvp
def _abs_jvp(primals: list, tangents: list) -> tuple:
    (x,), (t,) = primals, tangents
    y = abs(x)
    if not _is_complex(x):
        return y, mul(t, sign(x))
    return y, real(mul(t, _abs_direction(x, y)))


@abs_p.def_vjp
def _abs_vjp(ct: Any, x: Any, *, out: Any) -> tuple:
    if not _is_complex(x):
        return (mul(ct, sign(x)),)
    return (mul(_as_complex(ct, x), _abs_direction(x, out)),)


_abs_real_examples = abs_p.examples


def _abs_examples(rng: np.random.Generator) -> list[Example]:
    assert _abs_real_examples is not None
    cplx = _complex_examples(smooth=False)(rng)
    return [*_abs_real_examples(rng), *cplx, Example([np.array([0j, 1 + 1j, -2j])], smooth=False)]


abs_p.examples = _abs_examples


def _add_complex_examples(p: Primitive, lo: float = -2.0, hi: float = 2.0, n_args: int = 1) -> None:
    """Append complex examples to a primitive whose rules are holomorphic."""
    base = p.examples

    def examples(rng: np.random.Generator) -> list[Example]:
        extra = [
            Example([rand(rng, (3,), "complex128", lo=lo, hi=hi) for _ in range(n_args)]),
            Example([rand(rng, (2, 3), "complex128", lo=lo, hi=hi) for _ in range(n_args)]),
        ]
        return [*(base(rng) if base is not None else []), *extra]

    p.examples = examples


for _p, _lo, _hi in (
    (neg_p, -2.0, 2.0),
    (exp_p, -1.5, 1.5),
    (log_p, 0.5, 2.0),
    (sin_p, -1.5, 1.5),
    (cos_p, -1.5, 1.5),
    (tanh_p, -1.0, 1.0),
    (sqrt_p, 0.5, 2.0),
    (rsqrt_p, 0.5, 2.0),
    (expm1_p, -1.5, 1.5),
    (log1p_p, 0.2, 1.5),
    (sinh_p, -1.5, 1.5),
    (cosh_p, -1.5, 1.5),
):
    _add_complex_examples(_p, _lo, _hi)
for _p, _lo, _hi in ((add_p, -2.0, 2.0), (sub_p, -2.0, 2.0), (mul_p, -2.0, 2.0), (div_p, 0.5, 2.0)):
    _add_complex_examples(_p, _lo, _hi, n_args=2)
_integer_pow_real_examples = integer_pow_p.examples


def _integer_pow_all_examples(rng: np.random.Generator) -> list[Example]:
    assert _integer_pow_real_examples is not None
    return [
        *_integer_pow_real_examples(rng),
        Example([rand(rng, (3,), "complex128")], {"y": 3}),
        Example([rand(rng, (2, 3), "complex128", lo=0.5, hi=2.0)], {"y": -2}),
    ]


integer_pow_p.examples = _integer_pow_all_examples
