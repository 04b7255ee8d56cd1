"""The generalized normal distribution with shape ``beta`` (``jax.scipy.stats.gennorm``)."""

from __future__ import annotations

from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import gammainc, gammaln
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: ArrayLike, beta: ArrayLike) -> Any:
    """``log(beta / 2) - gammaln(1 / beta) - |x|^beta``."""
    x, beta = inexact("gennorm.logpdf", x, beta)
    return fnp.log(0.5 * beta) - gammaln(1 / beta) - fnp.abs(x) ** beta


def pdf(x: ArrayLike, beta: ArrayLike) -> Any:
    """Generalized normal density."""
    return fnp.exp(logpdf(x, beta))


def cdf(x: ArrayLike, beta: ArrayLike) -> Any:
    """``(1 + sign(x) P(1 / beta, |x|^beta)) / 2``."""
    x, beta = inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + fnp.sign(x) * gammainc(1 / beta, fnp.abs(x) ** beta))
