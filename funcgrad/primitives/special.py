"""Primitives of the ``special`` family: special functions lowered to ``jax.lax``.

``erfc``, the regularized incomplete gamma functions ``igamma``/``igammac`` (and
``igamma_grad_a``, their derivative in ``a``), the regularized incomplete beta function
``betainc``, ``polygamma``, the Hurwitz ``zeta`` and the exponentially scaled Bessel
functions ``bessel_i0e``/``bessel_i1e``.

Abstract evaluation, lowering and batching reuse the elementwise helpers (operands of one
float dtype and one shape, 0-d operands broadcasting). Derivatives follow ``jax.lax``:

* ``igamma``/``igammac``: in ``x`` closed form, in ``a`` through ``igamma_grad_a``;
* ``igamma_grad_a``: in ``x`` closed form; not differentiable in ``a`` (``jax.lax`` has
  no rule either);
* ``betainc``: in ``x`` closed form; not differentiable in ``a``, ``b``;
* ``polygamma(m, x)``: in ``x`` it is ``polygamma(m + 1, x)``; not in ``m``;
* ``zeta(x, q)``: in ``q`` it is ``-x zeta(x + 1, q)``; not in ``x``.

A forward-mode tangent for an argument without a derivative raises ``ValueError`` (as
``jax.lax`` does); reverse mode gives such an argument no cotangent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core.interp import bind, to_aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand

FAMILY = "special"

#: marks an argument the primitive is not differentiable in (``jax.lax`` raises too)
NOT_DIFFERENTIABLE = "not differentiable"

Partial = Callable[..., Any] | str


def _c(x: Any, v: float) -> Any:
    return np.asarray(v, to_aval(x).dtype)


def _nary(name: str, lower: Callable, partials: Sequence[Partial]) -> Primitive:
    """An elementwise primitive of ``len(partials)`` float operands (the elementwise
    family's abstract eval, lowering and batching); ``partials[i](*args, out)`` is the
    derivative in operand ``i``, or :data:`NOT_DIFFERENTIABLE`."""
    p = ew._binary(name, lower, allowed="real_float")
    p.family = FAMILY

    def jvp(primals: list, tangents: list) -> tuple:
        out = p.bind(*primals)
        tout: Any = Zero(to_aval(out).strip_weak())
        for i, (d, t) in enumerate(zip(partials, tangents)):
            if is_zero(t):
                continue
            if d is NOT_DIFFERENTIABLE:
                raise ValueError(
                    f"{name}: differentiation with respect to operand {i} is not supported"
                )
            term = ew._bcast_to(ew.mul(t, d(*primals, out)), to_aval(out))
            tout = rules.add_tangents(tout, term)
        return out, tout

    def vjp(ct: Any, *args: Any, out: Any) -> tuple:
        return tuple(
            None
            if d is NOT_DIFFERENTIABLE
            else ew.unbroadcast(ew.mul(ct, d(*args, out)), to_aval(a))
            for d, a in zip(partials, args)
        )

    p.jvp = jvp
    p.vjp = vjp
    return p


def _examples(
    ranges: Sequence[tuple[float, float]],
    diff: tuple[int, ...] | None = None,
    smooth: bool = True,
    integer: Sequence[int] = (),
) -> Callable[[np.random.Generator], list[Example]]:
    """Examples with operand ``i`` drawn from ``ranges[i]`` (rounded for ``integer``)."""

    def draw(rng: np.random.Generator, shape: tuple, i: int) -> np.ndarray:
        v = rand(rng, shape, lo=ranges[i][0], hi=ranges[i][1])
        return np.round(v) if i in integer else v

    def examples(rng: np.random.Generator) -> list[Example]:
        n = len(ranges)
        out = []
        # a full-shape example and one with a 0-d first operand (broadcast)
        for shapes in ([(2, 3)] * n, [()] + [(2, 3)] * (n - 1)):
            args = [draw(rng, s, i) for i, s in enumerate(shapes)]
            out.append(Example(args, diff_argnums=diff, smooth=smooth, rtol=1e-5, atol=1e-5))
        return out

    return examples


# --------------------------------------------------------------------------- erfc

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

erfc_p = ew._unary(
    "erfc",
    lax.erfc,
    lambda x, y: ew.mul(_c(x, -_TWO_OVER_SQRT_PI), ew.exp(ew.neg(ew.mul(x, x)))),
)
erfc_p.family = FAMILY


def erfc(x: Any) -> Any:
    """``1 - erf(x)``, accurate where ``erf(x)`` is close to 1."""
    return bind(erfc_p, x)


# --------------------------------------------------------------------------- incomplete gamma


def _igamma_dx(a: Any, x: Any, out: Any) -> Any:
    # the gamma density x^(a-1) e^(-x) / Gamma(a)
    log_density = ew.sub(ew.add(ew.neg(x), ew.mul(ew.sub(a, _c(a, 1.0)), ew.log(x))), ew.lgamma(a))
    return ew.exp(log_density)


def _igamma_da(a: Any, x: Any, out: Any) -> Any:
    return igamma_grad_a(a, x)


def _neg(d: Callable) -> Callable:
    return lambda *args: ew.neg(d(*args))


def _igamma_grad_a_dx(a: Any, x: Any, out: Any) -> Any:
    # d/dx dP/da = d/da (gamma density) = density * (log x - digamma(a))
    return ew.mul(_igamma_dx(a, x, out), ew.sub(ew.log(x), ew.digamma(a)))


igamma_grad_a_p = _nary("igamma_grad_a", lax.igamma_grad_a, [NOT_DIFFERENTIABLE, _igamma_grad_a_dx])
igamma_grad_a_p.examples = _examples([(0.5, 3.0), (0.5, 3.0)], diff=(1,))
igamma_p = _nary("igamma", lax.igamma, [_igamma_da, _igamma_dx])
igammac_p = _nary("igammac", lax.igammac, [_neg(_igamma_da), _neg(_igamma_dx)])


def _igamma_examples(rng: np.random.Generator) -> list[Example]:
    # the a-derivative's own derivative in a does not exist (as in jax.lax): second
    # order only in x
    both = _examples([(0.5, 3.0), (0.5, 3.0)], smooth=False)(rng)
    in_x = _examples([(0.5, 3.0), (0.5, 3.0)], diff=(1,))(rng)
    return [both[0], in_x[1]]


igamma_p.examples = _igamma_examples
igammac_p.examples = _igamma_examples


def igamma(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function ``P(a, x)``."""
    return bind(igamma_p, a, x)


def igammac(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return bind(igammac_p, a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """``dP(a, x)/da``."""
    return bind(igamma_grad_a_p, a, x)


# --------------------------------------------------------------------------- incomplete beta


def _betainc_dx(a: Any, b: Any, x: Any, out: Any) -> Any:
    one = _c(x, 1.0)
    lbeta = ew.sub(ew.add(ew.lgamma(a), ew.lgamma(b)), ew.lgamma(ew.add(a, b)))
    log_density = ew.add(
        ew.mul(ew.sub(b, one), ew.log1p(ew.neg(x))), ew.mul(ew.sub(a, one), ew.log(x))
    )
    return ew.exp(ew.sub(log_density, lbeta))


betainc_p = _nary("betainc", lax.betainc, [NOT_DIFFERENTIABLE, NOT_DIFFERENTIABLE, _betainc_dx])
betainc_p.examples = _examples([(0.5, 3.0), (0.5, 3.0), (0.1, 0.9)], diff=(2,))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function ``I_x(a, b)``."""
    return bind(betainc_p, a, b, x)


# --------------------------------------------------------------------------- polygamma, zeta


def _polygamma_dx(m: Any, x: Any, out: Any) -> Any:
    return polygamma(ew.add(m, _c(m, 1.0)), x)


polygamma_p = _nary("polygamma", lax.polygamma, [NOT_DIFFERENTIABLE, _polygamma_dx])
polygamma_p.examples = _examples([(0.0, 2.0), (0.5, 3.0)], diff=(1,), integer=(0,))


def polygamma(m: Any, x: Any) -> Any:
    """The ``m``-th derivative of the digamma function (``m`` a non-negative integer)."""
    return bind(polygamma_p, m, x)


def _zeta_dq(x: Any, q: Any, out: Any) -> Any:
    return ew.mul(ew.neg(x), zeta(ew.add(x, _c(x, 1.0)), q))


zeta_p = _nary("zeta", lax.zeta, [NOT_DIFFERENTIABLE, _zeta_dq])
zeta_p.examples = _examples([(1.5, 4.0), (0.5, 3.0)], diff=(1,))


def zeta(x: Any, q: Any) -> Any:
    """Hurwitz zeta function ``sum_k (k + q)^-x``."""
    return bind(zeta_p, x, q)


# --------------------------------------------------------------------------- Bessel


def _i0e_deriv(x: Any, y: Any) -> Any:
    return ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), y))


def _i1e_deriv(x: Any, y: Any) -> Any:
    # i0e(x) - i1e(x) (sign(x) + 1/x); 1/2 at (and near) 0
    eps = float(np.finfo(to_aval(x).dtype).eps)
    not_tiny = ew.gt(ew.abs(x), _c(x, eps))
    safe = ew._sel(not_tiny, ew._bcast_to(_c(x, eps), to_aval(x)), x)
    d = ew.sub(bessel_i0e(safe), ew.mul(y, ew.add(ew.sign(safe), ew.div(_c(x, 1.0), safe))))
    return ew._sel(not_tiny, ew._bcast_to(_c(x, 0.5), to_aval(x)), d)


bessel_i0e_p = ew._unary(
    "bessel_i0e", lax.bessel_i0e, _i0e_deriv, allowed="real_float", smooth=False
)
bessel_i1e_p = ew._unary(
    "bessel_i1e", lax.bessel_i1e, _i1e_deriv, allowed="real_float", smooth=False
)
bessel_i0e_p.family = bessel_i1e_p.family = FAMILY
bessel_i0e_p.examples = _examples([(-3.0, 3.0)], smooth=False)
bessel_i1e_p.examples = _examples([(-3.0, 3.0)], smooth=False)


def bessel_i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
    return bind(bessel_i0e_p, x)


def bessel_i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
    return bind(bessel_i1e_p, x)
