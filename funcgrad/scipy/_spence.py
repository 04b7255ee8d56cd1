"""``scipy.special.spence``: the dilogarithm of a real ``x >= 0``,
``spence(x) = int_1^x log(t) / (1 - t) dt = Li2(1 - x)``.

With ``u = -log x`` (``|u| <= 1`` below), ``Li2(1 - x) = sum_n B_n u**(n+1) / (n+1)!``
(Bernoulli numbers, ``B_1 = -1/2``; the odd ones past it vanish), whose terms fall like
``(u / 2 pi)**n``: 14 terms reach 1e-17. Other ``x`` are brought there by the identities
``spence(x) = -spence(1/x) - log(x)**2 / 2`` (``x > e``) and
``spence(x) = pi**2/6 - log(x) log(1 - x) - spence(1 - x)`` (``x < 1/e``). SciPy's values
at the edges (``pi**2/6`` at 0, 0 at 1, NaN below 0 and at ``inf``). The derivative is
``log(x) / (1 - x)`` (-1 at 1); JAX's, autodiff of its piecewise rational form, is 0 at
1 and NaN for ``1 < x <= 2``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote

__all__ = ["spence"]

_TERMS = 14  # even Bernoulli numbers B_2 .. B_28


def _bernoulli_even(count: int) -> list[float]:
    """``B_2, B_4, ..., B_2count`` (exact, from the recurrence ``sum_k C(m+1, k) B_k = 0``)."""
    b = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return [float(b[2 * j]) for j in range(1, count + 1)]


# coefficients of u**(2j+1): B_2j / (2j+1)!
_COEFFS = [c / math.factorial(2 * j + 1) for j, c in enumerate(_bernoulli_even(_TERMS), 1)]


def _k(x: Any, v: float) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _li2_one_minus(x: Any) -> Any:
    """``Li2(1 - x)`` for ``1/e <= x <= e`` (``u = -log x`` in ``[-1, 1]``)."""
    u = -fnp.log(x)
    u2 = u * u
    total = fnp.zeros_like(u)
    for c in reversed(_COEFFS):
        total = (total + _k(x, c)) * u2
    return u * (1 + total) - _k(x, 0.25) * u2  # (B_1 u**2 / 2!)


@custom_jvp
def _spence(x: Any) -> Any:
    big = x > _k(x, math.e)
    y = fnp.where(big, 1 / fnp.where(big, x, fnp.ones_like(x)), x)  # in [0, e]
    small = y < _k(x, math.exp(-1.0))
    ys = fnp.where(small & (y > 0), y, fnp.ones_like(y))  # the reflected point, safe
    z = fnp.where(small, 1 - ys, y)
    s = _li2_one_minus(fnp.where(z > 0, z, fnp.ones_like(z)))
    s = fnp.where(small, _k(x, math.pi**2 / 6) - fnp.log(ys) * fnp.log1p(-ys) - s, s)
    lx = fnp.log(fnp.where(big, x, fnp.ones_like(x)))
    out = fnp.where(big, -s - _k(x, 0.5) * lx * lx, s)
    out = fnp.where(x == 0, _k(x, math.pi**2 / 6), fnp.where(x == 1, _k(x, 0.0), out))
    return fnp.where((x < 0) | ~fnp.isfinite(x), _k(x, np.nan), out)


@_spence.defjvp
def _spence_jvp(primals: tuple, tangents: tuple) -> tuple:
    ((x,), (t,)) = primals, tangents
    one = x == 1
    d = fnp.log(x) / fnp.where(one, fnp.ones_like(x), 1 - x)
    return _spence(x), t * fnp.where(one, -fnp.ones_like(x), d)


def spence(x: ArrayLike) -> Any:
    """Spence's function ``int_1^x log(t) / (1 - t) dt`` (the dilogarithm ``Li2(1 - x)``)
    of a real ``x >= 0`` (NaN below 0, as JAX's)."""
    x = fnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(
            f"x.dtype={x.dtype} is not supported, see docstring for supported types.{here()}"
        )
    (x,) = promote("spence", x, to="inexact")
    return _spence(fnp.asarray(x))
