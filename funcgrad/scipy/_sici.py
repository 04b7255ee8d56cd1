"""``scipy.special.sici``: the sine and cosine integrals ``Si(x) = int_0^x sin(t)/t dt``,
``Ci(x) = gamma + log x + int_0^x (cos t - 1)/t dt``.

Near zero (``|x| <= 4`` in float64, ``<= 3`` in lower precisions, where the power
series' terms stay small enough not to cancel) the power series; beyond, the continued
fraction of the exponential integral ``E1(ix) = -Ci(x) + i (Si(x) - pi/2)``, evaluated
from its tail with a fixed number of terms (40: about 1e-15 at ``x = 4``, and exact to
rounding far out; at ``x = 1e9`` the first term is the whole answer). As SciPy, a
negative ``x`` gives ``Si(-x) = -Si(x)`` and the real part ``Ci(|x|)`` (NaN at ``-inf``).
The derivatives are JAX's: ``sin(x)/x`` and ``cos(x)/x``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote

__all__ = ["sici"]

_SERIES_TERMS = 20
_CF_TERMS = 40


def _k(x: Any, v: Any) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _series(x: Any) -> tuple[Any, Any]:
    """``Si``, ``Ci`` by their power series in ``x**2`` (Horner, highest term first)."""
    x2 = x * x
    si = fnp.zeros_like(x)
    ci = fnp.zeros_like(x)
    for k in range(_SERIES_TERMS, -1, -1):
        s_coef = (-1) ** k / ((2 * k + 1) * math.factorial(2 * k + 1))
        si = si * x2 + _k(x, s_coef)
        if k >= 1:
            ci = ci * x2 + _k(x, (-1) ** k / (2 * k * math.factorial(2 * k)))
    ci = ci * x2  # (the sum starts at x**2)
    safe = fnp.where(x > 0, x, fnp.ones_like(x))
    log_x = fnp.where(x > 0, fnp.log(safe), _k(x, -np.inf))
    return x * si, _k(x, np.euler_gamma) + log_x + ci


def _continued_fraction(x: Any) -> tuple[Any, Any]:
    """``Si``, ``Ci`` from ``E1(ix) = exp(-ix) / (ix + 1 - 1/(ix + 3 - 4/(ix + 5 - ...)))``."""
    z = 1j * x
    t = z + _k(z, 2 * _CF_TERMS + 1)
    for k in range(_CF_TERMS, 0, -1):
        t = z + _k(z, 2 * k - 1) - _k(z, k * k) / t
    e1 = fnp.exp(-z) / t
    return fnp.imag(e1) + math.pi / 2, -fnp.real(e1)


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    ax = fnp.abs(x)
    switch = 4.0 if x.dtype == np.float64 else 3.0
    near = ax <= switch
    inf = fnp.isinf(ax)
    s_near, c_near = _series(fnp.where(near, ax, fnp.zeros_like(ax)))
    far_x = fnp.where(near | inf, _k(x, 2 * switch), ax)
    cx = fnp.asarray(far_x, fnp.result_type(x.dtype, np.complex64))
    s_far, c_far = _continued_fraction(cx)
    si = fnp.where(near, s_near, fnp.where(inf, _k(x, math.pi / 2), s_far))
    ci = fnp.where(near, c_near, fnp.where(inf, fnp.zeros_like(x), c_far))
    ci = fnp.where(fnp.isneginf(x), _k(x, np.nan), ci)
    return fnp.sign(x) * si, ci


@_sici.defjvp
def _sici_jvp(primals: tuple, tangents: tuple) -> tuple:
    ((x,), (t,)) = primals, tangents
    out = _sici(x)
    return out, (t * fnp.sinc(x / _k(x, math.pi)), t * fnp.cos(x) / x)


def sici(x: ArrayLike) -> tuple[Any, Any]:
    """The sine and cosine integrals ``(Si(x), Ci(x))`` of a real ``x``."""
    (x,) = promote("sici", x, to="inexact")
    x = fnp.asarray(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.{here()}")
    if x.dtype.itemsize < 4:  # (half precisions: computed in float32)
        si, ci = _sici(fnp.asarray(x, np.float32))
        return fnp.asarray(si, x.dtype), fnp.asarray(ci, x.dtype)
    return _sici(x)
