"""The negative binomial distribution (``jax.scipy.stats.nbinom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import gammaln, xlogy
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """``log C(k + n - 1, k) + n log p + k log(1 - p)``; ``-inf`` below ``loc``."""
    k, n, p, loc = inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb = gammaln(y + n) - gammaln(n) - gammaln(y + 1)
    val = comb + xlogy(n, p) + xlogy(y, 1 - p)
    return fnp.where(k < loc, -np.inf, val)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Negative binomial probability mass."""
    return fnp.exp(logpmf(k, n, p, loc))
