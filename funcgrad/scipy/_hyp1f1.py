"""``scipy.special.hyp1f1``: Kummer's confluent hypergeometric function
``M(a, b, x) = sum_k (a)_k / ((b)_k k!) x**k``, for real arguments (JAX's claims positive
``a``, ``b``; others are computed by the same means).

For ``x >= 0`` the series is summed until its terms have stopped growing, ``a + k`` has
passed 0 and a term is below the dtype's epsilon times the sum (at most 5,000 terms: all of
``x <= 700`` in float64); for ``a, b > 0`` its terms are positive, so there is no
cancellation. For ``x < 0``, Kummer's transformation ``M(a, b, x) = exp(x) M(b - a, b, -x)``
turns the alternating series into that one. JAX's conventions at the edges: 1 at
``a = 0`` (also where ``b = 0``), ``exp(x)`` at ``a = b``, ``inf`` at ``b = 0``. The
derivatives are JAX's: ``a/b M(a + 1, b + 1, x)`` in ``x`` and, in ``a`` and ``b``, the
series ``sum_k t_k (psi(a + k) - psi(a))`` and ``sum_k t_k (psi(b) - psi(b + k))`` of the
terms ``t_k`` at the arguments themselves (the digamma differences summed as
``sum_{j<k} 1/(a + j)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import while_loop
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, promote

__all__ = ["hyp1f1"]

_MAX_TERMS = 5000


def _k(x: Any, v: Any) -> np.ndarray:
    return np.asarray(v, x.dtype)


def _series(a: Any, b: Any, x: Any, weight: str = "") -> Any:
    """``sum_k t_k`` (``weight=""``), ``sum_k t_k (psi(a+k) - psi(a))`` (``"a"``) or
    ``sum_k t_k (psi(b) - psi(b+k))`` (``"b"``), ``t_k = (a)_k x**k / ((b)_k k!)``."""
    eps = _k(x, np.finfo(x.dtype).eps)
    zero = fnp.zeros_like(x)

    def more(state: tuple) -> Any:
        k, total, _, term, _ = state
        kf = fnp.asarray(k, x.dtype)
        growing = fnp.abs(x * (a + kf)) >= fnp.abs((b + kf) * (kf + 1))
        live = (fnp.abs(term) > eps * fnp.abs(total)) | growing | (a + kf < 0)
        return (k < _MAX_TERMS) & fnp.any(live & fnp.isfinite(total) & (term != 0))

    def step(state: tuple) -> tuple:
        k, total, weighted, term, harmonic = state  # harmonic: sum_{j<k} 1/(c + j)
        kf = fnp.asarray(k, x.dtype)
        weighted = weighted + term * harmonic
        c = a if weight == "a" else b
        harmonic = harmonic + (1 / (c + kf) if weight == "a" else -1 / (c + kf))
        total = total + term
        term = term * (a + kf) / (b + kf) * x / (kf + 1)
        return k + 1, total, weighted, term, harmonic

    out = while_loop(more, step, (np.int32(0), zero, zero, fnp.ones_like(x), zero))
    return out[2] if weight else out[1]


def _value(a: Any, b: Any, x: Any) -> Any:
    neg = x < 0
    a2 = fnp.where(neg, b - a, a)
    s = _series(a2, b, fnp.abs(x))
    out = fnp.where(neg, fnp.exp(x) * s, s)
    out = fnp.where(a == b, fnp.exp(x), out)
    out = fnp.where(b == 0, _k(x, np.inf), out)
    return fnp.where(a == 0, fnp.ones_like(x), out)


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    return _value(a, b, x)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, b, x), (da, db, dx) = primals, tangents
    d_x = a / b * _hyp1f1(a + 1, b + 1, x)
    d_a = _series(a, b, x, "a")
    d_b = _series(a, b, x, "b")
    return _hyp1f1(a, b, x), d_a * da + d_b * db + d_x * dx


def hyp1f1(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x)`` of real arguments
    (1 at ``a = 0``, as JAX's)."""
    a, b, x = (
        fnp.asarray(v) for v in fnp.broadcast_arrays(*promote("hyp1f1", a, b, x, to="inexact"))
    )
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"hyp1f1 does not support complex-valued inputs{here()}")
    if x.dtype.itemsize < 4:
        f32 = np.float32
        out = _hyp1f1(fnp.asarray(a, f32), fnp.asarray(b, f32), fnp.asarray(x, f32))
        return fnp.asarray(out, x.dtype)
    return _hyp1f1(a, b, x)
