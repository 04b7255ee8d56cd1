"""The wrapped Cauchy distribution on ``[0, 2 pi]`` (``jax.scipy.stats.wrapcauchy``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, c: ArrayLike) -> Any:
    """``log((1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)))``; ``-inf`` off ``[0, 2 pi]``, NaN
    unless ``0 < c < 1``."""
    x, c = inexact("wrapcauchy.logpdf", x, c)
    val = fnp.log(1 - c * c) - math.log(2 * math.pi) - fnp.log(1 + c * c - 2 * c * fnp.cos(x))
    val = fnp.where((x >= 0) & (x <= 2 * math.pi), val, -np.inf)
    return fnp.where((c > 0) & (c < 1), val, np.nan)


def pdf(x: ArrayLike, c: ArrayLike) -> Any:
    """Wrapped Cauchy density."""
    return fnp.exp(logpdf(x, c))
