"""The chi-squared distribution (``jax.scipy.stats.chi2``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import gammainc, gammaincc, gammaln
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log density ``(df/2 - 1) log y - y/2 - gammaln(df/2) - (df/2) log 2 - log(scale)``."""
    x, df, loc, scale = inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    h = df / 2
    val = (h - 1) * fnp.log(y) - y / 2 - gammaln(h) - h * math.log(2.0) - fnp.log(scale)
    return fnp.where(x < loc, const(val, -np.inf), val)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Chi-squared density."""
    return fnp.exp(logpdf(x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``P(df / 2, y / 2)``."""
    x, df, loc, scale = inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(df / 2, fnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the CDF."""
    return fnp.log(cdf(x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``Q(df / 2, y / 2)``."""
    x, df, loc, scale = inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(df / 2, fnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    return fnp.log(sf(x, df, loc, scale))
