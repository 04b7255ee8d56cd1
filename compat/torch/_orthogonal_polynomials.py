"""Array kernels of ``torch.special``'s orthogonal polynomials (``chebyshev_polynomial_t``,
``hermite_polynomial_h``, ``laguerre_polynomial_l``, ``legendre_polynomial_p``, ...): the
degree-``n`` value at ``x`` by the family's three-term recurrence, elementwise over a
tensor of degrees. ``n`` is truncated to an integer; a negative degree gives 0, as
PyTorch's kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import funcgrad as fg
from funcgrad import numpy as fnp

#: family -> (P_1 from x, the step ``P_{k+1}`` from ``x``, ``k``, ``P_k``, ``P_{k-1}``)
Step = Callable[[Any, Any, Any, Any], Any]


def _cheb(x: Any, k: Any, p: Any, q: Any) -> Any:
    return 2 * x * p - q


def _shifted(x: Any, k: Any, p: Any, q: Any) -> Any:
    return 2 * (2 * x - 1) * p - q


def _hermite_h(x: Any, k: Any, p: Any, q: Any) -> Any:
    return 2 * x * p - 2 * k * q


def _hermite_he(x: Any, k: Any, p: Any, q: Any) -> Any:
    return x * p - k * q


def _laguerre(x: Any, k: Any, p: Any, q: Any) -> Any:
    return ((2 * k + 1 - x) * p - k * q) / (k + 1)


def _legendre(x: Any, k: Any, p: Any, q: Any) -> Any:
    return ((2 * k + 1) * x * p - k * q) / (k + 1)


FAMILIES: dict[str, tuple[Callable[[Any], Any], Step]] = {
    "chebyshev_polynomial_t": (lambda x: x, _cheb),
    "chebyshev_polynomial_u": (lambda x: 2 * x, _cheb),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, _cheb),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, _cheb),
    "shifted_chebyshev_polynomial_t": (lambda x: 2 * x - 1, _shifted),
    "shifted_chebyshev_polynomial_u": (lambda x: 4 * x - 2, _shifted),
    "shifted_chebyshev_polynomial_v": (lambda x: 4 * x - 3, _shifted),
    "shifted_chebyshev_polynomial_w": (lambda x: 4 * x - 1, _shifted),
    "hermite_polynomial_h": (lambda x: 2 * x, _hermite_h),
    "hermite_polynomial_he": (lambda x: x, _hermite_he),
    "laguerre_polynomial_l": (lambda x: 1 - x, _laguerre),
    "legendre_polynomial_p": (lambda x: x, _legendre),
}


def evaluate(x: Any, n: Any, *, family: str) -> Any:
    """The ``family``'s polynomial of degree ``n`` (integers, broadcast with ``x``) at
    ``x``: the recurrence runs up to the largest degree (a loop whose trip count is a
    value of the program, so ``n`` may be traced or batched)."""
    first, step = FAMILIES[family]
    x, n = fnp.broadcast_arrays(x, n)
    one = fnp.ones_like(x)
    p1 = first(x)
    out = fnp.where(n == 0, one, fnp.where(n == 1, p1, fnp.zeros_like(x)))
    top = fnp.max(n, initial=0)

    def cond(carry: tuple) -> Any:
        return carry[0] < top

    def body(carry: tuple) -> tuple:
        k, prev, cur, acc = carry
        nxt = step(x, fnp.asarray(k, x.dtype), cur, prev)
        return k + 1, cur, nxt, fnp.where(n == k + 1, nxt, acc)

    return fg.while_loop(cond, body, (fnp.asarray(1, n.dtype), one, p1, out))[3]
