"""The gamma distribution with shape ``a`` (``jax.scipy.stats.gamma``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import gammainc, gammaincc, gammaln, xlogy
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log density ``(a-1) log y - y - gammaln(a) - log(scale)``; ``-inf`` below ``loc``."""
    x, a, loc, scale = inexact("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    y = fnp.where(ok, (x - loc) / scale, const(x, 1.0))
    val = xlogy(a - 1, y) - y - gammaln(a) - fnp.log(scale)
    return fnp.where(ok, val, const(val, -np.inf))


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Gamma density."""
    return fnp.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Gamma CDF, the regularized lower incomplete gamma function."""
    x, a, loc, scale = inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, fnp.clip((x - loc) / scale, 0, np.inf))


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the gamma CDF."""
    return fnp.log(cdf(x, a, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Survival function (1 below ``loc``)."""
    x, a, loc, scale = inexact("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    val = gammaincc(a, y)
    return fnp.where(y < 0, const(val, 1.0), val)


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    return fnp.log(sf(x, a, loc, scale))
