"""Elementwise ``jax.lax`` functions: arithmetic, math, comparisons, bitwise, complex.

Each binds one funcgrad primitive (or a short composite of them), so ``grad``,
``vmap`` and ``jit`` apply. As in ``jax.lax`` (0.10), binary operands share one
dtype (weakly typed Python scalars adapt; ``pow`` takes an integer exponent) and one
rank, with size-1 dimensions and 0-d operands broadcasting; there is no NumPy-style
promotion or rank broadcasting: that is ``funcgrad.numpy``'s job.
"""

from __future__ import annotations

import builtins
import enum
import operator
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.interp import to_aval
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import bits, named_operands, public_doc, public_forms, rules
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh

__all__ = [
    "AccuracyMode",
    "RoundingMethod",
    "Tolerance",
    "clz",
    "conj",
    "imag",
    "integer_pow",
    "mul",
    "population_count",
    "pow",
    "real",
    "reduce_precision",
    "round",
]


class AccuracyMode(enum.Enum):
    """The ``accuracy=`` of the transcendental unary operations (``jax.lax.AccuracyMode``):
    funcgrad lowers each to XLA's default implementation whichever is asked."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """An ``accuracy=`` as tolerances (``jax.lax.Tolerance``): ``atol`` and ``rtol``, or
    ``atol`` and ``ulps``; non-negative, at least one set. funcgrad lowers to XLA's
    default implementation whatever the tolerances."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps


def _un(fn: Any, name: str, doc: str) -> Any:
    def f(x: Any, *, accuracy: Any = None) -> Any:
        del accuracy  # XLA's default implementation; accepted for compatibility
        return fn(prep(x, name))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _broadcast_size_one(name: str, x: Any, y: Any) -> tuple[Any, Any]:
    """JAX 0.10's ``lax`` rule for binary operands: equal ranks (or a 0-d operand),
    each dimension equal or 1; size-1 dimensions broadcast to the other's size."""
    xs, ys = to_aval(x).shape, to_aval(y).shape
    if xs == ys or not xs or not ys:
        return x, y
    if len(xs) != len(ys):
        raise TypeError(
            f"{name}: arrays must have the same number of dimensions, got "
            f"{ {len(xs), len(ys)} }{here()}"
        )
    if any(a != b and 1 not in (a, b) for a, b in zip(xs, ys)):
        raise TypeError(f"{name} got incompatible shapes for broadcasting: {xs}, {ys}.{here()}")
    shape = tuple(builtins.max(a, b) for a, b in zip(xs, ys))
    dims = tuple(range(len(shape)))
    return sh.broadcast_in_dim(x, shape, dims), sh.broadcast_in_dim(y, shape, dims)


def _operand(x: Any, name: str, pos: int) -> Any:
    """``prep(x)`` with JAX's error for a value that is no JAX type (a string array)."""
    try:
        return prep(x, name)
    except TypeError as e:
        raise TypeError(
            f"Error interpreting argument to {name} as a JAX value. The problematic value is "
            f"of type {type(x)} and was passed to {name} at position {pos}.\n{e}"
        ) from None


def _same_dtypes(name: str, *ops: Any) -> None:
    """JAX 0.10's ``lax`` rule: operands of one dtype, a Python scalar counting as its
    default dtype (``int`` int32 or int64, ``float`` float32 or float64): no promotion,
    not even of a weakly typed operand (``lax.add(1, 1.0)`` and, with x64,
    ``lax.add(float32_array, 1.0)`` are errors); ``funcgrad.numpy`` promotes."""
    dts = [to_aval(v).dtype for v in ops]
    if any(d != dts[0] for d in dts[1:]):
        got = ", ".join(str(d) for d in dts)
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {got}. (Tip: "
            f"funcgrad.numpy.{name} is a similar function that does automatic type "
            f"promotion on inputs).{here()}"
        )


def _bin(fn: Any, name: str, doc: str, check: Any = _same_dtypes) -> Any:
    def f(x: Any, y: Any) -> Any:
        x, y = _operand(x, name, 0), _operand(y, name, 1)
        check(name, x, y)
        return fn(*_broadcast_size_one(name, x, y))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _tern(fn: Any, name: str, doc: str) -> Any:
    """A ternary form (``clamp``): operands of one dtype (weakly typed ones adapt), each
    0-d or of one shape, as ``jax.lax.clamp`` takes them."""

    def f(x: Any, y: Any, z: Any) -> Any:
        ops = [_operand(v, name, i) for i, v in enumerate((x, y, z))]
        _same_dtypes(name, *ops)
        avals = [to_aval(v) for v in ops]
        dt, weak = rules.join_dtypes(name, *avals)
        shapes = {a.shape for a in avals if a.shape}
        if len(shapes) > 1:
            raise TypeError(f"{name}: operands must be 0-d or of one shape, got {avals}{here()}")
        ops = [
            v if (a.dtype, a.weak_type) == (dt, weak) else ew.convert_element_type(v, dt, weak)
            for v, a in zip(ops, avals)
        ]
        return fn(*ops)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


#: the forms the primitives' rows declare (``public=("lax", ...)``): ``exp``, ``add``, ...
#: (a row's arity says which wrapper: ``accuracy=`` for unary ones, size-1 broadcasting
#: for binary ones, one dtype and shape for ternary ones: ``clamp``)
_WRAPPERS = {1: _un, 2: _bin, 3: _tern}
#: JAX's ``lax.max``/``lax.min`` take bools (XLA's maximum of booleans is their OR, its
#: minimum their AND); funcgrad's primitives are numeric, so bools bind these instead
_ON_BOOLS = {"max": ew.or_p.bind, "min": ew.and_p.bind}


def _bools_as(fn: Any, on_bools: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        both = to_aval(x).dtype == np.bool_ and to_aval(y).dtype == np.bool_
        return on_bools(x, y) if both else fn(x, y)

    return f


DECLARED = {
    name: named_operands(
        _WRAPPERS[prim.arity](
            _bools_as(prim.bind, _ON_BOOLS[name]) if name in _ON_BOOLS else prim.bind,
            name,
            f"{public_doc(prim, 'lax')}.",
        ),
        prim,
    )
    for name, prim in public_forms("lax").items()
}
globals().update(DECLARED)
__all__ += sorted(DECLARED)


def _integer_exponent(xa: Any, ya: Any) -> bool:
    """An inexact base with an integer exponent: the one mix of dtypes ``lax.pow`` takes."""
    return dtypes.is_inexact(xa.dtype) and dtypes.is_integer(ya.dtype)


def _pow(x: Any, y: Any) -> Any:
    """``x ** y``; JAX 0.10 takes an integer exponent of any integer dtype for an
    inexact base. Where that exponent is 0 the result is 1 with derivative 0 (as JAX's
    rule: not ``0 * x**-1``, NaN at ``x = 0``); the power sees ``x = 1`` there, so no
    NaN reaches the gradient through the selection."""
    xa, ya = to_aval(x), to_aval(y)
    if not _integer_exponent(xa, ya):
        return ew.pow(x, y)
    shape = xa.shape or ya.shape
    x = sh.broadcast_in_dim(x, shape, ()) if not xa.shape and shape else x
    zero = ew.eq(y, np.zeros((), ya.dtype))
    one = sh.broadcast_in_dim(np.ones((), xa.dtype), shape, ()) if shape else np.ones((), xa.dtype)
    safe_x = ew.select_n(zero, x, one)
    out = ew.select_n(zero, ew.pow(safe_x, ew.convert_element_type(y, xa.dtype)), one)
    # weakly typed base and exponent give a weakly typed result (``lax.pow(2.0, 3)``)
    return ew.convert_element_type(out, xa.dtype, True) if xa.weak_type and ya.weak_type else out


real = _un(ew.real, "real", "Real part of a complex array.")


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``operand`` rounded to the nearest value of a float format with ``exponent_bits``
    and ``mantissa_bits`` (XLA's ``ReducePrecision``), keeping its dtype: e.g. float32
    values as bfloat16 would hold them."""
    e = operator.index(exponent_bits)
    m = operator.index(mantissa_bits)
    return ew.reduce_precision(prep(operand, "reduce_precision"), e, m)


imag = _un(ew.imag, "imag", "Imaginary part of a complex array.")


def _conj(x: Any) -> Any:
    # a real operand becomes complex first, as lax.conj's (its conjugate is itself)
    a = to_aval(x)
    if dtypes.kind(a.dtype) != 3:
        x = ew.convert_element_type(x, ew.complex_dtype(a.dtype), a.weak_type)
    return ew.conj(x)


conj = _un(_conj, "conj", "Complex conjugate (of a real operand: the operand as complex).")
population_count = _un(
    lambda x: bits.population_count_p.bind(x), "population_count", "Number of set bits."
)
clz = _un(lambda x: bits.clz_p.bind(x), "clz", "Number of leading zero bits.")

_mul = _bin(ew.mul, "mul", "Elementwise ``x * y``.")


def mul(x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    """Elementwise ``x * y``; with ``out_dtype`` (a wider type, e.g. ``int32`` for
    ``int8`` operands) the product is computed and returned in that type."""
    if out_dtype is not None:
        dt = dtypes.canonicalize(np.dtype(out_dtype))
        x = ew.convert_element_type(prep(x, "mul"), dt)
        y = ew.convert_element_type(prep(y, "mul"), dt)
    return _mul(x, y)


def _pow_dtypes(name: str, x: Any, y: Any) -> None:
    # an integer exponent of any integer dtype with an inexact base, else one dtype
    if not _integer_exponent(to_aval(x), to_aval(y)):
        _same_dtypes(name, x, y)


pow = _bin(
    _pow, "pow", "Elementwise ``x ** y``; an integer ``y`` with an inexact ``x``.", _pow_dtypes
)


def integer_pow(x: Any, y: int) -> Any:
    """Elementwise ``x ** y`` for a static Python integer ``y``."""
    try:
        y = operator.index(y)
    except TypeError as e:
        raise TypeError(f"integer_pow: y must be a Python int, got {y!r}{here()}") from e
    return ew.integer_pow(prep(x, "integer_pow"), y)


class RoundingMethod(enum.IntEnum):
    """How :func:`round` breaks ties (``jax.lax.RoundingMethod``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Round to the nearest integer; ties away from zero (default) or to even."""
    x = prep(x, "round")
    method = RoundingMethod(int(getattr(rounding_method, "value", rounding_method)))
    if dtypes.kind(to_aval(x).dtype) != 2:
        raise TypeError(f"round: requires a real floating operand, got {to_aval(x)}{here()}")
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return ew.round(x)
    t = ew.round_toward_zero(x)
    half = ew.ge(ew.abs(ew.sub(x, t)), ew._c(x, 0.5))
    return ew.select_n(half, t, ew.add(t, ew.sign(x)))
