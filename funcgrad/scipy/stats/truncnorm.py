"""The normal distribution truncated to ``[a, b]`` (in standard deviations from ``loc``)
(``jax.scipy.stats.truncnorm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import log_ndtr, logsumexp, ndtr
from funcgrad.scipy.stats import norm
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_sub_exp(x: Any, y: Any) -> Any:
    """``log(exp(x) - exp(y))`` for ``x >= y``."""
    return logsumexp(fnp.stack([x, y]), b=fnp.stack([fnp.ones_like(x), -fnp.ones_like(y)]), axis=0)


def _log_mass(a: Any, b: Any) -> Any:
    """``log(Phi(b) - Phi(a))``, computed in the tail nearer to the interval."""
    a, b = fnp.broadcast_arrays(a, b)
    left, right = b <= 0, a > 0
    lo = fnp.where(right, -b, a)
    hi = fnp.where(right, -a, b)
    tail = _log_sub_exp(log_ndtr(hi), log_ndtr(lo))
    central = fnp.log1p(-ndtr(a) - ndtr(-b))
    return fnp.where(left | right, tail, central)


def logpdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log density; ``-inf`` outside ``[a, b]``, NaN if ``a >= b``."""
    x, a, b, loc, scale = inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = norm.logpdf(x, loc, scale) - _log_mass(a, b)
    z = (x - loc) / scale
    val = fnp.where((z < a) | (z > b), const(val, -np.inf), val)
    return fnp.where(a >= b, const(val, np.nan), val)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Truncated normal density."""
    return fnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the CDF (via the survival function where the CDF is close to 1)."""
    x, a, b, loc, scale = inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = fnp.broadcast_arrays(x, a, b)
    z = (x - loc) / scale
    total = _log_mass(a, b)
    lcdf = _log_mass(a, z) - total
    lsf = _log_mass(z, b) - total
    val = fnp.where(
        z >= b,
        const(lcdf, 0.0),
        fnp.where(
            z <= a,
            const(lcdf, -np.inf),
            fnp.where(lcdf > -0.1, fnp.log1p(-fnp.exp(lsf)), lcdf),
        ),
    )
    return fnp.where(a >= b, const(val, np.nan), val)


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Truncated normal CDF."""
    return fnp.exp(logcdf(x, a, b, loc, scale))


def logsf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the survival function (the mirrored CDF)."""
    x, a, b, loc, scale = inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Survival function."""
    return fnp.exp(logsf(x, a, b, loc, scale))
