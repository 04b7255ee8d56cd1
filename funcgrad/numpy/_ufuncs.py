"""Elementwise NumPy functions: JAX's promotion and NumPy broadcasting, then primitives.

Each function promotes its operands as ``jax.numpy`` does (``promote_args``,
``promote_args_inexact`` or ``promote_args_numeric``), broadcasts them and binds
one or a few primitives. Composites (``square``, ``log2``, ``clip``, ``hypot``,
...) are plain functions of the primitives, with no rules of their own.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.core.primitive import REGISTRY, Composite, Primitive, TorchForm
from funcgrad.core.symbolic import same_shape
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import (
    ArrayLike,
    aval,
    broadcast_shapes,
    broadcast_to_shape,
    check_arraylike,
    check_kind,
    convert,
    fmt,
    here,
    out,
    prep,
    promote,
    promote_broadcast,
    result_dtype,
    unsupported,
)
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import public_doc, public_forms
from funcgrad.primitives import shape as sh
from funcgrad.primitives.composites import lax_const, like, strong

_BOOL = np.dtype("bool")


def _is_bool(x: Any) -> bool:
    return aval(x).dtype == _BOOL


def _inexact(x: Any) -> bool:
    return dtypes.is_inexact(aval(x).dtype)


def _full_bool(x: Any, value: bool) -> Any:
    return sh.full(aval(x).shape, value, _BOOL)


# --------------------------------------------------------------------------- unary


def _unary_inexact(
    name: str, fn: Callable[[Any], Any], doc: str, no_complex: str | None = None
) -> Callable[[ArrayLike], Any]:
    def f(x: ArrayLike) -> Any:
        (x,) = promote(name, x, to="inexact")
        if no_complex is not None:
            _refuse_complex(name, no_complex, x)
        return out(fn(x))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc} (bool and integer inputs promote to float, as in ``jax.numpy``)."
    return f


@functools.cache
def _sin_over_x_taylor() -> Any:
    """``t(k, u)``: the k-th derivative of sin(u)/u at u = 0, as a function of ``u``
    whose own derivative is ``t(k + 1, u)`` — so every derivative of ``sinc`` at 0
    is exact (``sinc''(0) = -pi**2/3``), not the derivative of a constant."""

    def t(k: int, u: Any) -> Any:
        # sin(u)/u = sum_j (-1)^j u^(2j) / (2j+1)!: odd derivatives vanish at 0 and
        # the (2j)-th is (-1)^j / (2j+1)
        coef = 0.0 if k % 2 else (-1.0) ** (k // 2) / (k + 1)
        return ew.add(ew.mul(u, lax_const(u, 0)), lax_const(u, coef))

    t = custom_jvp(t, nondiff_argnums=(0,))
    t.defjvp(lambda k, p, tans: (t(k, p[0]), ew.mul(t(k + 1, p[0]), tans[0])))
    return t


def _sinc(x: Any) -> Any:
    is0 = ew.eq(x, lax_const(x, 0))
    px = ew.mul(lax_const(x, math.pi), x)
    safe = _select(is0, px, lax_const(x, 1))
    return _select(is0, ew.div(ew.sin(safe), safe), _sin_over_x_taylor()(0, px))


#: ``sinc``'s row is declared here, not in ``primitives/composites.py``: its value at 0 is a
#: ``custom_jvp`` function (every derivative exact), and ``funcgrad.custom`` sits above
#: the primitives (docs/design.md, "Declared composites"); ``DECLARED`` below builds its
#: numpy form and compat its ``torch.sinc``/``torch.special.sinc`` from this row
SINC = Composite(
    "sinc",
    _sinc,
    public=("numpy",),
    doc="``sin(pi x) / (pi x)`` with ``sinc(0) = 1``",
    domains=((-3.0, 3.0),),
    torch=TorchForm("SincBackward0", special=("sinc",)),
)


#: ``where``'s row (a ternary one: ``numpy="condition"``, the condition tested against zero,
#: the cases promoted together, all three broadcast): ``DECLARED`` builds the three-term form
#: this module's neighbours call, ``_setops`` the public one with ``nonzero`` for a condition
#: alone (``alone=``), and compat ``torch.where``/``Tensor.where`` (a bool condition only)
WHERE = Composite(
    "where",
    lambda c, x, y: ew.select_n(c, y, x),
    arity=3,
    public=("numpy",),
    doc="``x`` where ``condition`` else ``y``, broadcast together",
    numpy="condition",
    alone="nonzero",
    domains=((-1.0, 1.0), (-2.0, 2.0), (-2.0, 2.0)),
    torch=TorchForm(
        "WhereBackward0",
        promote="result_type",
        inplace=False,
        inplace_function=False,
        condition_error="where expected condition to be a boolean tensor, but got a tensor "
        "with dtype {dtype}",
        method_self=1,
    ),
)


def _select(pred: Any, on_false: Any, on_true: Any) -> Any:
    """``select_n`` with its cases broadcast to the predicate's shape (same dtype)."""
    shape = broadcast_shapes("where", pred, on_false, on_true)
    cases = [
        broadcast_to_shape(v, shape, "where") if aval(v).shape != shape else v
        for v in (on_false, on_true)
    ]
    pred = pred if aval(pred).shape in ((), shape) else broadcast_to_shape(pred, shape, "where")
    return ew.select_n(pred, *cases)


def _unary_keep(
    name: str, fn: Callable[[Any], Any], doc: str, on_bool: str = "error"
) -> Callable[[ArrayLike], Any]:
    """Unary function keeping the input dtype; ``on_bool``: ``"error"``, ``"id"``, ``"numeric"``."""

    def f(x: ArrayLike) -> Any:
        (x,) = promote(name, x, to="numeric" if on_bool == "numeric" else None)
        if _is_bool(x):
            if on_bool == "id":
                return out(x)
            raise TypeError(f"{name}: not supported for bool operands, got {fmt(x)}{here()}")
        return out(fn(x))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _refuse_complex(name: str, how: str, *xs: Any) -> None:
    """A declared composite's refusal of complex operands (``Composite.numpy_complex``):
    ``"type"``, a ``TypeError`` (``i0``); ``"value"``, ``jnp.hypot``'s ``ValueError``."""
    if how == "type":
        check_kind(name, "real", *xs)
    elif any(_is_complex(x) for x in xs):
        raise ValueError(
            f"{name} is not well defined for complex-valued inputs, got {fmt(*xs)}; convert "
            f"to real values first (for example with abs){here()}"
        )


def _no_complex(name: str, *xs: Any) -> None:
    """``jnp``'s refusal of complex operands for functions of real numbers only."""
    if any(_is_complex(x) for x in xs):
        raise TypeError(
            f"{name} does not support complex-valued inputs, got {fmt(*xs)}; convert to real "
            f"values first (for example with abs or real){here()}"
        )


def _as_is(
    name: str,
    fn: Callable[[Any], Any],
    doc: str,
    no_complex: str | None = None,
    errors_as: str | None = None,
) -> Callable[[ArrayLike], Any]:
    def f(x: ArrayLike) -> Any:
        (x,) = promote(errors_as or name, x)
        if no_complex is not None:
            _refuse_complex(name, no_complex, x)
        return out(fn(x))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _float_or_id(name: str, fn: Callable[[Any], Any], doc: str) -> Callable[[ArrayLike], Any]:
    def f(x: ArrayLike) -> Any:
        (x,) = promote(name, x)
        return out(fn(x) if _inexact(x) else x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def rint(x: ArrayLike) -> Any:
    """Round half to even; integers and bools become the default float dtype."""
    (x,) = promote("rint", x)
    if not _inexact(x):
        return out(convert(x, dtypes.default_dtype(2)))
    return out(_by_parts(ew.round, x))


def _by_parts(fn: Callable[[Any], Any], x: Any) -> Any:
    """``fn`` applied to a complex array's real and imaginary parts separately (as ``jnp``
    rounds complex numbers); ``fn(x)`` for real ``x``."""
    if not _is_complex(x):
        return fn(x)
    return ew.make_complex(fn(ew.real(x)), fn(ew.imag(x)))


def round(x: ArrayLike, decimals: int = 0) -> Any:
    """Round half to even to ``decimals`` decimal places."""
    (x,) = promote("round", x)
    if _is_bool(x):
        raise TypeError(f"round: not supported for bool operands, got {fmt(x)}{here()}")
    if not _inexact(x):
        if decimals < 0:
            raise unsupported("round of integers to negative decimals")
        return out(x)
    if decimals == 0:
        return out(_by_parts(ew.round, x))
    factor = like(x, 10.0**decimals)
    return out(ew.div(_by_parts(ew.round, ew.mul(x, factor)), factor))


around = round


def conjugate(x: ArrayLike) -> Any:
    """Complex conjugate (identity on real arrays)."""
    (x,) = promote("conjugate", x)
    return out(ew.conj(x) if _is_complex(x) else x)


conj = conjugate


def _is_complex(x: Any) -> bool:
    return dtypes.kind(aval(x).dtype) == 3


def real(x: ArrayLike) -> Any:
    """Real part (``float32`` for ``complex64``; identity on real arrays)."""
    (x,) = promote("real", x)
    return out(ew.real(x) if _is_complex(x) else x)


def imag(x: ArrayLike) -> Any:
    """Imaginary part (``float32`` for ``complex64``; zeros for real arrays)."""
    (x,) = promote("imag", x)
    if _is_complex(x):
        return out(ew.imag(x))
    a = aval(x)
    return out(convert(sh.full(a.shape, 0, a.dtype), a.dtype, a.weak_type))


def angle(z: ArrayLike, deg: bool = False) -> Any:
    """Counterclockwise angle of ``z`` from the positive real axis, in radians (degrees with
    ``deg``); real inputs give 0 or pi, integers promote to float."""
    (z,) = promote("angle", z)
    re, im = real(z), imag(z)
    dt = aval(re).dtype
    if not dtypes.is_inexact(dt) or (not _is_complex(z) and aval(z).ndim == 0):
        dt = dtypes.default_dtype(2)
    res = DECLARED["arctan2"](convert(im, dt), convert(re, dt))
    return out(ew.mul(res, strong(res, 180.0 / math.pi)) if deg else res)


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (its values are not looked at)."""
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = aval(prep(x, "iscomplexobj", sequences=True)).dtype
    return np.dtype(dt).kind == "c"


def isrealobj(x: Any) -> bool:
    """Whether ``x`` does not have a complex dtype."""
    return not iscomplexobj(x)


def iscomplex(x: ArrayLike) -> Any:
    """Elementwise: a nonzero imaginary part."""
    return DECLARED["not_equal"](imag(x), 0)


def _as_bool(x: Any, name: str) -> Any:
    (x,) = promote(name, x)
    return x if _is_bool(x) else ew.ne(x, like(x, 0))


def _logical_not(name: str, fn: Callable[[Any], Any]) -> Callable[[ArrayLike], Any]:
    def f(x: ArrayLike) -> Any:
        return out(fn(_as_bool(x, name)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise logical not."
    return f


# --------------------------------------------------------------------------- binary


def _binary(
    name: str,
    fn: Callable[[Any, Any], Any],
    doc: str,
    *,
    to: str | None = None,
    on_bool: Callable[[Any, Any], Any] | str | None = None,
    kinds: str | None = None,
    no_complex: str | None = None,
    keywords: bool = False,
    errors_as: str | None = None,
) -> Callable[[ArrayLike, ArrayLike], Any]:
    """A binary function of NumPy's operands; with ``keywords``, its parameters are
    ``x1``, ``x2`` and may be passed by name (``jnp.fmax``, a function, not a ufunc);
    ``errors_as``: the name its operand errors give (``jnp.fmax``'s say ``greater``)."""

    def f(x: ArrayLike, y: ArrayLike, /) -> Any:
        x, y = promote_broadcast(errors_as or name, x, y, to=to)
        if kinds is not None:
            check_kind(name, kinds, x, y)
        if no_complex is not None:
            _refuse_complex(name, no_complex, x, y)
        if on_bool is not None and _is_bool(x):
            if on_bool == "error":
                raise TypeError(f"{name}: not supported for bool operands, got {fmt(x, y)}{here()}")
            return out(on_bool(x, y))  # type: ignore[operator]
        return out(fn(x, y))

    def f_kw(x1: ArrayLike, x2: ArrayLike) -> Any:
        return f(x1, x2)

    g = f_kw if keywords else f
    g.__name__ = g.__qualname__ = name
    g.__doc__ = f"{doc} (NumPy broadcasting, JAX type promotion)."
    return g


def _unary_intbool(name: str, fn: Callable[[Any], Any], doc: str) -> Callable[[ArrayLike], Any]:
    def f(x: ArrayLike) -> Any:
        (x,) = promote(name, x)
        check_kind(name, "intbool", x)
        return out(fn(x))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _logical(name: str, fn: Callable[[Any, Any], Any]) -> Callable[[ArrayLike, ArrayLike], Any]:
    def f(x: ArrayLike, y: ArrayLike, /) -> Any:
        check_arraylike(name, x, y)
        bx, by = _as_bool(x, name), _as_bool(y, name)
        return out(fn(*promote_broadcast(name, bx, by)))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise logical ``{name[8:]}`` (operands are tested against zero)."
    return f


def _condition(
    name: str, fn: Callable[..., Any], doc: str, alone: Callable[..., Any] | None
) -> Callable[..., Any]:
    """A ternary function of a condition and two cases (``numpy="condition"``: ``where``);
    with ``alone``, a call with the condition alone is ``alone(condition, size=...,
    fill_value=...)`` (``nonzero``), else it is refused as JAX's three-term form refuses it."""

    def f(
        condition: ArrayLike,
        x: ArrayLike | None = None,
        y: ArrayLike | None = None,
        /,
        *,
        size: int | None = None,
        fill_value: Any = None,
    ) -> Any:
        check_arraylike(name, condition, x, y)
        if x is None and y is None and alone is not None:
            return alone(condition, size=size, fill_value=fill_value)
        if x is None or y is None:
            pos = 1 if x is None else 2
            raise TypeError(
                f"{name} requires array or scalar arguments, got None at position {pos} "
                f"(either both or neither of x and y must be given){here()}"
            )
        if size is not None or fill_value is not None:
            raise ValueError(
                f"size and fill_value arguments cannot be used in three-term {name} function."
            )
        c = _as_bool(condition, name)
        x, y = promote(name, x, y)
        shape = broadcast_shapes(name, c, x, y)
        cs = aval(c).shape
        c = c if not cs or same_shape(cs, shape) else broadcast_to_shape(c, shape, name)
        x, y = (
            v if same_shape(aval(v).shape, shape) else broadcast_to_shape(v, shape, name)
            for v in (x, y)
        )
        return out(fn(c, x, y))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _bounds(name: str, doc: str) -> Callable[..., Any]:
    """A ternary function of an operand and two optional bounds (``numpy="bounds"``:
    ``clip``), each given by either of two names, applied as ``jnp.clip`` applies them:
    numpy's ``maximum``, then ``minimum`` (their derivatives: half to each at a tie)."""

    def f(
        a: ArrayLike | None = None,
        a_min: ArrayLike | None = None,
        a_max: ArrayLike | None = None,
        *,
        min: ArrayLike | None = None,
        max: ArrayLike | None = None,
    ) -> Any:
        if a is None:
            raise ValueError(f"No input was provided to the {name} function.{here()}")
        lo = min if min is not None else a_min
        hi = max if max is not None else a_max
        res = prep(a, name)
        if any(v is not None and _is_complex(prep(v, name)) for v in (res, lo, hi)):
            raise ValueError(
                f"{name} received a complex value (the input or min/max): Complex values have "
                f"no ordering and cannot be clipped, got {fmt(res)}; convert to real values "
                f"first (for example with abs or real){here()}"
            )
        if lo is not None:
            res = DECLARED["maximum"](lo, res)
        if hi is not None:
            res = DECLARED["minimum"](hi, res)
        return out(res if (lo is not None or hi is not None) else DECLARED["positive"](res))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def declared_form(
    name: str, prim: Primitive | Composite, alone: Callable[..., Any] | None = None
) -> Callable[..., Any]:
    """The numpy form of a primitive's row: its operands prepared as the row says
    (``Primitive.numpy_promotion``, and ``numpy_bool`` for a binary row's bool operands),
    then the primitive. A row's numpy doc that is a whole sentence (ends with ``.``) is the
    form's whole docstring. ``alone``: the op a call with a ternary row's first operand
    alone is (the row's ``alone``: ``where``'s ``nonzero``)."""
    if prim.numpy_modes.get(name) == "logical":  # (operands tested against zero first)
        return (_logical if prim.arity == 2 else _logical_not)(name, prim.bind)
    if prim.arity == 3 and prim.numpy_promotion == "bounds":
        return _bounds(name, f"{public_doc(prim, 'numpy').removesuffix('.')}.")
    if prim.arity == 3:
        doc = public_doc(prim, "numpy").removesuffix(".")
        with_alone = f"; with ``condition`` alone, ``{prim.alone}(condition)``" if alone else ""
        return _condition(name, prim.bind, f"{doc} (JAX type promotion){with_alone}.", alone)
    f = _declared_builder(name, prim, public_doc(prim, "numpy").removesuffix("."))
    if public_doc(prim, "numpy").endswith("."):
        f.__doc__ = public_doc(prim, "numpy")
    return f


def _declared_builder(name: str, prim: Primitive | Composite, doc: str) -> Callable[..., Any]:
    no_complex = getattr(prim, "numpy_complex", None)  # (a declared composite's)
    if prim.arity == 2:
        promotion = prim.numpy_promotion
        on_bool = prim.numpy_bool
        if on_bool not in (None, "error"):
            on_bool = REGISTRY[on_bool].bind
        return _binary(
            name,
            prim.bind,
            doc,
            to={"inexact": "inexact", "int": "numeric", "numeric": "numeric"}.get(promotion),
            on_bool=on_bool,
            kinds={"int": "int", "intbool": "intbool", "integer": "int"}.get(promotion),
            no_complex=no_complex,
            keywords=getattr(prim, "numpy_keywords", False),
            errors_as=getattr(prim, "numpy_errors_as", None),
        )
    if prim.numpy_promotion in ("keep", "numeric"):  # (numeric: bools become integers)
        on_bool = "numeric" if prim.numpy_promotion == "numeric" else "error"
        return _unary_keep(name, prim.bind, f"{doc}.", on_bool)
    if prim.numpy_promotion == "id_unsigned":  # (the primitive rejects them: abs)
        unsigned_id = lambda x: x if aval(x).dtype.kind == "u" else prim.bind(x)
        return _unary_keep(name, unsigned_id, f"{doc}.", on_bool="id")
    if prim.numpy_promotion == "intbool":
        return _unary_intbool(name, prim.bind, f"{doc}.")
    if prim.numpy_promotion == "as_is":  # (the row's function looks at the dtype)
        errors_as = getattr(prim, "numpy_errors_as", None)
        return _as_is(name, prim.bind, f"{doc}.", no_complex, errors_as)
    if prim.numpy_promotion == "float_or_id":
        return _float_or_id(name, prim.bind, f"{doc}.")
    return _unary_inexact(name, prim.bind, doc, no_complex)


def _declared_forms() -> dict[str, Callable[..., Any]]:
    """Every form the rows declare in ``numpy`` (``exp``, ``arcsin`` and ``asin``, ``add``,
    ``true_divide`` and ``divide``, ...): a primitive's names of one preparation are one
    function (``bitwise_and`` and ``logical_and`` are two)."""
    made: dict[tuple[Primitive | Composite, str | None], Callable[..., Any]] = {}
    for name, prim in public_forms("numpy").items():
        key = (prim, prim.numpy_modes.get(name))
        if key not in made:
            made[key] = declared_form(name, prim)
    forms = public_forms("numpy").items()
    return {name: made[prim, prim.numpy_modes.get(name)] for name, prim in forms}


#: the forms the primitives' rows declare (``public=("numpy", "numpy:arcsin", ...)``);
#: this module's own functions call them as ``DECLARED["subtract"]``
DECLARED = _declared_forms()
globals().update(DECLARED)


def _no_zero(y: Any) -> Any:
    """Integer divisors with 0 replaced by 1 (``jnp``: ``x % 0 == 0`` for integers)."""
    return _select(ew.eq(y, strong(y, 0)), y, like(y, 1))


def fmod(x: ArrayLike, y: ArrayLike, /) -> Any:
    """C-style remainder (the sign of ``x``); integer division by zero gives 0."""
    xp, yp = prep(x, "fmod"), prep(y, "fmod", 1)
    int_result = dtypes.is_integer(result_dtype(xp, yp)[0])  # bools: no zero fix, as jnp
    x, y = promote_broadcast("fmod", xp, yp, to="numeric")
    return out(ew.rem(x, _no_zero(y) if int_result else y))


def divmod(x: ArrayLike, y: ArrayLike, /) -> tuple[Any, Any]:
    """``(floor_divide(x, y), remainder(x, y))``."""
    check_arraylike("divmod", x, y)
    return DECLARED["floor_divide"](x, y), DECLARED["remainder"](x, y)


def _concrete_int(y: Any) -> int | None:
    """``y`` as a Python int if it is a concrete integer scalar (as ``jnp.power`` checks)."""
    if type(y) in (int, bool):
        return int(y)
    if isinstance(y, np.integer):
        return int(y)
    if isinstance(y, np.ndarray) and y.shape == () and y.dtype.kind in "iu":
        return int(y)
    import jax

    if isinstance(y, jax.Array) and y.shape == () and y.dtype.kind in "iu":
        return int(y)
    return None


def power(x: ArrayLike, y: ArrayLike, /) -> Any:
    """``x ** y``. A concrete integer exponent uses ``integer_pow`` (exact, differentiable at
    ``x = 0``); integer bases with integer array exponents use binary exponentiation."""
    x, y = prep(x, "power"), prep(y, "power", 1)
    k = _concrete_int(y)
    if k is not None:
        (x,) = promote("power", x, to="numeric")
        if k < 0 and not _inexact(x):
            raise ValueError(
                f"power: integers to negative integer powers are not allowed, got {fmt(x)} ** {k}"
                f"{here()}"
            )
        return out(ew.integer_pow(x, k))
    xn, yn = promote_broadcast("power", x, y, to="numeric")
    if not _inexact(xn):
        return out(_int_power(xn, yn))
    ax, ay = aval(x), aval(y)
    if dtypes.is_inexact(ax.dtype) and dtypes.is_integer(ay.dtype):
        # float base, integer exponent: the base keeps its dtype (jnp's case 3)
        w = ax.weak_type and ay.weak_type
        xb, yb = (convert(v, ax.dtype, w) for v in (x, y))
        xb, yb = promote_broadcast("power", xb, yb)
        # where the exponent is 0 the result is 1 with derivative 0 (JAX's rule), not
        # 0 * x**-1 (NaN at x = 0): the power sees x = 1 there
        zero = ew.eq(yb, like(yb, 0))
        one = like(xb, 1) if not aval(xb).shape else sh.full(aval(xb).shape, 1, aval(xb).dtype)
        return out(_select(zero, ew.pow(_select(zero, xb, one), yb), one))
    return out(ew.pow(xn, yn))


pow = power


def _int_power(x: Any, y: Any) -> Any:
    """Integer ``x ** y`` by binary exponentiation over the low 6 bits of ``y`` (as JAX)."""
    shape = broadcast_shapes("power", x, y)
    x, y = (broadcast_to_shape(v, shape, "power") for v in (x, y))
    zero = like(x, 0)
    acc = _select(
        ew.bitwise_and(ew.eq(x, zero), ew.ne(y, zero)), sh.full(shape, 1, aval(x).dtype), zero
    )
    for k in range(6):
        bit = ew.ne(ew.bitwise_and(y, like(y, 1 << k)), like(y, 0))
        acc = _select(bit, acc, ew.mul(acc, x))
        x = ew.mul(x, x)
    return acc


# --------------------------------------------------------------------------- where, clip, ...


def select(condlist: list, choicelist: list, default: ArrayLike = 0) -> Any:
    """The first choice whose condition holds, elementwise (``default`` otherwise)."""
    check_arraylike("select", *condlist, *choicelist, default)
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist and choicelist must have the same length{here()}")
    outv: Any = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        outv = DECLARED["where"](c, v, outv)
    return out(outv) if condlist else out(prep(default, "select"))


def nan_to_num(
    x: ArrayLike,
    copy: bool = True,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Any:
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (the dtype's extremes);
    a complex array's real and imaginary parts each, as ``jnp.nan_to_num``."""
    del copy
    (x,) = promote("nan_to_num", x)
    if not _inexact(x):
        return out(x)
    if _is_complex(x):
        re, im = (_finite(part, nan, posinf, neginf) for part in (ew.real(x), ew.imag(x)))
        return out(ew.make_complex(re, im))
    return out(_finite(x, nan, posinf, neginf))


def _finite(x: Any, nan: Any, posinf: Any, neginf: Any) -> Any:
    """A real inexact ``x`` with NaN and infinities replaced (:func:`nan_to_num`)."""
    info = ml_dtypes.finfo(aval(x).dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = _select(ew.ne(x, x), x, strong(x, nan))
    x = _select(ew.eq(x, strong(x, np.inf)), x, strong(x, posinf))
    return _select(ew.eq(x, strong(x, -np.inf)), x, strong(x, neginf))


# PyTorch's torch.nan_to_num, Tensor.nan_to_num(_) and torch.nan_to_num_ come from this row
_BOUNDS = tuple(TorchParam(n, n, "optional_float", None) for n in ("posinf", "neginf"))
ArrayRow(
    nan_to_num,
    torch=TorchArrayForm(
        "NanToNumBackward0",
        (TorchParam("nan", "nan", "optional_float", 0.0), *_BOUNDS),
        inplace=True,
        inplace_function=True,
        samples=(((2, 3), ()), ((4,), (1.0, 9.0)), ((3,), (0.5, None, -7.0))),
    ),
)
