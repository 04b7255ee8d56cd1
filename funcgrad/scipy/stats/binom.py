"""The binomial distribution (``jax.scipy.stats.binom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import gammaln, xlog1py, xlogy
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """``log C(n, k) + k log p + (n - k) log(1 - p)``; ``-inf`` outside ``[0, n]``."""
    k, n, p, loc = inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    linear = xlogy(y, p) + xlog1py(n - y, -p)
    val = fnp.where(((y == 0) & (n == 0)) | (linear == 0), const(linear, 0.0), comb + linear)
    return fnp.where((k >= loc) & (k < loc + n + 1), val, const(val, -np.inf))


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Binomial probability mass."""
    return fnp.exp(logpmf(k, n, p, loc))
