"""The beta-binomial distribution (``jax.scipy.stats.betabinom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import betaln
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Any:
    """``log C(n, y) + betaln(y + a, n - y + b) - betaln(a, b)`` with ``y = floor(k) - loc``;
    ``-inf`` outside the support, NaN for invalid ``n``, ``a``, ``b``."""
    k, n, a, b, loc = inexact("betabinom.logpmf", k, n, a, b, loc)
    y = fnp.floor(k) - loc
    log_comb = -(fnp.log1p(n) + betaln(n - y + 1, y + 1))
    val = log_comb + betaln(y + a, n - y + b) - betaln(a, b)
    val = fnp.where((y == 0) & (n == 0), 0.0, val)
    val = fnp.where((y < -loc) | (y > n) | (y + a <= 0), -np.inf, val)
    return fnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, val)


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Beta-binomial probability mass."""
    return fnp.exp(logpmf(k, n, a, b, loc))
