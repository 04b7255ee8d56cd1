"""Array kernels of ``torch.special``'s Bessel and Airy functions (``bessel_j0``,
``bessel_y1``, ``modified_bessel_k0``, ``scaled_modified_bessel_k1``, ``airy_ai``, ...),
written with ``funcgrad.numpy`` and evaluated in float64.

Each function splits its domain where one method is accurate: a power series where the
argument is small, a quadrature of an integral representation in between, an asymptotic
expansion where it is large (Abramowitz & Stegun 9.1, 9.2, 9.6, 9.7, 10.4). The
thresholds keep the error of either side near 1e-12 in float64 (series cancellation
grows like ``exp(x)``, the asymptotic tail shrinks like ``exp(-2x)``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp

_F64 = np.dtype(np.float64)
_EULER = 0.57721566490153286061
#: below it, J/Y by their power series; above, by Hankel's asymptotic expansion
_JY_SPLIT = 12.0
#: below it, K by its power series; up to ``_K_ASYM``, by quadrature; above, asymptotically
_K_SERIES = 2.0
_K_ASYM = 16.0
#: ``airy_ai``: Maclaurin series on ``(_AI_NEG, _AI_POS)``
_AI_NEG = -8.0
_AI_POS = 2.0
#: terms of the power series (J/Y for ``x < 12``, K for ``x <= 2``, Ai for ``|x| < 8``:
#: the last term is below 1e-17 of the sum) and of the asymptotic expansions
_JY_TERMS = 32
_K_TERMS = 16
_AI_TERMS = 36
_ASYM_TERMS = 14
_K_ASYM_TERMS = 20


def _hankel_coefficients(nu: float, count: int) -> list[float]:
    """``a_k(nu) = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k)`` for ``k < count``."""
    mu = 4 * nu * nu
    out = [1.0]
    for k in range(1, count):
        out.append(out[-1] * (mu - (2 * k - 1) ** 2) / (k * 8))
    return out


def _harmonic(k: int) -> float:
    return math.fsum(1 / j for j in range(1, k + 1))


def _series(z: Any, coefficients: list[float]) -> Any:
    """``sum_k c_k z^k`` by Horner's rule."""
    out = fnp.zeros_like(z) + coefficients[-1]
    for c in reversed(coefficients[:-1]):
        out = out * z + c
    return out


def _jy_small(x: Any, order: int) -> tuple[Any, Any]:
    """``J_order(x)`` and ``Y_order(x)`` (``order`` 0 or 1) for ``0 < x`` by their series."""
    q = -x * x / 4
    log_half = fnp.log(x / 2)
    n = _JY_TERMS
    if order == 0:
        j = _series(q, [1 / math.factorial(k) ** 2 for k in range(n)])
        s = _series(q, [-_harmonic(k) / math.factorial(k) ** 2 for k in range(n)])
        return j, 2 / math.pi * ((log_half + _EULER) * j + s)
    fk = [1 / (math.factorial(k) * math.factorial(k + 1)) for k in range(n)]
    j = x / 2 * _series(q, fk)
    psi = [_harmonic(k) + _harmonic(k + 1) - 2 * _EULER for k in range(n)]
    s = _series(q, [p * c for p, c in zip(psi, fk)])
    y = -2 / (math.pi * x) + 2 / math.pi * log_half * j - x / (2 * math.pi) * s
    return j, y


def _jy_large(x: Any, order: int) -> tuple[Any, Any]:
    """``J_order(x)`` and ``Y_order(x)`` for large ``x``, Hankel's expansion."""
    a = _hankel_coefficients(order, 2 * _ASYM_TERMS)
    r = 1 / (x * x)
    p = _series(r, [(-1) ** k * a[2 * k] for k in range(_ASYM_TERMS)])
    q = _series(r, [(-1) ** k * a[2 * k + 1] for k in range(_ASYM_TERMS)]) / x
    c, s = fnp.cos(x), fnp.sin(x)
    # cos and sin of x - (order / 2 + 1/4) pi, without rounding the shifted argument
    if order == 0:
        cc, ss = (c + s) / math.sqrt(2), (s - c) / math.sqrt(2)
    else:
        cc, ss = (s - c) / math.sqrt(2), -(s + c) / math.sqrt(2)
    scale = fnp.sqrt(2 / (math.pi * x))
    return scale * (p * cc - q * ss), scale * (p * ss + q * cc)


def _jy(x: Any, order: int) -> tuple[Any, Any]:
    ax = fnp.abs(x)
    small = ax < _JY_SPLIT
    xs = fnp.where(small, fnp.maximum(ax, 1e-300), 1.0)
    xl = fnp.where(small, _JY_SPLIT, ax)
    js, ys = _jy_small(xs, order)
    jl, yl = _jy_large(xl, order)
    return fnp.where(small, js, jl), fnp.where(small, ys, yl)


def bessel_j0(x: Any) -> Any:
    """``J0(x)`` (even)."""
    x = fnp.asarray(x, _F64)
    j = _jy(x, 0)[0]
    return fnp.where(x == 0, 1.0, fnp.where(fnp.isinf(x), np.nan, j))


def bessel_j1(x: Any) -> Any:
    """``J1(x)`` (odd)."""
    x = fnp.asarray(x, _F64)
    j = fnp.sign(x) * _jy(x, 1)[0]
    return fnp.where(x == 0, 0.0, fnp.where(fnp.isinf(x), np.nan, j))


def _y(x: Any, order: int) -> Any:
    x = fnp.asarray(x, _F64)
    y = _jy(x, order)[1]
    y = fnp.where(x == 0, -np.inf, y)
    return fnp.where((x < 0) | fnp.isinf(x), np.nan, y)


def bessel_y0(x: Any) -> Any:
    """``Y0(x)``: ``-inf`` at 0, NaN for ``x < 0``."""
    return _y(x, 0)


def bessel_y1(x: Any) -> Any:
    """``Y1(x)``: ``-inf`` at 0, NaN for ``x < 0``."""
    return _y(x, 1)


def _k_small(x: Any, order: int) -> Any:
    """``K_order(x)`` (``order`` 0 or 1) for ``0 < x <= 2`` by its series."""
    q = x * x / 4
    log_half = fnp.log(x / 2)
    n = _K_TERMS
    if order == 0:
        i0 = _series(q, [1 / math.factorial(k) ** 2 for k in range(n)])
        s = _series(q, [_harmonic(k) / math.factorial(k) ** 2 for k in range(n)])
        return -(log_half + _EULER) * i0 + s
    fk = [1 / (math.factorial(k) * math.factorial(k + 1)) for k in range(n)]
    i1 = x / 2 * _series(q, fk)
    psi = [_harmonic(k) + _harmonic(k + 1) - 2 * _EULER for k in range(n)]
    s = _series(q, [p * c for p, c in zip(psi, fk)])
    return 1 / x + log_half * i1 - x / 4 * s


#: trapezoid nodes of ``int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt`` for ``1.8 <= x <=
#: 16`` (the integrand is below 1e-30 of its peak past ``t = 4``; the step's error is
#: below 1e-13 of the sum there, measured against SciPy's ``kve``)
_STEP = 0.2
_NODES = np.arange(0, 4.01, _STEP)


def _k_scaled_quadrature(x: Any, nu: float) -> Any:
    """``exp(x) K_nu(x)`` by the trapezoid rule on its integral over ``t`` (exact to
    ~1e-14 for ``1.8 <= x <= 16``: the integrand is analytic and decays doubly
    exponentially)."""
    weights = _STEP * np.cosh(nu * _NODES)
    weights[0] /= 2
    arg = 2 * np.sinh(_NODES / 2) ** 2  # cosh t - 1 without cancellation
    out = fnp.zeros_like(x)
    for w, a in zip(weights, arg):
        out = out + w * fnp.exp(-x * a)
    return out


def _k_scaled_large(x: Any, nu: float) -> Any:
    """``exp(x) K_nu(x)`` for large ``x``, its asymptotic expansion."""
    a = _hankel_coefficients(nu, _K_ASYM_TERMS)
    return fnp.sqrt(math.pi / (2 * x)) * _series(1 / x, a)


def _k_scaled_mid_large(x: Any, nu: float) -> Any:
    """``exp(x) K_nu(x)`` for ``x >= 1.8``."""
    large = x > _K_ASYM
    quad = _k_scaled_quadrature(fnp.where(large, 1.0, x), nu)
    return fnp.where(large, _k_scaled_large(fnp.where(large, x, _K_ASYM), nu), quad)


def _k(x: Any, order: int, scaled: bool) -> Any:
    x = fnp.asarray(x, _F64)
    small = x <= _K_SERIES
    xs = fnp.where(small & (x > 0), x, 1.0)
    xl = fnp.where(small, _K_SERIES + 1, x)
    ks = _k_small(xs, order)
    ks = ks * fnp.exp(xs) if scaled else ks
    kl = _k_scaled_mid_large(xl, order)
    kl = kl if scaled else kl * fnp.exp(-xl)
    out = fnp.where(small, ks, kl)
    out = fnp.where(x == 0, np.inf, out)
    return fnp.where(x < 0, np.nan, out)


def modified_bessel_k0(x: Any) -> Any:
    """``K0(x)``: ``inf`` at 0, NaN for ``x < 0``."""
    return _k(x, 0, False)


def modified_bessel_k1(x: Any) -> Any:
    """``K1(x)``: ``inf`` at 0, NaN for ``x < 0``."""
    return _k(x, 1, False)


def scaled_modified_bessel_k0(x: Any) -> Any:
    """``exp(x) K0(x)``."""
    return _k(x, 0, True)


def scaled_modified_bessel_k1(x: Any) -> Any:
    """``exp(x) K1(x)``."""
    return _k(x, 1, True)


def spherical_bessel_j0(x: Any) -> Any:
    """``sin(x) / x`` (1 at 0; its Taylor series near 0)."""
    x = fnp.asarray(x, _F64)
    small = fnp.abs(x) < 0.5
    xs = fnp.where(small, x, 1.0)
    series = _series(-xs * xs, [1 / math.factorial(2 * k + 1) for k in range(12)])
    xl = fnp.where(small, 1.0, x)
    return fnp.where(small, series, fnp.sin(xl) / xl)


#: ``Ai(0)`` and ``-Ai'(0)``
_AI0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))
_AI1 = 1 / (3 ** (1 / 3) * math.gamma(1 / 3))


def _airy_series(x: Any) -> Any:
    """``Ai(x)`` by its Maclaurin series (``Ai(0) f(x) + Ai'(0) g(x)``)."""
    n = _AI_TERMS
    f, g = [1.0], [1.0]
    for k in range(1, n):
        f.append(f[-1] / ((3 * k) * (3 * k - 1)))
        g.append(g[-1] / ((3 * k) * (3 * k + 1)))
    c = x * x * x
    return _AI0 * _series(c, f) - _AI1 * x * _series(c, g)


def _airy_negative(x: Any) -> Any:
    """``Ai(x)`` for large negative ``x``, its oscillating asymptotic expansion."""
    ax = -x
    zeta = 2 / 3 * ax * fnp.sqrt(ax)
    u = [1.0]
    for k in range(1, 2 * _ASYM_TERMS):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k))
    r = 1 / (zeta * zeta)
    p = _series(r, [(-1) ** k * u[2 * k] for k in range(_ASYM_TERMS)])
    q = _series(r, [(-1) ** k * u[2 * k + 1] for k in range(_ASYM_TERMS)]) / zeta
    phase = zeta + math.pi / 4
    return (fnp.sin(phase) * p - fnp.cos(phase) * q) / (math.sqrt(math.pi) * fnp.sqrt(fnp.sqrt(ax)))


def _airy_positive(x: Any) -> Any:
    """``Ai(x) = sqrt(x / 3) K_{1/3}(zeta) / pi`` for ``x >= 2`` (``zeta >= 1.88``)."""
    zeta = 2 / 3 * x * fnp.sqrt(x)
    return fnp.sqrt(x / 3) / math.pi * _k_scaled_mid_large(zeta, 1 / 3) * fnp.exp(-zeta)


def airy_ai(x: Any) -> Any:
    """The Airy function ``Ai(x)`` (NaN at ``+-inf``, as PyTorch's)."""
    x = fnp.asarray(x, _F64)
    neg = x <= _AI_NEG
    pos = x >= _AI_POS
    mid = fnp.where(neg | pos, 0.0, x)
    out = fnp.where(neg, _airy_negative(fnp.where(neg, x, _AI_NEG)), _airy_series(mid))
    out = fnp.where(pos, _airy_positive(fnp.where(pos, x, _AI_POS)), out)
    return fnp.where(fnp.isinf(x), np.nan, out)
