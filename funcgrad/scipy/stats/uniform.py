"""The uniform distribution on ``[loc, loc + scale]`` (``jax.scipy.stats.uniform``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-log(scale)`` inside the support, ``-inf`` outside."""
    x, loc, scale = inexact("uniform.logpdf", x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return fnp.where(outside, const(x, -np.inf), -fnp.log(scale))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Uniform density."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Uniform CDF: 0 below ``loc``, 1 above ``loc + scale``, linear between."""
    x, loc, scale = inexact("uniform.cdf", x, loc, scale)
    inside = fnp.where(x > loc + scale, const(x, 1.0), (x - loc) / scale)
    return fnp.where(x < loc, const(x, 0.0), inside)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile ``loc + scale * q`` (NaN outside ``[0, 1]``)."""
    q, loc, scale = inexact("uniform.ppf", q, loc, scale)
    bad = fnp.isnan(q) | (q < 0) | (q > 1)
    return fnp.where(bad, const(q, np.nan), loc + scale * q)
