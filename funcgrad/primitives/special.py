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
from funcgrad.core.primitive import Example, Primitive, TorchForm
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


def _nary(name: str, lower: Callable, partials: Sequence[Partial], **row: Any) -> Primitive:
    """An elementwise primitive of ``len(partials)`` float operands (the elementwise
    family's abstract eval, lowering and batching); ``partials[i](*args, out)`` is the
    derivative in operand ``i``, or :data:`NOT_DIFFERENTIABLE`. ``row``: a binary row's
    input domain and public forms (``ew._binary``'s ``lo``, ``hi``, ``doc``, ``public``,
    ``torch``)."""
    p = ew._binary(name, lower, allowed="real_float", **row)
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
    allowed="real_float",
    doc="Elementwise ``1 - erf(x)``, accurate tails",
    docs={
        "scipy.special": "The complementary error function ``1 - erf(x)``, accurate for large ``x``"
    },
    public=("lax", "scipy.special"),
    torch=TorchForm("ErfcBackward0", special=("erfc",)),
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


def _igamma_row(upper: bool) -> dict[str, Any]:
    """The incomplete gamma rows' forms: lax's ``igamma(c)``, ``scipy.special``'s
    ``gammainc(c)``, PyTorch's ``igamma(c)`` and ``torch.special.gammainc(c)`` (tensors
    only, floats only: ``"igamma_cpu" not implemented for 'Long'``; no ``torch.igamma_``;
    PyTorch has no derivative in ``input``, funcgrad's is JAX's)."""
    name, what = ("igammac", "upper") if upper else ("igamma", "lower")
    return {
        "lo": 0.5,
        "hi": 3.0,
        "doc": f"Regularized {what} incomplete gamma function "
        + ("``Q(a, x) = 1 - P(a, x)``" if upper else "``P(a, x)``"),
        "public": ("lax", f"scipy.special:gammainc{'c' if upper else ''}"),
        "operands": ("a", "x"),
        "torch": TorchForm(
            f"{name.capitalize()}Backward0",
            promote="result_type",
            inplace_function=False,
            tensors_only=True,
            input_derivative=False,
            forward_ad=False,
            special=(f"gammainc{'c' if upper else ''}",),
        ),
    }


igamma_p = _nary("igamma", lax.igamma, [_igamma_da, _igamma_dx], **_igamma_row(False))
igammac_p = _nary("igammac", lax.igammac, [_neg(_igamma_da), _neg(_igamma_dx)], **_igamma_row(True))


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


# --------------------------------------------------------------------------- host rules
# (the host tier, funcgrad.core.host: SciPy's functions, imported on first use, with
# XLA's results where their conventions differ: the poles and the infinite arguments
# below; igamma_grad_a, which SciPy lacks, by its own series and continued fraction)


def _scipy_special() -> Any:
    import scipy.special  # (first use only: SciPy costs ~0.1 s to import)

    return scipy.special


def _host_float(x: Any) -> Any:
    """A host operand SciPy takes: float16 and bfloat16 computed in float32 (as XLA
    does), Python scalars and other arrays as they are."""
    if type(x) is np.ndarray and (x.dtype.kind == "V" or x.itemsize < 4):
        return x.astype(np.float32)
    return x


def _host_unary(name: str) -> Callable[[Any], Any]:
    def rule(x: Any) -> Any:
        return getattr(_scipy_special(), name)(_host_float(x))

    return rule


def _is_int(v: Any) -> Any:
    """Where ``v`` is an integer (``±inf`` included, as ``floor(v) == v`` says)."""
    return np.floor(v) == v


def _host_igamma(a: Any, x: Any) -> Any:
    a, x = _host_float(a), _host_float(x)
    out = _scipy_special().gammainc(a, x)
    # XLA at a == 0: NaN for x < 1, 1 from there on (SciPy: 1 for x > 0); at a == inf: 0
    # for x < 1, NaN from there on, 1 at x == inf (SciPy: 0, NaN at x == inf)
    out = np.where(a == 0, np.where(x >= 1, 1.0, np.nan), out)
    at_inf = np.where(x < 1, 0.0, np.where(x == np.inf, 1.0, np.nan))
    return np.where(a == np.inf, np.where(x < 0, np.nan, at_inf), out)


def _host_igammac(a: Any, x: Any) -> Any:
    a, x = _host_float(a), _host_float(x)
    out = _scipy_special().gammaincc(a, x)
    # XLA at a == inf: 1 for x < 1, NaN from there on, 0 at x == inf
    at_inf = np.where(x < 1, 1.0, np.where(x == np.inf, 0.0, np.nan))
    return np.where(a == np.inf, np.where(x < 0, np.nan, at_inf), out)


def _host_zeta(x: Any, q: Any) -> Any:
    x, q = _host_float(x), _host_float(q)
    out = _scipy_special().zeta(x, q)
    # XLA: NaN for x < 1, at q == inf, for x == inf and x == NaN; at the poles (q a
    # non-positive integer, -inf included) +inf for an even integer x, else NaN; +inf
    # for x == 1 whatever q
    out = np.where((x < 1) | (q == np.inf) | (x == np.inf), np.nan, out)
    pole = (q <= 0) & _is_int(q)
    even = np.isfinite(x) & _is_int(np.multiply(x, 0.5))
    out = np.where(pole, np.where(even, np.inf, np.nan), out)
    return np.where(x == 1, np.inf, out)


def _host_polygamma(m: Any, x: Any) -> Any:
    """``polygamma(m, x)``: digamma for ``m == 0``, ``(-1)^(m+1) m! zeta(m + 1, x)``
    (XLA's zeta, poles included) for a positive integer ``m``, NaN for any other ``m``."""
    m, x = _host_float(m), _host_float(x)
    sc = _scipy_special()
    mm = np.where(_is_int(m) & (m >= 0) & np.isfinite(m), m, np.nan)
    psi = np.where((x <= 0) & _is_int(x), np.nan, sc.psi(x))  # (XLA: NaN at the poles)
    z = _host_zeta(np.add(mm, 1), x)
    sign = np.where(np.remainder(mm, 2) == 1, 1.0, -1.0)
    higher = np.multiply(np.multiply(sign, sc.gamma(np.add(mm, 1))), z)
    return np.where(mm == 0, psi, np.where(np.isnan(mm), np.nan, higher))


def _host_betainc(a: Any, b: Any, x: Any) -> Any:
    return _scipy_special().betainc(_host_float(a), _host_float(b), _host_float(x))


#: at most this many terms of a series or continued fraction (XLA stops near there too)
_MAX_TERMS = 4000


def _iterate(state: list, step: Callable, done: Callable, finish: Callable) -> np.ndarray:
    """Run ``state = step(k, state)`` for ``k = 1, 2, ...`` elementwise on 1-d arrays,
    every 4 steps setting aside the elements ``done(state)`` says have converged (their
    ``finish(state)``), until none is left or :data:`_MAX_TERMS`."""
    out = np.empty_like(state[0])
    idx = np.arange(out.size)
    for k in range(1, _MAX_TERMS + 1):
        state = step(k, state)
        if k % 4 == 0 or k == _MAX_TERMS:
            ok = done(state) if k < _MAX_TERMS else np.ones(idx.size, bool)
            if ok.any():
                out[idx[ok]] = finish([v[ok] for v in state])
                keep = ~ok
                idx = idx[keep]
                state = [v[keep] for v in state]
                if not idx.size:
                    break
    return out


def _igamma_grad_a_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dP(a, x)/da`` for ``x < a + 1``: ``P = F S`` with ``F = x^a e^-x / Gamma(a+1)``
    and ``S = sum_n c_n``, ``c_0 = 1``, ``c_n = c_{n-1} x / (a + n)``, differentiated
    term by term (``dc_n = dc_{n-1} x / (a + n) - c_n / (a + n)``)."""
    sc = _scipy_special()
    eps = np.finfo(np.float64).eps

    def step(k: int, st: list) -> list:
        a, x, c, dc, s, ds = st
        r = x / (a + k)
        c, dc = c * r, dc * r - c * r / (a + k)
        return [a, x, c, dc, s + c, ds + dc]

    def done(st: list) -> np.ndarray:
        _, _, c, dc, s, ds = st
        return (np.abs(c) <= eps * np.abs(s)) & (np.abs(dc) <= eps * np.abs(ds))

    def finish(st: list) -> np.ndarray:
        a, x, _, _, s, ds = st
        f = np.exp(a * np.log(x) - x - sc.gammaln(a + 1))
        return f * ((np.log(x) - sc.psi(a + 1)) * s + ds)

    one, zero = np.ones_like(a), np.zeros_like(a)
    return _iterate([a, x, one, zero, one, zero], step, done, finish)


def _igamma_grad_a_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dP(a, x)/da = -dQ(a, x)/da`` for ``x >= a + 1``: ``Q = F g`` with
    ``F = x^a e^-x / Gamma(a)`` and ``g`` the continued fraction
    ``1 / (b_1 + a_2 / (b_2 + ...))``, ``b_n = x + 2n - 1 - a``, ``a_{n+1} = -n (n - a)``,
    evaluated by its continuants ``A_n / B_n`` carried with their derivatives in ``a``
    (all rescaled together by ``1 / |B_n|``, which keeps both ``g`` and ``dg``)."""
    sc = _scipy_special()
    tol = 1e-14

    def step(n: int, st: list) -> list:
        a, x, p2, p1, q2, q1, dp2, dp1, dq2, dq1, g, dg, g_old, dg_old = st
        bn = x + (2 * n - 1) - a  # (d bn / da = -1)
        if n == 1:
            p0, q0, dp0, dq0 = bn * p1 + p2, bn * q1 + q2, -p1 + bn * dp1, -q1 + bn * dq1
        else:
            an, dan = -(n - 1) * ((n - 1) - a), float(n - 1)
            p0 = bn * p1 + an * p2
            q0 = bn * q1 + an * q2
            dp0 = -p1 + bn * dp1 + dan * p2 + an * dp2
            dq0 = -q1 + bn * dq1 + dan * q2 + an * dq2
        scale = 1 / np.where(q0 == 0, 1.0, np.abs(q0))
        p2, p1, q2, q1 = p1 * scale, p0 * scale, q1 * scale, q0 * scale
        dp2, dp1, dq2, dq1 = dp1 * scale, dp0 * scale, dq1 * scale, dq0 * scale
        if n % 4 == 3:  # (the values 4 steps apart, for the test of convergence)
            g_old, dg_old = p1 / q1, (dp1 * q1 - p1 * dq1) / (q1 * q1)
        if n % 4 == 0:
            g, dg = p1 / q1, (dp1 * q1 - p1 * dq1) / (q1 * q1)
        return [a, x, p2, p1, q2, q1, dp2, dp1, dq2, dq1, g, dg, g_old, dg_old]

    def done(st: list) -> np.ndarray:
        g, dg, g_old, dg_old = st[-4:]
        return (np.abs(g - g_old) <= tol * np.abs(g)) & (np.abs(dg - dg_old) <= tol * np.abs(dg))

    def finish(st: list) -> np.ndarray:
        a, x, g, dg = st[0], st[1], st[-4], st[-3]
        f = np.exp(a * np.log(x) - x - sc.gammaln(a))
        return -(f * ((np.log(x) - sc.psi(a)) * g + dg))

    one, zero = np.ones_like(a), np.zeros_like(a)
    nan = np.full_like(a, np.nan)
    st = [a, x, one, zero, zero, one, zero, zero, zero, zero, nan, nan, nan, nan]
    return _iterate(st, step, done, finish)


def _host_igamma_grad_a(a: Any, x: Any) -> Any:
    """``d igamma(a, x) / da``; XLA's results at the edges: NaN for ``a <= 0``, ``x < 0``,
    ``x == inf`` (and ``a == inf`` with ``x > 0``), 0 at ``x == 0``."""
    a = np.asarray(a, np.float64)
    x = np.asarray(x, np.float64)
    a, x = np.broadcast_arrays(a, x)
    ok = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    out = np.where((x == 0) & (a > 0), 0.0, np.nan)
    series = ok & (x < a + 1)
    fraction = ok & ~series
    if series.any():
        out[series] = _igamma_grad_a_series(a[series], x[series])
    if fraction.any():
        out[fraction] = _igamma_grad_a_fraction(a[fraction], x[fraction])
    return out


erfc_p.host = _host_unary("erfc")
bessel_i0e_p.host = _host_unary("i0e")
bessel_i1e_p.host = _host_unary("i1e")
for _p, _rule in (
    (igamma_p, _host_igamma),
    (igammac_p, _host_igammac),
    (igamma_grad_a_p, _host_igamma_grad_a),
    (betainc_p, _host_betainc),
    (polygamma_p, _host_polygamma),
    (zeta_p, _host_zeta),
):
    _p.host = _rule
    _p.host_join = True
