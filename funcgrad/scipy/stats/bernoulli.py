"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import xlog1py, xlogy
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """``log p`` at 1, ``log(1 - p)`` at 0, ``-inf`` outside ``[0, 1]``."""
    k, p, loc = inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    val = xlogy(x, p) + xlog1py(1 - x, -p)
    return fnp.where((x < 0) | (x > 1), const(val, -np.inf), val)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Bernoulli probability mass."""
    return fnp.exp(logpmf(k, p, loc))


def _bad_p(p: Any) -> Any:
    return fnp.isnan(p) | (p < 0) | (p > 1)


def cdf(k: ArrayLike, p: ArrayLike) -> Any:
    """0 below 0, ``1 - p`` on ``[0, 1)``, 1 from 1 on (NaN for invalid ``p``)."""
    k, p = inexact("bernoulli.cdf", k, p)
    val = fnp.where(k < 0, const(k, 0.0), fnp.where(k < 1, 1 - p, const(k, 1.0)))
    return fnp.where(_bad_p(p) | fnp.isnan(k), const(val, np.nan), val)


def ppf(q: ArrayLike, p: ArrayLike) -> Any:
    """Smallest ``k`` with ``cdf(k) >= q``: 0 if ``q <= 1 - p``, else 1."""
    q, p = inexact("bernoulli.ppf", q, p)
    val = fnp.where(q <= 1 - p, const(q, 0.0), const(q, 1.0))
    bad = _bad_p(p) | fnp.isnan(q) | (q < 0) | (q > 1)
    return fnp.where(bad, const(val, np.nan), val)
