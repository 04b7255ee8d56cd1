"""``scipy.special.exp1`` and ``expi``: the exponential integrals
``E1(x) = int_x^inf exp(-t)/t dt`` and ``Ei(x) = -E1(-x)`` (its principal value for
``x > 0``).

``E1``: the power series ``-gamma - log x - sum_k (-x)**k / (k k!)`` up to ``x = 2``, the
continued fraction ``exp(-x) / (x + 1 - 1/(x + 3 - 4/(x + 5 - ...)))`` (60 terms, from the
tail) beyond. ``Ei`` for ``x > 0``: the series ``gamma + log x + sum_k x**k / (k k!)``
summed to convergence up to 40 (20 below float64), the asymptotic series
``exp(x)/x sum_k k!/x**k`` (as many terms as the switch point) beyond. SciPy's values at
the edges (``E1(0) = inf``, NaN for ``x < 0``; ``Ei(0) = -inf``). The derivatives are
JAX's: ``-exp(-x)/x`` and ``exp(x)/x``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import while_loop
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote

__all__ = ["exp1", "expi"]

_E1_SWITCH = 2.0
_CF_TERMS = 60


def _k(x: Any, v: Any) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _e1_series(x: Any) -> Any:
    """``E1`` for ``0 < x <= 2`` (28 terms: the last below 1e-20 there)."""
    total = fnp.zeros_like(x)
    for k in range(28, 0, -1):  # Horner in x of sum_k (-1)**(k+1) x**k / (k k!)
        total = (total + _k(x, (-1) ** (k + 1) / (k * math.factorial(k)))) * x
    return -_k(x, np.euler_gamma) - fnp.log(x) + total


def _e1_continued_fraction(x: Any) -> Any:
    t = x + _k(x, 2 * _CF_TERMS + 1)
    for k in range(_CF_TERMS, 0, -1):
        t = x + _k(x, 2 * k - 1) - _k(x, k * k) / t
    return fnp.exp(-x) / t


def _e1_positive(x: Any) -> Any:
    """``E1(x)`` for ``x > 0`` (``x`` of other values: any finite result)."""
    small = x <= _E1_SWITCH
    s = _e1_series(fnp.where(small & (x > 0), x, fnp.ones_like(x)))
    c = _e1_continued_fraction(fnp.where(small | fnp.isinf(x), _k(x, 2 * _E1_SWITCH), x))
    return fnp.where(small, s, fnp.where(fnp.isinf(x), fnp.zeros_like(x), c))


def _ei_series(x: Any) -> Any:
    """``Ei(x) = gamma + log x + sum_k x**k / (k k!)`` summed until a term is below eps."""
    eps = float(np.finfo(x.dtype).eps)

    def more(state: tuple) -> Any:
        return (state[0] < 500) & fnp.any(state[2] > eps * state[1])

    def step(state: tuple) -> tuple:
        k, total, power = state  # power: x**k / k!
        kf = fnp.asarray(k + 1, x.dtype)
        power = power * x / kf
        return k + 1, total + power / kf, power

    out = while_loop(more, step, (np.int32(0), fnp.zeros_like(x), fnp.ones_like(x)))
    return _k(x, np.euler_gamma) + fnp.log(x) + out[1]


def _ei_asymptotic(x: Any, terms: int) -> Any:
    total = fnp.ones_like(x)
    for k in range(terms, 0, -1):  # 1 + 1/x (1 + 2/x (1 + 3/x ...)): sum_k k!/x**k
        total = 1 + _k(x, k) / x * total
    half = fnp.exp(x / 2)  # (exp(x) / x: exp(x) alone overflows first)
    return half * (half / x) * total


@custom_jvp
def _exp1(x: Any) -> Any:
    out = _e1_positive(x)
    out = fnp.where(x == 0, _k(x, np.inf), out)
    return fnp.where((x < 0) | fnp.isnan(x), _k(x, np.nan), out)


@_exp1.defjvp
def _exp1_jvp(primals: tuple, tangents: tuple) -> tuple:
    ((x,), (t,)) = primals, tangents
    return _exp1(x), t * (-fnp.exp(-x) / x)


@custom_jvp
def _expi(x: Any) -> Any:
    switch = 40.0 if x.dtype == np.float64 else 20.0
    pos = x > 0
    series = _ei_series(fnp.where(pos & (x <= switch), x, fnp.ones_like(x)))
    asym = _ei_asymptotic(fnp.where(x > switch, x, _k(x, 2 * switch)), int(switch))
    positive = fnp.where(x <= switch, series, fnp.where(fnp.isinf(x), _k(x, np.inf), asym))
    negative = -_e1_positive(fnp.where(pos, fnp.ones_like(x), -x))
    out = fnp.where(pos, positive, negative)
    return fnp.where(x == 0, _k(x, -np.inf), out)


@_expi.defjvp
def _expi_jvp(primals: tuple, tangents: tuple) -> tuple:
    ((x,), (t,)) = primals, tangents
    return _expi(x), t * (fnp.exp(x) / x)


def _real(name: str, x: ArrayLike) -> Any:
    (x,) = promote(name, x, to="inexact")
    x = fnp.asarray(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs{here()}")
    return x


def _in_float32(fn: Any, x: Any) -> Any:
    if x.dtype.itemsize < 4:
        return fnp.asarray(fn(fnp.asarray(x, np.float32)), x.dtype)
    return fn(x)


def exp1(x: ArrayLike) -> Any:
    """The exponential integral ``E1(x) = int_x^inf exp(-t)/t dt`` of a real ``x``
    (NaN for ``x < 0``, as SciPy's)."""
    return _in_float32(_exp1, _real("exp1", x))


def expi(x: ArrayLike) -> Any:
    """The exponential integral ``Ei(x)`` (``-E1(-x)``; the principal value for ``x > 0``)."""
    return _in_float32(_expi, _real("expi", x))
