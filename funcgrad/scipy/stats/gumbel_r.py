"""The right-skewed Gumbel distribution (``jax.scipy.stats.gumbel_r``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` for ``x > 0``, stable at both ends."""
    return fnp.where(x < math.log(2.0), fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-log(scale) - (z + exp(-z))`` (NaN for non-positive ``scale``)."""
    x, loc, scale = inexact("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return fnp.where(scale > 0, -fnp.log(scale) - (z + fnp.exp(-z)), np.nan)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Gumbel density."""
    return fnp.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-exp(-z)``."""
    x, loc, scale = inexact("gumbel_r.logcdf", x, loc, scale)
    return fnp.where(scale > 0, -fnp.exp(-(x - loc) / scale), np.nan)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``exp(-exp(-z))``."""
    return fnp.exp(logcdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``1 - exp(-exp(-z))``."""
    x, loc, scale = inexact("gumbel_r.sf", x, loc, scale)
    return fnp.where(scale > 0, -fnp.expm1(-fnp.exp((loc - x) / scale)), np.nan)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``log(1 - exp(-exp(-z)))``, stable in both tails."""
    x, loc, scale = inexact("gumbel_r.logsf", x, loc, scale)
    return fnp.where(scale > 0, log1mexp(fnp.exp((loc - x) / scale)), np.nan)


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile ``loc - scale log(-log p)`` (NaN outside ``(0, 1)``)."""
    p, loc, scale = inexact("gumbel_r.ppf", p, loc, scale)
    return fnp.where((p > 0) & (p < 1), loc - scale * fnp.log(-fnp.log(p)), np.nan)
