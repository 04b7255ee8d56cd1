"""``scipy.special.owens_t``: Owen's T function
``T(h, a) = 1/(2 pi) int_0^a exp(-h**2 (1 + x**2) / 2) / (1 + x**2) dx``.

``T`` is even in ``h`` and odd in ``a``, so it is computed at ``|h|``, ``|a|``. For
``a <= 1``: ``exp(-h**2/2) / (2 pi)`` times ``int_0^X exp(-(h x)**2 / 2) / (1 + x**2) dx``
by 48-point Gauss-Legendre quadrature, ``X = min(a, 9/h)`` (the rest of the integrand is
below ``exp(-40)`` of its peak); the integrand is entire but for poles at ``+-i``, at least
as far from ``[0, X]`` as its length, so the rule reaches rounding. For ``a > 1``:
``T(h, a) = (Q(h) + Q(a h)) / 2 - Q(h) Q(a h) - T(a h, 1/a)`` with ``Q`` the normal upper
tail (``erfc``), which keeps the relative accuracy where ``T`` is small. The derivatives
are JAX's: ``-exp(-h**2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi))`` and
``exp(-(1 + a**2) h**2 / 2) / (2 pi (1 + a**2))``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import special as sp

__all__ = ["owens_t"]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)
_CUT = 9.0  # exp(-_CUT**2 / 2) ~ 2.6e-18


def _k(x: Any, v: Any) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _upper_tail(x: Any) -> Any:
    return _k(x, 0.5) * sp.erfc(x * _k(x, math.sqrt(0.5)))


def _t_small_a(h: Any, a: Any) -> Any:
    """``T(h, a)`` for ``h >= 0``, ``0 <= a <= 1`` (finite)."""
    reach = _k(h, _CUT) / fnp.where(h > 0, h, fnp.ones_like(h))
    top = fnp.where(h * a > _CUT, reach, a)
    half = (top / 2)[..., None]
    x = half * (_k(h, _NODES) + 1)
    hx = h[..., None] * x
    f = fnp.exp(_k(h, -0.5) * hx * hx) / (1 + x * x)
    integral = fnp.sum(f * _k(h, _WEIGHTS), axis=-1) * (top / 2)
    return fnp.exp(_k(h, -0.5) * h * h) * integral * _k(h, 1 / (2 * math.pi))


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    ha, aa = fnp.abs(h), fnp.abs(a)
    big = aa > 1
    inv = 1 / fnp.where(big, aa, fnp.ones_like(aa))
    ah = fnp.where(big & fnp.isfinite(aa), aa * ha, fnp.where(big, _k(h, np.inf), ha))
    finite_h = fnp.where(fnp.isfinite(ah), ah, fnp.zeros_like(ah))
    t = _t_small_a(finite_h, fnp.where(big, inv, aa))
    t = fnp.where(fnp.isfinite(ah), t, fnp.zeros_like(t))  # T(inf, .) = 0
    qh, qah = _upper_tail(ha), _upper_tail(ah)
    out = fnp.where(big, _k(h, 0.5) * (qh + qah) - qh * qah - t, t)
    out = fnp.where(ha == 0, ew.atan(aa) * _k(h, 1 / (2 * math.pi)), out)
    out = fnp.where(fnp.isinf(ha), fnp.zeros_like(out), out)
    out = fnp.where(a < 0, -out, out)
    return fnp.where(fnp.isnan(h) | fnp.isnan(a), _k(h, np.nan), out)


@_owens_t.defjvp
def _owens_t_jvp(primals: tuple, tangents: tuple) -> tuple:
    (h, a), (dh, da) = primals, tangents
    h2 = h * h
    d_h = (
        -fnp.exp(_k(h, -0.5) * h2)
        * ew.erf(a * h * _k(h, math.sqrt(0.5)))
        / _k(h, 2 * math.sqrt(2 * math.pi))
    )
    a2 = 1 + a * a
    d_a = fnp.exp(_k(h, -0.5) * a2 * h2) / (_k(h, 2 * math.pi) * a2)
    return _owens_t(h, a), d_h * dh + d_a * da


def owens_t(h: ArrayLike, a: ArrayLike) -> Any:
    """Owen's T function ``T(h, a)``: the probability that ``X > h`` and
    ``0 < Y < a X`` for independent standard normal ``X``, ``Y``."""
    h, a = (fnp.asarray(v) for v in fnp.broadcast_arrays(*promote("owens_t", h, a, to="inexact")))
    if np.issubdtype(h.dtype, np.complexfloating):
        raise ValueError(f"owens_t does not support complex-valued inputs{here()}")
    if h.dtype.itemsize < 4:
        f32 = np.float32
        return fnp.asarray(_owens_t(fnp.asarray(h, f32), fnp.asarray(a, f32)), h.dtype)
    return _owens_t(h, a)
