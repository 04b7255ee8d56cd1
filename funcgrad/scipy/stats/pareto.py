"""The Pareto distribution with shape ``b`` (``jax.scipy.stats.pareto``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``log b - log(scale) - (b + 1) log y`` for ``y = (x - loc) / scale >= 1``."""
    x, b, loc, scale = inexact("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    val = fnp.log(b) - fnp.log(scale) - (b + 1) * fnp.log(y)
    return fnp.where(y < 1, const(val, -np.inf), val)


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Pareto density."""
    return fnp.exp(logpdf(x, b, loc, scale))


def logsf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-b log y`` (0 below the support)."""
    x, b, loc, scale = inexact("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    val = -b * fnp.log(y)
    return fnp.where(y < 1, fnp.zeros_like(val), val)


def sf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Survival function ``y^-b``."""
    return fnp.exp(logsf(x, b, loc, scale))


def cdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``1 - y^-b`` (0 below the support)."""
    return -fnp.expm1(logsf(x, b, loc, scale))


def logcdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the CDF."""
    return fnp.log1p(-sf(x, b, loc, scale))


def ppf(q: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile ``loc + scale (1 - q)^(-1/b)`` (NaN outside ``[0, 1]``)."""
    q, b, loc, scale = inexact("pareto.ppf", q, b, loc, scale)
    bad = fnp.isnan(q) | (q < 0) | (q > 1)
    return fnp.where(bad, const(q, np.nan), loc + scale * fnp.exp(-fnp.log1p(-q) / b))
