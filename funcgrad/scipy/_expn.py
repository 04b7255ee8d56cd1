"""``scipy.special.expn``: the generalized exponential integral
``E_n(x) = int_1^inf exp(-x t) / t**n dt`` of an integer ``n >= 0`` and a real ``x >= 0``.

``E_0(x) = exp(-x) / x``. For ``n >= 1``: up to ``x = 1`` the power series
``(-x)**(n-1) / (n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)**k / ((k - n + 1) k!)``
(30 terms); beyond, the continued fraction
``exp(-x) / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))`` evaluated
forward (modified Lentz) until a step changes it by less than the dtype's epsilon.
SciPy's values at the edges: ``inf`` at ``x = 0`` for ``n <= 1`` and ``1 / (n - 1)``
beyond, 0 at ``x = inf``, NaN for ``n < 0`` or ``x < 0``. A non-integer ``n`` gives NaN
(as JAX's; SciPy truncates it with a warning). The derivative in ``x`` is JAX's,
``-E_{n-1}(x)``; ``n`` is not differentiated (a zero tangent, as JAX's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import while_loop
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote
from funcgrad.primitives import elementwise as ew

__all__ = ["expn"]

_SERIES_TERMS = 30
_MAX_STEPS = 1000


def _k(x: Any, v: float) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _series(n: Any, x: Any) -> Any:
    """``E_n(x)`` for ``n >= 1``, ``0 < x <= 1``."""
    m = n - 1
    total = fnp.zeros_like(x)
    power = fnp.ones_like(x)  # (-x)**k / k!
    for k in range(_SERIES_TERMS):
        if k:
            power = power * (-x) / _k(x, k)
        skip = m == k
        denom = fnp.where(skip, fnp.ones_like(x), _k(x, k) - m)
        total = total + fnp.where(skip, fnp.zeros_like(x), power / denom)
    # (-x)**m / m! (psi(n) - log x), its size through logs (m! overflows first)
    size = fnp.exp(m * fnp.log(x) - ew.lgamma(n))
    sign = fnp.where(fnp.fmod(m, 2) == 0, fnp.ones_like(x), -fnp.ones_like(x))
    return sign * size * (ew.digamma(n) - fnp.log(x)) - total


def _continued_fraction(n: Any, x: Any) -> Any:
    """``E_n(x)`` for ``x > 1`` (modified Lentz: ``h`` the convergent, ``c``, ``d`` its
    ratios)."""
    eps = float(np.finfo(x.dtype).eps)
    tiny = _k(x, np.finfo(x.dtype).tiny)
    b = x + n
    d = 1 / b

    def more(state: tuple) -> Any:
        i, _, _, _, _, delta = state
        return (i < _MAX_STEPS) & fnp.any(fnp.abs(delta - 1) > eps)

    def step(state: tuple) -> tuple:
        i, b, c, d, h, _ = state
        fi = fnp.asarray(i, x.dtype)
        a = -fi * (n - 1 + fi)
        b = b + 2
        d = a * d + b
        d = 1 / fnp.where(d == 0, tiny, d)
        c = b + a / c
        c = fnp.where(c == 0, tiny, c)
        delta = c * d
        return i + 1, b, c, d, h * delta, delta

    init = (np.int32(1), b, fnp.full_like(x, 1 / float(tiny)), d, d, fnp.zeros_like(x))
    h = while_loop(more, step, init)[4]
    return h * fnp.exp(-x)


@custom_jvp
def _expn(n: Any, x: Any) -> Any:
    one = fnp.ones_like(x)
    pos = n >= 1
    low = pos & (x > 0) & (x <= 1)
    high = pos & (x > 1) & fnp.isfinite(x)
    s = _series(fnp.where(low, n, one), fnp.where(low, x, one))
    c = _continued_fraction(fnp.where(high, n, one), fnp.where(high, x, 2 * one))
    out = fnp.where(low, s, c)
    out = fnp.where(n == 0, fnp.exp(-x) / x, out)
    at0 = fnp.where(n <= 1, _k(x, np.inf), 1 / fnp.where(n <= 1, one, n - 1))
    out = fnp.where(x == 0, at0, fnp.where(fnp.isinf(x), fnp.zeros_like(x), out))
    bad = (n < 0) | (x < 0) | (fnp.floor(n) != n) | fnp.isnan(x) | fnp.isnan(n)
    return fnp.where(bad, _k(x, np.nan), out)


@_expn.defjvp
def _expn_jvp(primals: tuple, tangents: tuple) -> tuple:
    (n, x), (_, t) = primals, tangents
    return _expn(n, x), -t * _expn(n - 1, x)


def expn(n: ArrayLike, x: ArrayLike) -> Any:
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t**n dt``
    (an integer ``n >= 0``, a real ``x >= 0``; NaN elsewhere)."""
    n, x = (fnp.asarray(a) for a in fnp.broadcast_arrays(*promote("expn", n, x, to="inexact")))
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"expn does not support complex-valued inputs{here()}")
    if x.dtype.itemsize < 4:
        f32 = np.float32
        return fnp.asarray(_expn(fnp.asarray(n, f32), fnp.asarray(x, f32)), x.dtype)
    return _expn(n, x)
