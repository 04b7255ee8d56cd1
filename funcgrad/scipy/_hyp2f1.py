"""``scipy.special.hyp2f1``: Gauss's hypergeometric function ``2F1(a, b; c; x)`` for real
arguments.

* ``x == 0``, ``a == 0`` or ``b == 0``: 1. A pole of ``(c)_k`` the series reaches (``c``
  a non-positive integer, unless ``a`` or ``b`` is a non-positive integer ending the
  series first): inf. A non-positive integer ``a`` or ``b``: the terminating series
  (a polynomial, for any ``x``).
* ``x == 1``: Gauss's sum ``G(c) G(c-a-b) / (G(c-a) G(c-b))`` where ``c - a - b > 0``,
  else inf; ``x > 1`` (a branch cut): inf, as SciPy.
* ``x < 0``: Pfaff's transformation ``(1-x)**(-a) 2F1(a, c-b; c; x/(x-1))`` (an argument
  in ``[0, 1)``).
* ``0 < x < 1``: the power series, summed until a term no longer changes the sum
  (at most 4000 terms); above 0.9, where it converges slowly, DLMF 15.8.4's
  transformation to two series in ``1 - x`` when ``c - a - b`` is not an integer and
  none of its gamma functions has a pole.

The derivatives are JAX's definitions: ``d/dx = a b / c 2F1(a+1, b+1; c+1; x)`` and, for
``a``, ``b``, ``c``, the series differentiated term by term.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import while_loop
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote
from funcgrad.primitives import elementwise as ew

__all__ = ["hyp2f1"]

_MAX_TERMS = 4000


def _k(x: Any, v: Any) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _is_nonpos_int(v: Any, eps: float) -> Any:
    return (v <= 0) & (fnp.abs(v - fnp.round(v)) < eps)


def _gamma(v: Any) -> Any:
    """``Gamma(v)`` for real ``v`` away from its poles (sign from the floor's parity)."""
    odd = fnp.remainder(fnp.floor(v), 2) != 0
    sign = fnp.where((v < 0) & odd, _k(v, -1.0), _k(v, 1.0))
    return sign * fnp.exp(ew.lgamma(v))


def _series(a: Any, b: Any, c: Any, x: Any, derivatives: bool = False) -> Any:
    """The power series ``sum_k (a)_k (b)_k / (c)_k x**k / k!`` (and, with
    ``derivatives``, its term-by-term derivatives in ``a``, ``b``, ``c``)."""
    eps = float(np.finfo(x.dtype).eps)
    zero = fnp.zeros_like(x)
    one = fnp.ones_like(x)

    def more(state: tuple) -> Any:
        k, total, term = state[0], state[1], state[2]
        return (k < _MAX_TERMS) & fnp.any(fnp.abs(term) > eps * fnp.abs(total))

    def step(state: tuple) -> tuple:
        k, total, term, ha, hb, hc, da, db, dc = state
        kf = fnp.asarray(k, x.dtype)
        # term k+1 from term k; h_ is the sum of 1/(a+j), j <= k (d term / da = term * h_a)
        ha, hb, hc = ha + 1 / (a + kf), hb + 1 / (b + kf), hc + 1 / (c + kf)
        term = term * (a + kf) * (b + kf) / ((c + kf) * (kf + 1)) * x
        return (
            k + 1,
            total + term,
            term,
            ha,
            hb,
            hc,
            da + term * ha,
            db + term * hb,
            dc - term * hc,
        )

    init = (np.int32(0), one, one, zero, zero, zero, zero, zero, zero)
    out = while_loop(more, step, init)
    if derivatives:
        return out[6], out[7], out[8]
    return out[1]


def _near_one(a: Any, b: Any, c: Any, x: Any) -> Any:
    """DLMF 15.8.4: ``2F1`` as two series in ``1 - x`` (``c - a - b`` not an integer)."""
    d = c - a - b
    s = 1 - x
    first = _gamma(c) * _gamma(d) / (_gamma(c - a) * _gamma(c - b)) * _series(a, b, 1 - d, s)
    second = _gamma(c) * _gamma(-d) / (_gamma(a) * _gamma(b)) * _series(c - a, c - b, 1 + d, s)
    return first + s**d * second


def _unit_interval(a: Any, b: Any, c: Any, x: Any, eps: float) -> Any:
    """``2F1`` for ``0 <= x < 1``."""
    d = c - a - b
    poles = (
        _is_nonpos_int(a, eps)
        | _is_nonpos_int(b, eps)
        | _is_nonpos_int(c - a, eps)
        | _is_nonpos_int(c - b, eps)
        | (fnp.abs(d - fnp.round(d)) < eps)
    )
    transform = (x > 0.9) & ~poles
    direct = _series(a, b, c, fnp.where(transform, fnp.zeros_like(x), x))
    near = _near_one(a, b, c, fnp.where(transform, x, _k(x, 0.95)))
    return fnp.where(transform, near, direct)


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = float(np.finfo(x.dtype).eps) * 50
    inf = _k(x, np.inf)
    ends = _is_nonpos_int(a, eps) | _is_nonpos_int(b, eps)
    # the series' last term: -a or -b, the smaller of those that are non-positive integers
    last = fnp.minimum(
        fnp.where(_is_nonpos_int(a, eps), -a, inf), fnp.where(_is_nonpos_int(b, eps), -b, inf)
    )
    pole = _is_nonpos_int(c, eps) & ~(ends & (last <= -c))
    d = c - a - b
    # x < 0: Pfaff's transformation to y = x / (x - 1) in [0, 1)
    neg = x < 0
    y = fnp.where(neg, x / (x - 1), fnp.where((x >= 0) & (x < 1), x, fnp.zeros_like(x)))
    b2 = fnp.where(neg, c - b, b)
    inner = _unit_interval(a, b2, c, y, eps)
    general = fnp.where(neg, (1 - x) ** (-a) * inner, inner)
    polynomial = _series(a, b, c, fnp.where(ends, x, fnp.zeros_like(x)))
    safe_d = fnp.where(d > 0, d, fnp.ones_like(d))
    gauss = _gamma(c) * _gamma(safe_d) / (_gamma(c - a) * _gamma(c - b))
    out = fnp.where(x == 1, fnp.where(d > 0, gauss, inf), fnp.where(x > 1, inf, general))
    out = fnp.where(ends, polynomial, out)
    out = fnp.where(pole, inf, out)
    return fnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), fnp.ones_like(x), out)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, b, c, x), (ta, tb, tc, tx) = primals, tangents
    out = _hyp2f1(a, b, c, x)
    da, db, dc = _series(a, b, c, x, derivatives=True)
    dx = a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x)
    return out, ta * da + tb * db + tc * dc + tx * dx


def hyp2f1(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> Any:
    """Gauss's hypergeometric function ``2F1(a, b; c; x)`` of real arguments."""
    args = [
        fnp.asarray(v) for v in fnp.broadcast_arrays(*promote("hyp2f1", a, b, c, x, to="inexact"))
    ]
    if np.issubdtype(args[0].dtype, np.complexfloating):
        raise ValueError(f"hyp2f1 does not support complex-valued inputs{here()}")
    return _hyp2f1(*args)
