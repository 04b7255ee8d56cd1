"""Changing the element type: ``convert_element_type``, the real part of a complex array
(``real``), and the cast of a (co)tangent back to its operand's dtype (``unbroadcast``).
"""

from __future__ import annotations

import operator
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
from funcgrad.primitives.elementwise.base import lax_convert
from funcgrad.primitives.rules import rand

FAMILY = "elementwise"


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
    rules.def_vectorized_unary(p)
    p.examples = _complex_examples()
    return p


real_p = _unary_complex("real", lax.real, _complex_part_aval("real"))
real_p.host = np.real


def real(x: Any) -> Any:
    """Real part of a complex array (a real array of the matching precision)."""
    return bind(real_p, x)


def cast_tangent(t: Any, dtype: np.dtype) -> Any:
    """A (co)tangent converted to ``dtype``; complex to real keeps the real part (what the
    conversion does, without NumPy's warning about discarding the imaginary part)."""
    if _is_complex(t) and dtypes.kind(np.dtype(dtype)) != 3:
        t = real(t)
    return convert_element_type(t, dtype)


def _as_complex(ct: Any, like: Any) -> Any:
    """A real cotangent as a complex array of ``like``'s dtype (imaginary part 0)."""
    return convert_element_type(ct, to_aval(like).dtype)


rules.def_linear(real_p)
real_p.vjp = lambda ct, x, *, out: (_as_complex(ct, x),)


def unbroadcast(ct: Any, aval: Aval) -> Any:
    """Sum a cotangent down to a 0-d operand that was broadcast; cast to its dtype."""
    if is_zero(ct):
        return ct
    ct_aval = to_aval(ct)
    if aval.shape == () and ct_aval.shape != ():
        ct = rules.bind_named("reduce_sum", ct, axes=tuple(range(ct_aval.ndim)))
    if to_aval(ct).dtype != aval.dtype and dtypes.is_inexact(aval.dtype):
        ct = cast_tangent(ct, aval.dtype)
    return ct


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


def _convert_host(x: Any, *, new_dtype: np.dtype, weak_type: bool = False) -> Any:
    """(host tier) XLA's conversion: complex to real keeps the real part, float to
    integer truncates (NaN to 0), anything to bool is ``x != 0``."""
    new = np.dtype(new_dtype)
    x = np.asarray(x)
    if x.dtype.kind == "c" and new.kind != "c":
        x = x.real
    if new.kind == "b":
        return np.not_equal(x, 0)
    if new.kind in "iu" and x.dtype.kind == "f":
        x = np.where(np.isnan(x), 0, x)
    return x.astype(new)


convert_element_type_p.host = _convert_host
rules.def_vectorized_unary(convert_element_type_p)


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


# --------------------------------------------------------------------------- reduce_precision

#: ``lax.reduce_precision``: each element rounded (to nearest even) to a float format of
#: ``exponent_bits`` and ``mantissa_bits`` (XLA's ``ReducePrecision``), in the operand's
#: dtype. Linear for derivatives as in JAX: a tangent is rounded the same way.
reduce_precision_p = Primitive("reduce_precision", family=FAMILY)


@reduce_precision_p.def_abstract_eval
def _reduce_precision_abstract_eval(x: Aval, *, exponent_bits: int, mantissa_bits: int) -> Aval:
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: mantissa_bits must be non-negative; got {mantissa_bits}"
        )
    if not dtypes.is_float(x.dtype):
        raise TypeError(
            f"reduce_precision does not accept dtype {x.dtype.name}. Accepted dtypes are "
            "subtypes of floating."
        )
    return x


reduce_precision_p.lower = lambda x, **p: lax.reduce_precision(x, **p)
rules.def_linear(reduce_precision_p)
rules.def_vectorized_unary(reduce_precision_p)
reduce_precision_p.vjp = lambda ct, x, *, out, **p: (bind(reduce_precision_p, ct, **p),)


@reduce_precision_p.def_examples
def _reduce_precision_examples(rng: np.random.Generator) -> list[Example]:
    return [
        # float64's own format: the identity, so derivatives can be checked numerically
        Example([rand(rng, (3,))], {"exponent_bits": 11, "mantissa_bits": 52}),
        # bfloat16's and float16's formats: rounding (piecewise constant, not differenced)
        Example([rand(rng, (2, 3))], {"exponent_bits": 8, "mantissa_bits": 7}, diff_argnums=()),
        Example(
            [rand(rng, (4,), "float32")], {"exponent_bits": 5, "mantissa_bits": 10}, diff_argnums=()
        ),
    ]


def reduce_precision(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``x`` rounded to a float format of ``exponent_bits`` and ``mantissa_bits``."""
    return bind(
        reduce_precision_p,
        x,
        exponent_bits=operator.index(exponent_bits),
        mantissa_bits=operator.index(mantissa_bits),
    )
