"""The Cauchy distribution (``jax.scipy.stats.cauchy``)."""

from __future__ import annotations

import math
from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-log(pi scale (1 + z^2))`` with ``z = (x - loc) / scale``."""
    x, loc, scale = inexact("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(fnp.log(math.pi * scale) + fnp.log1p(z * z))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Cauchy density."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``1/2 + arctan(z) / pi``."""
    x, loc, scale = inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + fnp.arctan((x - loc) / scale) / math.pi


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the CDF."""
    return fnp.log(cdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Survival function ``cdf(-x; -loc)``."""
    x, loc, scale = inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    x, loc, scale = inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile ``loc + scale tan(pi (q - 1/2))``."""
    q, loc, scale = inexact("cauchy.ppf", q, loc, scale)
    return fnp.tan(math.pi * q - math.pi / 2) * scale + loc


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Inverse survival function ``loc + scale tan(pi (1/2 - q))``."""
    q, loc, scale = inexact("cauchy.isf", q, loc, scale)
    return fnp.tan(math.pi / 2 - math.pi * q) * scale + loc
