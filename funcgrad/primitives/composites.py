"""The declared composites: public elementwise functions built from primitives, each one
row (:class:`~funcgrad.core.primitive.Composite`) that serves every namespace having it.

A row says what a primitive's row says of its public forms: the numpy (and lax) names,
how the numpy form promotes its operands, the input domain the tests of every form draw
from, and the PyTorch form (:class:`~funcgrad.core.primitive.TorchForm`: name, backward
node, in-place forms, promotion) compat builds its op from. The function itself takes
operands already prepared (promoted and broadcast by the numpy form; as given by lax's)
and binds primitives only, so a composite has no rules of its own: its derivatives are
its primitives'. ``funcgrad.numpy``, ``funcgrad.lax`` and compat generate their forms
from these rows (``funcgrad.primitives.public_forms``, ``torch_rows``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.interp import to_aval
from funcgrad.core.primitive import Composite, TorchForm
from funcgrad.primitives import bits, calls, special
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh

# ------------------------------------------------------------------ constants of an operand


def like(x: Any, v: Any) -> Any:
    """A 0-d constant of ``x``'s dtype, weak like ``x`` (so it never changes ``x``'s type)."""
    a = to_aval(x)
    if not a.weak_type:
        return np.asarray(v, a.dtype)
    if type(v) in (int, float, complex) and a.dtype == dtypes.python_scalar_dtype(v):
        return v
    if a.dtype == dtypes.default_dtype(2) and type(v) in (bool, int):
        return float(v)
    if a.dtype == dtypes.default_dtype(3) and type(v) in (bool, int, float):
        return complex(v)
    return ew.convert_element_type(v, a.dtype, True)


def strong(x: Any, v: Any) -> Any:
    """A strong 0-d constant of ``x``'s dtype (``jnp``'s ``_constant_like``: makes the result
    strong even for weakly typed ``x``)."""
    return np.asarray(v, to_aval(x).dtype)


def lax_const(x: Any, v: Any) -> Any:
    """JAX's ``lax._const``: a weak Python scalar for a weakly typed 0-d ``x`` of its kind's
    default dtype, a strong 0-d constant of ``x``'s dtype otherwise."""
    a = to_aval(x)
    if a.weak_type and a.ndim == 0 and a.dtype == dtypes.default_dtype(dtypes.kind(a.dtype)):
        return {1: int, 2: float, 3: complex}[dtypes.kind(a.dtype)](v)
    return np.asarray(v, a.dtype)


def select(pred: Any, on_false: Any, on_true: Any) -> Any:
    """``select_n`` with 0-d cases (and predicate) broadcast to the widest operand's shape
    (the operands of a composite are broadcast already, constants are 0-d)."""
    shape = max((to_aval(v).shape for v in (pred, on_false, on_true)), key=len)
    pred, on_false, on_true = (
        sh.broadcast_in_dim(v, shape, ()) if shape and not to_aval(v).shape else v
        for v in (pred, on_false, on_true)
    )
    return ew.select_n(pred, on_false, on_true)


def signbit_float(x: Any) -> Any:
    """Whether a float's sign bit is set (True for -0.0: ``1 / x`` is -inf there)."""
    zero = ew.eq(x, like(x, 0))
    inv = ew.div(like(x, 1), select(zero, like(x, 1), x))
    return ew.bitwise_or(ew.lt(x, like(x, 0)), ew.bitwise_and(zero, ew.lt(inv, like(x, 0))))


# ------------------------------------------------------------------ unary

_LN2 = math.log(2.0)

exp2 = Composite(
    "exp2",
    lambda x: ew.exp(ew.mul(x, like(x, _LN2))),
    public=("lax", "numpy"),
    doc="Elementwise ``2 ** x``",
    docs={"numpy": "``2 ** x``"},
    domains=((-2.0, 2.0),),
    torch=TorchForm("Exp2Backward0", saves="result", special=("exp2",)),
)
log2 = Composite(
    "log2",
    lambda x: ew.div(ew.log(x), strong(x, _LN2)),
    public=("numpy",),
    doc="Base-2 log",
    domains=((0.5, 3.0),),
    torch=TorchForm("Log2Backward0"),
)
log10 = Composite(
    "log10",
    lambda x: ew.mul(ew.log(x), strong(x, 0.4342944819032518)),
    public=("numpy",),
    doc="Base-10 log",
    domains=((0.5, 3.0),),
    torch=TorchForm("Log10Backward0"),
)
reciprocal = Composite(
    "reciprocal",
    lambda x: ew.integer_pow(x, -1),
    public=("lax", "numpy"),
    doc="Elementwise ``1 / x``",
    domains=((0.5, 2.0),),
    torch=TorchForm("ReciprocalBackward0", saves="result"),
)
deg2rad = Composite(
    "deg2rad",
    lambda x: ew.mul(x, lax_const(x, math.pi / 180.0)),
    public=("numpy", "numpy:radians"),
    doc="Degrees to radians",
    domains=((-2.0, 2.0),),
    torch=TorchForm(
        "Deg2RadBackward0",
        complex_error=(RuntimeError, "deg2rad is not supported for complex tensors."),
    ),
)
rad2deg = Composite(
    "rad2deg",
    lambda x: ew.mul(x, lax_const(x, 180.0 / math.pi)),
    public=("numpy", "numpy:degrees"),
    doc="Radians to degrees",
    domains=((-2.0, 2.0),),
    torch=TorchForm(
        "Rad2DegBackward0",
        complex_error=(RuntimeError, "rad2deg is not supported for complex tensors."),
    ),
)
i0 = Composite(
    "i0",
    lambda x: ew.mul(ew.exp(ew.abs(x)), special.bessel_i0e(x)),
    public=("numpy", "scipy.special"),
    doc="Modified Bessel function of the first kind, order 0.",
    numpy_complex="type",
    domains=((-2.0, 2.0),),
    torch=TorchForm("I0Backward0", special=("i0",)),
)

square = Composite(
    "square",
    lambda x: ew.integer_pow(x, 2),
    public=("lax", "numpy"),
    doc="Elementwise ``x * x``",
    docs={"numpy": "Elementwise ``x * x`` (bool → int32)."},
    numpy="numeric",
    domains=((-2.0, 2.0),),
)
trunc = Composite(
    "trunc",
    lambda x: select(ew.lt(x, lax_const(x, 0)), ew.floor(x), ew.ceil(x)),
    public=("numpy",),
    doc="Round toward zero (identity on integers and bools)",
    numpy="float_or_id",
    domains=((-2.0, 2.0),),
    torch=TorchForm(
        "TruncBackward0",
        aliases=("fix",),
        promote="keep",
        bool_error=(NotImplementedError, "\"trunc_vml_cpu\" not implemented for 'Bool'"),
        complex_error="trunc is not supported for complex inputs",
    ),
)


def _signbit(x: Any) -> Any:
    a = to_aval(x)
    if a.dtype == np.bool_:  # (no sign bit)
        return sh.full(a.shape, False, np.dtype(np.bool_))
    return signbit_float(x) if dtypes.is_inexact(a.dtype) else ew.lt(x, like(x, 0))


# ------------------------------------------------------------------ class tests (bool results)


def _all(x: Any, value: bool) -> Any:
    return sh.full(to_aval(x).shape, value, np.dtype(np.bool_))


def _kind(x: Any) -> int:
    """0 bool, 1 integer, 2 real float, 3 complex (``dtypes.kind``)."""
    return dtypes.kind(to_aval(x).dtype)


def _isnan(x: Any) -> Any:
    return ew.ne(x, x) if _kind(x) >= 2 else _all(x, False)


def _isinf(x: Any) -> Any:
    if _kind(x) == 3:
        return ew.bitwise_or(_isinf(ew.real(x)), _isinf(ew.imag(x)))
    return ew.eq(ew.abs(x), strong(x, np.inf)) if _kind(x) == 2 else _all(x, False)


def _isfinite(x: Any) -> Any:
    if _kind(x) == 3:
        return ew.bitwise_and(ew.is_finite(ew.real(x)), ew.is_finite(ew.imag(x)))
    return ew.is_finite(x) if _kind(x) == 2 else _all(x, True)


def _isreal(x: Any) -> Any:  # (NaN imaginary parts are not zero: False)
    if _kind(x) == 3:
        im = ew.imag(x)
        return ew.eq(im, strong(im, 0))
    return _all(x, True)


def _is_signed_inf(sign: float) -> Any:
    return lambda x: ew.eq(x, like(x, sign * np.inf)) if _kind(x) == 2 else _all(x, False)


def _class_test(
    name: str,
    fn: Any,
    doc: str,
    complex_error: str | tuple[type, str] | None = None,
    errors_as: str | None = None,
    bool_error: str | None = None,
    same: bool = False,
) -> Composite:
    """A test of each element's class: any dtype (``numpy="as_is"``: integers and bools
    have no NaN, infinity or sign bit), a bool result; PyTorch's form has no node or
    in-place form. ``complex_error``: PyTorch's refusal of a complex tensor (the numpy form
    refuses it too, with ``jnp``'s ``ValueError``); ``errors_as``: the name the numpy
    form's operand errors give (``isreal``'s are ``imag``'s, the function JAX's calls).
    ``positive`` is such a row too, though no test: ``bool_error``, ``same``
    (:class:`~funcgrad.core.primitive.TorchForm`'s)."""
    return Composite(
        name,
        fn,
        public=("numpy",),
        doc=doc,
        numpy="as_is",
        numpy_complex="value" if complex_error else None,
        numpy_errors_as=errors_as,
        domains=((-2.0, 2.0),),
        torch=TorchForm(
            None,
            promote="keep",
            inplace=False,
            inplace_function=False,
            complex_error=complex_error,
            bool_error=bool_error,
            same=same,
        ),
    )


isnan = _class_test("isnan", _isnan, "Elementwise NaN test.")
isinf = _class_test("isinf", _isinf, "Elementwise test for positive or negative infinity.")
isfinite = _class_test(
    "isfinite", _isfinite, "Elementwise finiteness (True for integers and bools)."
)
isposinf = _class_test(
    "isposinf",
    _is_signed_inf(1.0),
    "Elementwise test for +inf.",
    (RuntimeError, "isposinf does not support complex inputs."),
)
isneginf = _class_test(
    "isneginf",
    _is_signed_inf(-1.0),
    "Elementwise test for -inf.",
    (RuntimeError, "isneginf does not support complex inputs."),
)
isreal = _class_test("isreal", _isreal, "Elementwise: a zero imaginary part.", errors_as="imag")
signbit = _class_test(
    "signbit",
    _signbit,
    "Whether the sign bit is set (True for -0.0; False for bools).",
    "signbit is not implemented for complex tensors.",
)

#: (PyTorch's ``positive`` is its input itself, and refuses bools: NumPy's returns them)
positive = _class_test(
    "positive",
    lambda x: x,
    "``+x``",
    bool_error="The `+` operator, on a bool tensor is not supported.",
    same=True,
)

fabs = Composite(
    "fabs",
    ew.abs,
    public=("numpy",),
    doc="Absolute value as a float",
    numpy_complex="type",
    domains=((-2.0, 2.0),),
)

# ------------------------------------------------------------------ binary


def _wrapped(a: Any, half: float) -> Any:
    """``a`` wrapped into ``[-half, half)`` (an angle's principal value)."""
    r = ew.rem(ew.add(a, lax_const(a, half)), lax_const(a, 2 * half))
    r = select(ew.lt(r, lax_const(r, 0)), r, ew.add(r, lax_const(r, 2 * half)))
    return ew.sub(r, lax_const(r, half))


def _logaddexp(x: Any, y: Any) -> Any:
    if dtypes.kind(to_aval(x).dtype) == 3:
        # the operand of larger real part plus the log1p of the other's exp relative to it
        # (a select, not ``max``: no derivative of a complex comparison), the imaginary
        # part wrapped into [-pi, pi), as JAX's
        first_lower = ew.lt(ew.real(x), ew.real(y))
        hi, lo = select(first_lower, x, y), select(first_lower, y, x)
        out = ew.add(hi, ew.log1p(ew.exp(ew.sub(lo, hi))))
        return ew.make_complex(ew.real(out), _wrapped(ew.imag(out), math.pi))
    m = ew.max(x, y)
    delta = ew.sub(x, y)
    res = ew.add(m, ew.log1p(ew.exp(ew.neg(ew.abs(delta)))))
    return select(_same_infinity(x, y, delta), res, ew.add(x, y))


def _same_infinity(x: Any, y: Any, delta: Any) -> Any:
    """Where ``x`` and ``y`` are the same infinity (``x - y`` is NaN, yet ``x == y``):
    the log-add-exps are ``x + y`` there. A NaN operand stays on the main formula, whose
    value and derivative are NaN, as JAX's."""
    return ew.bitwise_and(ew.ne(delta, delta), ew.eq(x, y))


def _logaddexp2(x: Any, y: Any) -> Any:
    m = ew.max(x, y)
    delta = ew.sub(x, y)
    exp2_ = ew.exp(ew.mul(ew.neg(ew.abs(delta)), like(delta, _LN2)))
    res = ew.add(m, ew.mul(lax_const(m, 1 / _LN2), ew.log1p(exp2_)))
    return select(_same_infinity(x, y, delta), res, ew.add(x, y))


def _hypot(x: Any, y: Any) -> Any:
    x, y = ew.abs(x), ew.abs(y)
    inf = ew.bitwise_or(ew.eq(x, strong(x, np.inf)), ew.eq(y, strong(y, np.inf)))
    hi, lo = ew.max(x, y), ew.min(x, y)
    is0 = ew.eq(hi, strong(hi, 0))
    ratio = ew.div(lo, select(is0, hi, like(hi, 1)))
    r = select(is0, ew.mul(hi, ew.sqrt(ew.add(like(hi, 1), ew.integer_pow(ratio, 2)))), hi)
    return select(inf, r, lax_const(r, np.inf))


def _copysign(x: Any, y: Any) -> Any:
    ax = ew.abs(x)
    return select(signbit_float(y), ax, ew.neg(ax))


def _fmax(x: Any, y: Any) -> Any:  # (NaN only where both are: y's NaN loses to x)
    return select(ew.bitwise_or(ew.gt(x, y), ew.ne(y, y)), y, x)


def _fmin(x: Any, y: Any) -> Any:
    return select(ew.bitwise_or(ew.lt(x, y), ew.ne(y, y)), y, x)


def _heaviside(x: Any, h0: Any) -> Any:
    zero, one = lax_const(x, 0), lax_const(x, 1)
    mid = select(ew.ne(x, x), h0, x)  # NaN stays NaN
    return select(ew.lt(x, zero), select(ew.gt(x, zero), mid, one), zero)


_FLOAT2 = ((-2.0, 2.0), (-2.0, 2.0))

logaddexp = Composite(
    "logaddexp",
    _logaddexp,
    arity=2,
    public=("numpy",),
    doc="``log(exp(x) + exp(y))`` computed stably",
    domains=_FLOAT2,
    torch=TorchForm("LogaddexpBackward0", inplace=False, inplace_function=False),
)
logaddexp2 = Composite(
    "logaddexp2",
    _logaddexp2,
    arity=2,
    public=("numpy",),
    doc="``log2(2**x + 2**y)`` computed stably",
    domains=_FLOAT2,
    torch=TorchForm(
        "Logaddexp2Backward0",
        inplace=False,
        inplace_function=False,
        complex_error="\"logaddexp2_cpu\" not implemented for '{dtype}'",
    ),
)
hypot = Composite(
    "hypot",
    _hypot,
    arity=2,
    public=("numpy",),
    doc="``sqrt(x**2 + y**2)`` without overflow",
    numpy_complex="value",
    domains=((0.5, 2.0), (0.5, 2.0)),
    torch=TorchForm("HypotBackward0", inplace_function=False),
)
copysign = Composite(
    "copysign",
    _copysign,
    arity=2,
    public=("numpy",),
    doc="Magnitude of ``x`` with the sign of ``y``",
    domains=_FLOAT2,
    torch=TorchForm(
        "CopysignBackward0",
        inplace_function=False,
        complex_error="\"copysign_cpu\" not implemented for '{dtype}'",
    ),
)


def _nan_ignoring(name: str, fn: Any, what: str, errors_as: str) -> Composite:
    """``fmax``/``fmin``: keyword operands ``x1``, ``x2`` (``jnp``'s are a function's),
    dtypes kept; PyTorch has no in-place form and refuses complex tensors."""
    return Composite(
        name,
        fn,
        arity=2,
        public=("numpy",),
        doc=f"Elementwise {what} ignoring NaNs (NaN only where both are NaN).",
        numpy="keep",
        numpy_keywords=True,
        numpy_errors_as=errors_as,
        domains=_FLOAT2,
        torch=TorchForm(
            f"{name.capitalize()}Backward0",
            promote="result_type",
            inplace=False,
            inplace_function=False,
            complex_error=(RuntimeError, f"{name} not implemented for complex tensors."),
        ),
    )


fmax = _nan_ignoring("fmax", _fmax, "maximum", "greater")
fmin = _nan_ignoring("fmin", _fmin, "minimum", "less")

#: (no ``torch=``: PyTorch's ``heaviside`` is another function, which compat writes: NaN
#: gives 0, where NumPy's keeps NaN; operands of one dtype, kept; ``values`` a tensor)
heaviside = Composite(
    "heaviside",
    _heaviside,
    arity=2,
    public=("numpy",),
    doc="0 for x < 0, ``h0`` at 0, 1 for x > 0",
    domains=_FLOAT2,
)


# ------------------------------------------------------------------ integer-aware division


def _inexact(x: Any) -> bool:
    return dtypes.is_inexact(to_aval(x).dtype)


def _no_zero(y: Any) -> Any:
    """Integer divisors with 0 replaced by 1 (``jnp``: ``x % 0 == 0`` for integers)."""
    return select(ew.eq(y, strong(y, 0)), y, like(y, 1))


def _remainder(x: Any, y: Any) -> Any:
    if not _inexact(y):
        y = _no_zero(y)
    r = ew.rem(x, y)
    zero = strong(r, 0)
    fix = ew.bitwise_and(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, zero)))
    return select(fix, r, ew.add(r, y))


def float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    """``(floor(x / y), x mod y)`` of floats, exact where ``floor(x / y)`` is not."""
    mod = ew.rem(x, y)
    div = ew.div(select(ew.eq(y, like(y, 0)), ew.sub(x, mod), x), y)
    ind = ew.bitwise_and(ew.ne(mod, like(mod, 0)), ew.ne(ew.sign(y), ew.sign(mod)))
    mod = select(ind, mod, ew.add(mod, y))
    div = select(ind, div, ew.sub(div, like(div, 1)))
    return ew.round(div), mod


def _floor_divide(x: Any, y: Any) -> Any:
    if _inexact(x):
        return float_divmod(x, y)[0]
    if to_aval(x).dtype.kind == "u":
        return ew.div(x, y)
    # the truncating quotient, minus one where the signs differ and the division is inexact
    q = ew.div(x, y)
    adjust = ew.bitwise_and(ew.ne(ew.sign(x), ew.sign(y)), ew.ne(ew.rem(x, y), strong(x, 0)))
    return select(adjust, q, ew.sub(q, like(q, 1)))


_DIVISOR = ((0.5, 3.0), (0.5, 3.0))

remainder = Composite(
    "remainder",
    _remainder,
    arity=2,
    public=("numpy", "numpy:mod"),
    doc="``x % y`` with the sign of ``y``",
    numpy="numeric",
    domains=_DIVISOR,
    torch=TorchForm(
        "RemainderBackward1",
        promote="result_type",
        inplace_function=False,
        scalar_other="RemainderBackward0",
        scalar_input="torch::autograd::NotImplemented",  # (no derivative: its backward raises)
        number_first=True,
        complex_error="\"remainder_cpu\" not implemented for '{dtype}'",
    ),
)
floor_divide = Composite(
    "floor_divide",
    _floor_divide,
    arity=2,
    public=("numpy",),
    doc="Elementwise ``x // y`` (rounds toward -inf)",
    numpy="numeric",
    domains=_DIVISOR,
)


def _right_shift(x: Any, y: Any) -> Any:
    signed = np.issubdtype(to_aval(x).dtype, np.signedinteger)
    p = bits.shift_right_arithmetic_p if signed else bits.shift_right_logical_p
    return p.bind(x, y)


right_shift = Composite(
    "right_shift",
    _right_shift,
    arity=2,
    public=("numpy", "numpy:bitwise_right_shift"),
    doc="Elementwise ``x1 >> x2``: arithmetic for signed, logical for unsigned integers.",
    numpy="int",
    domains=None,
    torch=TorchForm(
        None,
        name="bitwise_right_shift",
        promote="result_type",
        inplace_function=False,
        kernel="rshift",
        number_first=True,
    ),
)


# ------------------------------------------------------------------ ternary


def _clamp(lo: Any, x: Any, hi: Any) -> Any:
    """``min(max(lo, x), hi)`` with ``lax.clamp``'s derivatives (JAX's): ``x``'s where
    ``lo < x < hi``, ``lo``'s where ``x < lo < hi``, ``hi``'s where ``hi < x``, none elsewhere
    (at a bound, or NaN); ``lo`` and ``hi`` are 0-d or of ``x``'s shape."""
    shape = to_aval(x).shape
    lo, hi = (sh.broadcast_in_dim(v, shape, ()) if not to_aval(v).shape else v for v in (lo, hi))
    value = calls.stop_gradient_p.bind(ew.min(ew.max(lo, x), hi))
    inner = ew.bitwise_and(ew.gt(x, lo), ew.lt(x, hi))
    to_lo = ew.bitwise_and(ew.gt(lo, x), ew.lt(lo, hi))
    res = ew.select_n(ew.lt(hi, x), value, hi)
    return ew.select_n(inner, ew.select_n(to_lo, res, lo), x)


#: ``lax.clamp(min, x, max)``, numpy's ``clip`` and PyTorch's ``clamp``/``clip``: one op
#: whose derivative at a bound each library defines its own way, which the row says:
#: lax's form is ``_clamp`` (none at a bound); numpy's (``numpy="bounds"``: either bound
#: optional, by two names) applies numpy's ``maximum`` and then ``minimum``, as
#: ``jnp.clip`` does (half to each at a tie); PyTorch's includes the bounds (``x``'s
#: derivative where ``lo <= x <= hi``, none where ``lo > hi``), compat's own function
#: (``compat/_core/ops/clamping.py``), which reads its names and nodes here (all-tensor
#: bounds ``ClampBackward0``, number bounds ``ClampBackward1``)
clamp = Composite(
    "clamp",
    _clamp,
    arity=3,
    public=("lax", "numpy:clip"),
    doc="``x`` clipped into ``[min, max]``",
    docs={"numpy": "Clamp ``a`` to ``[min, max]`` (either bound may be ``None``)"},
    numpy="bounds",
    operands=("min", "x", "max"),
    domains=((-2.0, -0.5), (-2.0, 2.0), (0.5, 2.0)),
    torch=TorchForm("ClampBackward0", aliases=("clip",), scalar_other="ClampBackward1"),
)
