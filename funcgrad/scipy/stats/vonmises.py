"""The von Mises distribution on the circle (``jax.scipy.stats.vonmises``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.primitives import special as sp
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Any:
    """``kappa (cos x - 1) - log(2 pi i0e(kappa))`` (NaN for ``kappa <= 0``)."""
    x, kappa = inexact("vonmises.logpdf", x, kappa)
    val = kappa * (fnp.cos(x) - 1) - fnp.log(2 * math.pi * sp.bessel_i0e(kappa))
    return fnp.where(kappa > 0, val, np.nan)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Any:
    """Von Mises density."""
    return fnp.exp(logpdf(x, kappa))
