"""The Laplace distribution (``jax.scipy.stats.laplace``)."""

from __future__ import annotations

from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``-|x - loc| / scale - log(2 scale)``."""
    x, loc, scale = inexact("laplace.logpdf", x, loc, scale)
    return -(fnp.abs(x - loc) / scale + fnp.log(2 * scale))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Laplace density."""
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """``exp(z) / 2`` for ``z <= 0``, ``1 - exp(-z) / 2`` above."""
    x, loc, scale = inexact("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    neg = z <= 0
    e = fnp.exp(fnp.where(neg, z, -z))
    return fnp.where(neg, 0.5 * e, 1 - 0.5 * e)
