"""The beta distribution (``jax.scipy.stats.beta``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import betainc, betaln, xlog1py, xlogy
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log density; ``-inf`` outside ``[loc, loc + scale]``, NaN for non-positive ``a``,
    ``b`` or ``scale``."""
    x, a, b, loc, scale = inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    val = xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - fnp.log(scale)
    val = fnp.where((x > loc + scale) | (x < loc), const(val, -np.inf), val)
    return fnp.where((a <= 0) | (b <= 0) | (scale <= 0), const(val, np.nan), val)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Beta density."""
    return fnp.exp(logpdf(x, a, b, loc, scale))


def _unit(x: Any, loc: Any, scale: Any) -> Any:
    return fnp.clip((x - loc) / scale, 0, 1)


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Beta CDF, the regularized incomplete beta function."""
    x, a, b, loc, scale = inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, _unit(x, loc, scale))


def logcdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the beta CDF."""
    return fnp.log(cdf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Survival function ``I_{1-x}(b, a)``."""
    x, a, b, loc, scale = inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - _unit(x, loc, scale))


def logsf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the survival function."""
    return fnp.log(sf(x, a, b, loc, scale))
