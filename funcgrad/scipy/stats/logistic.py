"""The logistic distribution (``jax.scipy.stats.logistic``)."""

from __future__ import annotations

from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import expit, logit
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-2 logaddexp(z/2, -z/2) - log(scale)``, stable for large ``|z|``."""
    x, loc, scale = inexact("logistic.logpdf", x, loc, scale)
    h = (x - loc) / scale / 2
    return -2 * fnp.logaddexp(h, -h) - fnp.log(scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Logistic density."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``expit((x - loc) / scale)``."""
    x, loc, scale = inexact("logistic.cdf", x, loc, scale)
    return expit((x - loc) / scale)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``expit(-(x - loc) / scale)``."""
    x, loc, scale = inexact("logistic.sf", x, loc, scale)
    return expit(-(x - loc) / scale)


def ppf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Quantile ``loc + scale logit(q)``."""
    x, loc, scale = inexact("logistic.ppf", x, loc, scale)
    return logit(x) * scale + loc


def isf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Inverse survival function ``loc - scale logit(q)``."""
    x, loc, scale = inexact("logistic.isf", x, loc, scale)
    return -logit(x) * scale + loc
