"""The exponential distribution (``jax.scipy.stats.expon``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-(x - loc) / scale - log(scale)``; ``-inf`` below ``loc``."""
    x, loc, scale = inexact("expon.logpdf", x, loc, scale)
    val = -((x - loc) / scale + fnp.log(scale))
    return fnp.where(x < loc, const(val, -np.inf), val)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Exponential density."""
    return fnp.exp(logpdf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-(x - loc) / scale`` (0 below ``loc``)."""
    x, loc, scale = inexact("expon.logsf", x, loc, scale)
    z = (loc - x) / scale
    return fnp.where(x < loc, fnp.zeros_like(z), z)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Survival function."""
    return fnp.exp(logsf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-expm1(-(x - loc) / scale)`` (0 below ``loc``)."""
    x, loc, scale = inexact("expon.cdf", x, loc, scale)
    z = (loc - x) / scale
    return fnp.where(x < loc, fnp.zeros_like(z), -fnp.expm1(z))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``log1p(-sf(x))``."""
    return fnp.log1p(-sf(x, loc, scale))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile ``loc - scale log1p(-q)`` (NaN outside ``[0, 1]``)."""
    q, loc, scale = inexact("expon.ppf", q, loc, scale)
    bad = fnp.isnan(q) | (q < 0) | (q > 1)
    return fnp.where(bad, const(q, np.nan), loc - scale * fnp.log1p(-q))
