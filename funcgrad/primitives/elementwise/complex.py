"""Complex numbers: ``imag``, ``conj``, ``complex`` (``make_complex``), ``abs`` of a complex
operand, and the complex examples of the holomorphic primitives.

Derivatives follow JAX's convention: a JVP is the R-linear map on tangents, and a VJP is
its transpose under the bilinear pairing <a, b> = Re(sum(a * b)) (no conjugation). So
holomorphic rules (``t * f'(z)``) serve both modes unchanged, ``grad`` of a real function
of ``z = x + iy`` is ``df/dx - i df/dy``, and the rules below handle the parts that are
not holomorphic: ``real``, ``imag``, ``conj``, ``complex`` and ``abs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import REGISTRY, Example, Primitive, TorchForm
from funcgrad.primitives import rules
from funcgrad.primitives.elementwise import transcendental  # noqa: F401  (rows below)
from funcgrad.primitives.elementwise.arith import (
    _bcast_to,
    _c,
    _full_like,
    _sel,
    abs,
    abs_p,
    add_p,
    div,
    div_p,
    eq,
    integer_pow_p,
    mul,
    mul_p,
    neg,
    sign,
    sub_p,
)
from funcgrad.primitives.elementwise.base import (
    _cast,
    _check_dtype,
    _join_avals,
    _unary_aval,
    declare,
    vectorized_batch,
)
from funcgrad.primitives.elementwise.convert import (
    _as_complex,
    _complex_examples,
    _complex_part_aval,
    _is_complex,
    _unary_complex,
    complex_dtype,
    convert_element_type,
    real,
    real_dtype,
    unbroadcast,
)
from funcgrad.primitives.rules import rand

FAMILY = "elementwise"


imag_p = _unary_complex("imag", lax.imag, _complex_part_aval("imag"))
conj_p = _unary_complex("conj", lax.conj, _unary_aval("conj", "any"))


def _conj_abstract_eval(x: Aval) -> Aval:
    if dtypes.kind(x.dtype) != 3:
        raise TypeError(f"conj requires a complex operand, got {x}")
    return x


conj_p.abstract_eval = _conj_abstract_eval


def imag(x: Any) -> Any:
    """Imaginary part of a complex array (a real array of the matching precision)."""
    return bind(imag_p, x)


def conj(x: Any) -> Any:
    """Complex conjugate of a complex array."""
    return bind(conj_p, x)


rules.def_linear(imag_p)
# transpose of t -> Im(t): Re(w t) = v Im(t) for w = -i v
imag_p.vjp = lambda ct, x, *, out: (make_complex(_full_like(ct, 0.0), neg(ct)),)
rules.def_linear(conj_p)
conj_p.vjp = lambda ct, x, *, out: (conj(ct),)


# complex(x, y) = x + iy from two real operands of one dtype
complex_p = Primitive("complex", family=FAMILY)


@complex_p.def_abstract_eval
def _complex_abstract_eval(x: Aval, y: Aval) -> Aval:
    out = _join_avals("complex", (x, y), "real_float")
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


for _p in [p for p in REGISTRY.values() if p.complex_domain is not None]:  # declared on rows
    _add_complex_examples(_p, *_p.complex_domain)
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


# host rules (the host tier, funcgrad.core.host)
imag_p.host = np.imag
conj_p.host = np.conjugate


def _complex_host(x: Any, y: Any) -> np.ndarray:
    """The parts written into one complex array (as XLA's ``complex``): ``x + 1j * y``
    would lose a -0.0 imaginary part and make an infinite part's partner NaN."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    z = np.empty(x.shape, np.result_type(x.dtype, np.complex64))
    z.real, z.imag = x, y
    return z


# ``lax.complex`` and PyTorch's ``torch.complex`` come from the row; PyTorch's takes tensors
# of one float dtype only (compat's kernel words its refusals), as a function (no method)
declare(
    complex_p,
    host=_complex_host,
    public=("lax",),
    doc="Elementwise ``x + 1j * y`` from real ``x`` and ``y`` of one dtype",
    arity=2,
    domain=(-2.0, 2.0),
    torch=TorchForm(
        "ComplexBackward0",
        promote="same",
        inplace=False,
        inplace_function=False,
        tensors_only=True,
        method=False,
    ),
)
