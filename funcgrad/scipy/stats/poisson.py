"""The Poisson distribution (``jax.scipy.stats.poisson``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import entr, gammaincc, gammaln, xlogy
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """``k log mu - gammaln(k + 1) - mu``; ``-inf`` for negative or non-integer ``k``."""
    k, mu, loc = inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    val = xlogy(x, mu) - gammaln(x + 1) - mu
    return fnp.where((x < 0) | (fnp.round(k) != k), const(val, -np.inf), val)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Poisson probability mass."""
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Poisson CDF ``Q(floor(k) + 1, mu)`` (0 below ``loc``)."""
    k, mu, loc = inexact("poisson.cdf", k, mu, loc)
    x = k - loc
    val = gammaincc(fnp.floor(1 + x), mu)
    return fnp.where(x < 0, const(val, 0.0), val)


def entropy(mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Entropy of ``Poisson(mu)`` (``loc`` only broadcasts): a sum over the pmf for
    ``mu < 100``, the asymptotic expansion beyond; NaN for a negative (or NaN) ``mu``."""
    mu, loc = inexact("poisson.entropy", mu, loc)
    shape = fnp.broadcast_shapes(mu.shape, loc.shape)
    m = fnp.ravel(mu)
    k = fnp.arange(250, dtype=m.dtype)[:, None]
    safe_m = fnp.where(m > 0, m, fnp.ones_like(m))
    probs = pmf(k, safe_m)
    upper = fnp.where(m < 10, m + 20, m + 10 * fnp.sqrt(safe_m) + 20)
    summed = fnp.sum(entr(fnp.where(k < fnp.ceil(upper), probs, 0.0)), axis=0)
    large = 0.5 * fnp.log(2 * np.pi * np.e * safe_m) - 1.0 / (12 * safe_m)
    out = fnp.where(m == 0, fnp.zeros_like(m), fnp.where(m < 100, summed, large))
    out = fnp.where(m >= 0, out, np.nan)  # (no distribution: NaN, as SciPy)
    return fnp.broadcast_to(fnp.reshape(out, mu.shape), shape)
