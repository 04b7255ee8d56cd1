"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``): the mirror image of
:mod:`funcgrad.scipy.stats.gumbel_r`."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats import gumbel_r
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-log(scale) + z - exp(z)``."""
    x, loc, scale = inexact("gumbel_l.logpdf", x, loc, scale)
    return gumbel_r.logpdf(-x, -loc, scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Gumbel (left) density."""
    return fnp.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``log(1 - exp(-exp(z)))``."""
    x, loc, scale = inexact("gumbel_l.logcdf", x, loc, scale)
    return gumbel_r.logsf(-x, -loc, scale)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``1 - exp(-exp(z))``."""
    x, loc, scale = inexact("gumbel_l.cdf", x, loc, scale)
    return gumbel_r.sf(-x, -loc, scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-exp(z)``."""
    x, loc, scale = inexact("gumbel_l.logsf", x, loc, scale)
    return gumbel_r.logcdf(-x, -loc, scale)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``exp(-exp(z))``."""
    return fnp.exp(logsf(x, loc, scale))


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile ``loc + scale log(-log1p(-p))`` (NaN outside ``(0, 1)``)."""
    p, loc, scale = inexact("gumbel_l.ppf", p, loc, scale)
    return fnp.where((p > 0) & (p < 1), loc + scale * fnp.log(-fnp.log1p(-p)), np.nan)
