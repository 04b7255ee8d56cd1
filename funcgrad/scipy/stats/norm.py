"""The normal distribution ``N(loc, scale**2)`` (``jax.scipy.stats.norm``)."""

from __future__ import annotations

import math
from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy import special
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the normal density at ``x``."""
    x, loc, scale = inexact("norm.logpdf", x, loc, scale)
    var = scale * scale
    return -0.5 * (fnp.log((2 * math.pi) * var) + (x - loc) ** 2 / var)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Normal density at ``x``."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Normal cumulative distribution function."""
    x, loc, scale = inexact("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the normal CDF, accurate in the lower tail."""
    x, loc, scale = inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Survival function ``1 - cdf(x)``, accurate in the upper tail."""
    x, loc, scale = inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    x, loc, scale = inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`)."""
    q, loc, scale = inexact("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Inverse survival function."""
    q, loc, scale = inexact("norm.isf", q, loc, scale)
    return ppf(1 - q, loc, scale)
