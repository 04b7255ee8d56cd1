"""The unary row declaration (``_unary``), the unary primitives the binary rules use
(``neg``, ``abs``, ``sign``, rounding, ``not``, ``is_finite``), binary arithmetic,
comparisons, bitwise operations and ``integer_pow``. The transcendental functions
(``exp``, ``log``, trigonometric, ``sqrt``, ...) are in ``transcendental.py``.

Binary primitives take operands of one dtype and one shape; 0-d operands
broadcast (as in ``jax.lax``), and weakly typed scalars take the other
operand's dtype. ``funcgrad.numpy`` does NumPy broadcasting and promotion
before binding them.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np
from jax import lax

from funcgrad import taylor
from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive, TorchForm
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import rules
from funcgrad.primitives.elementwise.base import (
    _binary_aval,
    _check_dtype,
    _examples_binary,
    _examples_unary,
    _lower_nary,
    _unary_aval,
    declare,
    host_div,
    host_integer_pow,
    host_rem,
    vectorized_batch,
)
from funcgrad.primitives.elementwise.convert import convert_element_type, unbroadcast
from funcgrad.primitives.elementwise.selection import select_n
from funcgrad.primitives.rules import rand

FAMILY = "elementwise"


# --------------------------------------------------------------------------- unary


def _unary(
    name: str,
    lower: Callable,
    deriv: Callable[[Any, Any], Any] | None,
    *,
    allowed: str = "inexact",
    lo: float = -2.0,
    hi: float = 2.0,
    smooth: bool = True,
    host: Callable | None = None,
    doc: str | None = None,
    docs: dict[str, str] | None = None,
    public: tuple[str, ...] = (),
    numpy: str = "inexact",
    complex_domain: tuple[float, float] | None = None,
    torch: TorchForm | None = None,
) -> Primitive:
    """Declare a unary elementwise primitive; ``deriv(x, y)`` is dy/dx.

    ``lo``/``hi`` is its input domain (the tests of every form draw from it; none for
    integer and bool primitives), ``complex_domain`` that of its complex examples
    (holomorphic rules), ``host`` its host-tier rule, and ``public`` the public forms
    generated from it, each ``"namespace"`` (named as the primitive) or
    ``"namespace:name"``, with ``doc`` their docstring's first words (``docs``: a
    namespace's own) and ``numpy`` how the numpy form prepares its operand
    (``Primitive.numpy_promotion``); ``torch`` its PyTorch form (compat's op).
    """
    p = Primitive(name, family=FAMILY, differentiable=deriv is not None)
    p.abstract_eval = _unary_aval(name, allowed)
    p.lower = lower
    p.complex_domain = complex_domain
    p.allowed = allowed  # the operand dtypes the abstract eval takes (compat reads it)
    domain = None if allowed == "intbool" else (lo, hi)
    declare(
        p, domain=domain, host=host, doc=doc, docs=docs, public=public, numpy=numpy, torch=torch
    )
    rules.def_vectorized_unary(p)
    if deriv is not None:

        def jvp(primals: list, tangents: list) -> tuple:
            (x,), (t,) = primals, tangents
            y = p.bind(x)
            return y, mul(t, deriv(x, y))

        def vjp(ct: Any, x: Any, *, out: Any) -> tuple:
            return (mul(ct, deriv(x, out)),)

        p.jvp = jvp
        p.vjp = vjp
    if allowed in ("inexact", "real_float", "num", "signed"):
        p.examples = _examples_unary(lo, hi, smooth)
    return p


def _full_like(x: Any, v: float) -> Any:
    aval = to_aval(x)
    return np.asarray(v, aval.dtype) if aval.ndim == 0 else _bcast_scalar(v, aval)


def _bcast_scalar(v: float, aval: Aval) -> Any:
    return rules.broadcast(np.asarray(v, dtypes.canonicalize(aval.dtype)), aval.shape, ())


def _c(x: Any, v: float) -> Any:
    """A scalar constant of ``x``'s dtype (0-d operands broadcast in binary ops)."""
    return np.asarray(v, to_aval(x).dtype)


def _host_sign(x: Any) -> Any:
    """XLA's sign: ``z / |z|`` for complex (NaN parts for infinite ``z``, 0 at 0)."""
    if np.iscomplexobj(x):
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a))
    return np.sign(x)


neg_p = _unary(
    "neg",
    lax.neg,
    lambda x, y: _c(x, -1.0),
    allowed="num",
    complex_domain=(-2.0, 2.0),
    host=np.negative,
    doc="Elementwise ``-x``",
    public=("lax", "numpy:negative"),
    numpy="keep",
    torch=TorchForm(
        "NegBackward0",
        aliases=("negative",),
        promote="keep",
        bool_error="Negation, the `-` operator, on a bool tensor is not supported. If you "
        "are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
    ),
)
# abs: d|x|/dx = sign(x) (0 at 0, as JAX and PyTorch); complex |z|'s rules: complex.py.
# lax.abs rejects unsigned integers and bools, numpy's absolute returns them (id_unsigned)
abs_p = _unary(
    "abs",
    lax.abs,
    lambda x, y: sign(x),
    allowed="signed",
    smooth=False,
    host=np.abs,
    doc="Elementwise absolute value (magnitude for complex)",
    docs={"numpy": "Elementwise absolute value"},
    public=("lax", "numpy:absolute", "numpy:abs"),
    numpy="id_unsigned",
    torch=TorchForm(
        "AbsBackward0",
        aliases=("absolute",),
        promote="keep",
        inplace_function=("abs",),
        bool_error=(NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    ),
)
sign_p = _unary(
    "sign",
    lax.sign,
    None,
    allowed="num",
    host=_host_sign,
    doc="Elementwise sign (-1, 0 or 1)",
    public=("lax", "numpy"),
    numpy="keep",
    torch=TorchForm(
        "SignBackward0",
        promote="keep",
        inplace_function=False,
        complex_error="Unlike NumPy, torch.sign is not intended to support complex numbers."
        " Please use torch.sgn instead.",
        nan_value=0.0,
        bool_kept=True,
    ),
)
floor_p = _unary(
    "floor",
    lax.floor,
    None,
    allowed="real_float",
    host=np.floor,
    doc="Elementwise floor",
    docs={"numpy": "Round down (identity on integers and bools)"},
    public=("lax", "numpy"),
    numpy="float_or_id",
    torch=TorchForm(
        "FloorBackward0",
        promote="keep",
        bool_error=(NotImplementedError, "\"floor_vml_cpu\" not implemented for 'Bool'"),
    ),
)
ceil_p = _unary(
    "ceil",
    lax.ceil,
    None,
    allowed="real_float",
    host=np.ceil,
    doc="Elementwise ceiling",
    docs={"numpy": "Round up (identity on integers and bools)"},
    public=("lax", "numpy"),
    numpy="float_or_id",
    torch=TorchForm(
        "CeilBackward0",
        promote="keep",
        bool_error=(NotImplementedError, "\"ceil_vml_cpu\" not implemented for 'Bool'"),
    ),
)
# (lax's round (rounding_method=), numpy's round/rint and torch's (decimals=) are written
# in their namespaces; the torch form here gives compat's its nodes)
round_p = _unary(
    "round",
    lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    None,
    allowed="real_float",
    host=np.rint,
    torch=TorchForm("RoundBackward0", promote="keep", scalar_other="RoundBackward1"),
)
not_p = _unary(
    "not",
    lax.bitwise_not,
    None,
    allowed="intbool",
    host=np.invert,
    doc="Elementwise bitwise NOT (logical for bool)",
    docs={"numpy": "Bitwise not (logical not for bools)"},
    public=(
        "lax:bitwise_not",
        "numpy:invert",
        "numpy:bitwise_not",
        "numpy:bitwise_invert",
        "numpy:logical_not=logical",
    ),
    numpy="intbool",
)

is_finite_p = Primitive("is_finite", family=FAMILY, differentiable=False)


@is_finite_p.def_abstract_eval
def _is_finite_abstract_eval(x: Aval) -> Aval:
    _check_dtype("is_finite", x, "real_float")
    return Aval(x.shape, np.dtype("bool"))


is_finite_p.lower = lax.is_finite
rules.def_vectorized_unary(is_finite_p)
declare(
    is_finite_p,
    domain=(-2.0, 2.0),
    host=np.isfinite,
    doc="Elementwise ``True`` where finite",
    public=("lax",),
)


def neg(x: Any) -> Any:
    return bind(neg_p, x)


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
    lo: float = -2.0,
    hi: float = 2.0,
    lo2: float | None = None,
    hi2: float | None = None,
    smooth: bool = True,
    host: Callable | None = None,
    doc: str | None = None,
    docs: dict[str, str] | None = None,
    public: tuple[str, ...] = (),
    numpy: str = "keep",
    numpy_bool: str | None = None,
    torch: TorchForm | None = None,
    operands: tuple[str, str] | None = None,
) -> Primitive:
    """Declare a binary elementwise primitive (its derivative rules: ``_binary_ad``).

    ``lo``/``hi`` is its operands' input domain (``lo2``/``hi2`` the second's where it
    differs; none for integer and bool primitives), from which its examples are drawn;
    ``host`` its host-tier rule (NumPy's function, on operands cast to one dtype);
    ``public``, ``doc`` and ``docs`` its public forms as ``_unary``'s. Where NumPy's
    semantics differ from the primitive's, the row says how: ``numpy`` is how the numpy
    form promotes its operands (``"keep"``: JAX's promotion; ``"inexact"``: to a float;
    ``"intbool"``: integers and bools only; ``"int"``: bools to integers, then integers
    only) and ``numpy_bool`` what it does with bool operands (``"error"``, or the
    primitive bound instead: ``add`` is ``or`` on bools); ``torch`` its PyTorch names;
    ``operands`` the lax and ``scipy.special`` forms' parameter names (``a``, ``x``).
    Both forms broadcast: numpy by NumPy's rules, lax JAX 0.10's (equal ranks, size-1
    dimensions and 0-d operands broadcast).
    """
    p = Primitive(name, family=FAMILY, differentiable=differentiable)
    p.abstract_eval = _binary_aval(name, allowed, out_dtype)
    p.lower = _lower_nary(lower, name)
    p.batch = vectorized_batch(p)
    p.host_join = host is not None
    p.host_broadcasts = host is not None  # (lax's size-1 broadcasting: NumPy's too)
    p.allowed = allowed  # (as ``_unary``'s: compat derives its real-only refusal from it)
    second = (lo if lo2 is None else lo2, hi if hi2 is None else hi2)
    domains = None if allowed in ("intbool", "int") else ((lo, hi), second)
    declare(
        p,
        domains=domains,
        host=host,
        doc=doc,
        docs=docs,
        public=public,
        numpy=numpy,
        numpy_bool=numpy_bool,
        arity=2,
        torch=torch,
        operands=operands,
    )
    if allowed in ("num", "inexact", "real_float"):
        p.examples = _examples_binary(lo, hi, smooth, *second)
    return p


add_p = _binary(
    "add",
    lax.add,
    host=np.add,
    doc="Elementwise ``x + y``",
    public=("lax", "numpy"),
    numpy_bool="or",
    torch=TorchForm("AddBackward0", promote="result_type", number_first=True),
)
sub_p = _binary(
    "sub",
    lax.sub,
    host=np.subtract,
    doc="Elementwise ``x - y``",
    public=("lax", "numpy:subtract"),
    numpy_bool="error",
    torch=TorchForm(
        "SubBackward0", aliases=("subtract",), promote="result_type", number_first=True
    ),
)
# (lax.mul is written in funcgrad.lax: its out_dtype= widens the operands first)
mul_p = _binary(
    "mul",
    lax.mul,
    host=np.multiply,
    doc="Elementwise ``x * y``",
    public=("numpy:multiply",),
    numpy_bool="and",
    torch=TorchForm(
        "MulBackward0", aliases=("multiply",), promote="result_type", number_first=True
    ),
)
mul_p.jet = taylor.bilinear_jet(mul_p)  # (Leibniz's rule)
div_p = _binary(
    "div",
    lax.div,
    lo2=0.5,
    hi2=2.0,
    host=host_div,
    doc="Elementwise ``x / y`` (rounds toward zero for integers)",
    docs={"numpy": "Elementwise ``x / y`` in floating point"},
    public=("lax", "numpy:true_divide", "numpy:divide"),
    numpy="inexact",
    torch=TorchForm("DivBackward0", aliases=("divide", "true_divide"), number_first=True),
)
div_p.jet = taylor.quotient_jet(div_p)
# (numpy's remainder/mod/fmod round or fix signs: composites in funcgrad.numpy)
rem_p = _binary(
    "rem",
    lax.rem,
    lo=0.1,
    hi=3.0,
    lo2=0.7,
    hi2=1.3,
    smooth=False,
    host=host_rem,
    doc="Elementwise remainder with the sign of ``x`` (C's ``fmod``)",
    public=("lax",),
    torch=TorchForm(
        "FmodBackward1",
        name="fmod",
        promote="result_type",
        scalar_other="FmodBackward0",
        complex_error="\"fmod_cpu\" not implemented for '{dtype}'",
    ),
)
# (lax's and numpy's power, with integer exponents, are in their namespaces; torch's pow here)
pow_p = _binary(
    "pow",
    lax.pow,
    allowed="inexact",
    lo=0.5,
    hi=2.0,
    host=np.power,
    doc="Elementwise ``x ** y``",
    docs={"numpy": "``x ** y`` in floating point"},
    public=("numpy:float_power",),
    numpy="inexact",
    torch=TorchForm(
        "PowBackward1",
        promote="result_type",
        scalar_other="PowBackward0",
        scalar_input="PowBackward2",
        number_first=True,
    ),
)


def _extremum(name: str, lower: Callable, host: Callable, numpy_bool: str) -> Primitive:
    word = f"{name}imum"
    return _binary(
        name,
        lower,
        smooth=False,
        host=host,
        doc=f"Elementwise {word} (NaN-propagating)",
        docs={"numpy": f"Elementwise {word}"},
        public=("lax", f"numpy:{word}"),
        numpy_bool=numpy_bool,
        torch=TorchForm(
            f"{word.capitalize()}Backward0",
            name=word,
            promote="result_type",
            complex_error=(RuntimeError, f"{word} not implemented for complex tensors."),
        ),
    )


max_p = _extremum("max", lax.max, np.maximum, "or")
min_p = _extremum("min", lax.min, np.minimum, "and")
atan2_p = _binary(
    "atan2",
    lax.atan2,
    allowed="real_float",
    lo=0.5,
    hi=2.0,
    host=np.arctan2,
    doc="Elementwise ``atan(x / y)`` in the right quadrant",
    docs={"numpy": "Elementwise ``arctan(x / y)`` in the right quadrant"},
    public=("lax", "numpy:arctan2", "numpy:atan2"),
    numpy="inexact",
    torch=TorchForm("Atan2Backward0", aliases=("arctan2",)),
)


def _bitwise(name: str, lower: Callable, host: Callable, op: str) -> Primitive:
    # (numpy's logical_and/or/xor test their operands against zero first: "=logical")
    return _binary(
        name,
        lower,
        allowed="intbool",
        differentiable=False,
        host=host,
        doc=f"Elementwise bitwise {op.upper()}",
        docs={"numpy": f"Bitwise {op}"},
        public=(f"lax:bitwise_{op}", f"numpy:bitwise_{op}", f"numpy:logical_{op}=logical"),
        numpy="intbool",
        torch=TorchForm(None, name=f"bitwise_{op}", promote="result_type", number_first=True),
    )


def _comparison(name: str, lower: Callable, host: Callable, op: str, numpy: str) -> Primitive:
    return _binary(
        name,
        lower,
        allowed="any" if name in ("eq", "ne") else "ordered",
        out_dtype="bool",
        differentiable=False,
        host=host,
        doc=f"Elementwise ``x {op} y``",
        public=("lax", f"numpy:{numpy}"),
        # (torch.equal is not eq: it compares whole tensors)
        torch=TorchForm(None, aliases=(numpy,) if name != "eq" else (), promote="result_type"),
    )


and_p = _bitwise("and", lax.bitwise_and, np.bitwise_and, "and")
or_p = _bitwise("or", lax.bitwise_or, np.bitwise_or, "or")
xor_p = _bitwise("xor", lax.bitwise_xor, np.bitwise_xor, "xor")
eq_p = _comparison("eq", lax.eq, np.equal, "==", "equal")
ne_p = _comparison("ne", lax.ne, np.not_equal, "!=", "not_equal")
lt_p = _comparison("lt", lax.lt, np.less, "<", "less")
le_p = _comparison("le", lax.le, np.less_equal, "<=", "less_equal")
gt_p = _comparison("gt", lax.gt, np.greater, ">", "greater")
ge_p = _comparison("ge", lax.ge, np.greater_equal, ">=", "greater_equal")


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
    return rules.broadcast(t, aval.shape, ())


def _select_mask(mask: Any, z: Any) -> Any:
    return convert_element_type(mask, to_aval(z).dtype)


def _sel(pred: Any, on_false: Any, on_true: Any) -> Any:
    """``select_n`` broadcasting 0-d cases to the others' shape."""
    shape = builtins.max((to_aval(v).shape for v in (pred, on_false, on_true)), key=len)

    def fit(v: Any) -> Any:
        a = to_aval(v)
        if a.shape == shape:
            return v
        return rules.broadcast(v, shape, ())

    return select_n(fit(pred), fit(on_false), fit(on_true))


def _pow_dx(x: Any, y: Any, z: Any) -> Any:
    # y * x**(y-1), with no special case (JAX's rule for a float exponent): the
    # derivative is a smooth function of (x, y), so the mixed second derivatives
    # agree with ∂/∂x of _pow_dy (at y == 0 too)
    return mul(y, pow(x, sub(y, _c(y, 1.0))))


def _pow_dy(x: Any, y: Any, z: Any) -> Any:
    # log(x) * x**y with log(1) substituted at x == 0 (JAX's _replace_zero): 0 there
    x_is_0 = eq(x, _c(x, 0.0))
    # (log is bound by name: its row, in transcendental.py, is built on this module)
    return mul(rules.bind_named("log", _sel(x_is_0, x, _c(x, 1.0))), z)


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
    _p.examples = _examples_nondiff("inexact")
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
rules.def_vectorized_unary(integer_pow_p)


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


integer_pow_p.host = host_integer_pow
