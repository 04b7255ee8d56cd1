"""Student's t distribution (``jax.scipy.stats.t``)."""

from __future__ import annotations

import math
from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import gammaln
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log density of the t distribution with ``df`` degrees of freedom."""
    x, df, loc, scale = inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = df / 2
    log_norm = gammaln(half) - gammaln(half + 0.5) + 0.5 * fnp.log(math.pi * df * scale * scale)
    return -(log_norm + (half + 0.5) * fnp.log1p(z * z / df))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Density of the t distribution."""
    return fnp.exp(logpdf(x, df, loc, scale))
