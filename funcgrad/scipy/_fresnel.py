"""``scipy.special.fresnel``: the Fresnel integrals ``S(x) = int_0^x sin(pi t**2 / 2) dt``
and ``C(x) = int_0^x cos(pi t**2 / 2) dt``, returned as ``(S, C)``.

Both are odd, so they are computed at ``|x|``. Up to ``|x| = 1.25``: their power series
in ``x**4`` (14 terms each: the last below 1e-17 there). Beyond: through the Faddeeva
function (``_faddeeva.wofz``), ``C + iS = (1 + i)/2 (1 - exp(i pi x**2 / 2) w(zeta))``
with ``zeta = sqrt(pi) x (1 + i) / 2``, which has no cancellation there (``w`` is small
and both integrals near 1/2). The phase ``pi x**2 / 2`` is taken from ``x**2`` reduced
modulo 4 exactly (``x`` split in two halves of its mantissa, each product reduced), so
it stays accurate for large ``x``. Beyond ``|x| = 1e100`` (the split would overflow):
the limits ``+-1/2``. The derivatives are JAX's: ``sin(pi x**2 / 2)`` and
``cos(pi x**2 / 2)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote
from funcgrad.scipy._faddeeva import wofz

__all__ = ["fresnel"]

_SERIES_UP_TO = 1.25
_TERMS = 14
_HUGE = 1e100
# S: sum_n (-1)**n (pi/2)**(2n+1) x**(4n+3) / ((2n+1)! (4n+3)); C: the even powers
_S_COEFFS = [
    (-1) ** n * (math.pi / 2) ** (2 * n + 1) / (math.factorial(2 * n + 1) * (4 * n + 3))
    for n in range(_TERMS)
]
_C_COEFFS = [
    (-1) ** n * (math.pi / 2) ** (2 * n) / (math.factorial(2 * n) * (4 * n + 1))
    for n in range(_TERMS)
]


def _k(x: Any, v: float) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _horner(coeffs: list[float], y: Any) -> Any:
    total = fnp.zeros_like(y)
    for c in reversed(coeffs):
        total = total * y + _k(y, c)
    return total


def _sin_cos_phase(x: Any) -> tuple[Any, Any]:
    """``sin`` and ``cos`` of ``pi x**2 / 2`` for ``0 <= x <= 1e100``, with ``x**2``
    reduced modulo 4 first: ``x = a + b`` (Dekker's split), ``a*a`` and ``2*a*b``
    exact and each reduced alone."""
    split = _k(x, 2.0 ** (27 if x.dtype == np.float64 else 12) + 1)
    p = x * split
    a = p - (p - x)
    b = x - a
    four = _k(x, 4.0)
    r = fnp.fmod(a * a, four) + fnp.fmod(2 * a * b, four) + b * b
    theta = _k(x, math.pi / 2) * fnp.fmod(r, four)
    return fnp.sin(theta), fnp.cos(theta)


def _fresnel_abs(x: Any) -> tuple[Any, Any]:
    """``(S, C)`` at ``x >= 0``."""
    one = fnp.ones_like(x)
    small = x <= _SERIES_UP_TO
    xs = fnp.where(small, x, one)
    x4 = (xs * xs) * (xs * xs)
    s_small = xs * xs * xs * _horner(_S_COEFFS, x4)
    c_small = xs * _horner(_C_COEFFS, x4)
    xl = fnp.where(small | (x > _HUGE), 2 * one, x)
    sin, cos = _sin_cos_phase(xl)
    cdt = np.result_type(x.dtype, np.complex64)
    zeta = fnp.asarray(xl * _k(x, math.sqrt(math.pi) / 2), cdt) * np.asarray(1 + 1j, cdt)
    phase = fnp.asarray(cos, cdt) + fnp.asarray(sin, cdt) * np.asarray(1j, cdt)
    big = np.asarray(0.5 + 0.5j, cdt) * (1 - phase * wofz(zeta))
    half = _k(x, 0.5)
    s_big = fnp.where(x > _HUGE, half, fnp.imag(big))
    c_big = fnp.where(x > _HUGE, half, fnp.real(big))
    return fnp.where(small, s_small, s_big), fnp.where(small, c_small, c_big)


@custom_jvp
def _fresnel(x: Any) -> tuple[Any, Any]:
    s, c = _fresnel_abs(fnp.abs(x))
    neg = x < 0
    return fnp.where(neg, -s, s), fnp.where(neg, -c, c)


@_fresnel.defjvp
def _fresnel_jvp(primals: tuple, tangents: tuple) -> tuple:
    ((x,), (t,)) = primals, tangents
    ax = fnp.abs(x)
    sin, cos = _sin_cos_phase(fnp.where(ax > _HUGE, fnp.zeros_like(x), ax))
    return _fresnel(x), (t * sin, t * cos)


def fresnel(x: ArrayLike) -> tuple[Any, Any]:
    """The Fresnel integrals ``(S(x), C(x))`` of a real ``x``: ``int_0^x sin(pi t**2/2) dt``
    and ``int_0^x cos(pi t**2/2) dt``."""
    (x,) = promote("fresnel", x, to="inexact")
    x = fnp.asarray(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"fresnel does not support complex-valued inputs{here()}")
    if x.dtype.itemsize < 4:
        s, c = _fresnel(fnp.asarray(x, np.float32))
        return fnp.asarray(s, x.dtype), fnp.asarray(c, x.dtype)
    return _fresnel(x)
