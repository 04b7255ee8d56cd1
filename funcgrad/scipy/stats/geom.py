"""The geometric distribution on ``1, 2, ...`` (``jax.scipy.stats.geom``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike
from funcgrad.scipy.special import xlog1py
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """``(k - 1) log(1 - p) + log p``; ``-inf`` for ``k <= loc``."""
    k, p, loc = inexact("geom.logpmf", k, p, loc)
    x = k - loc
    val = xlog1py(x - 1, -p) + fnp.log(p)
    return fnp.where(x <= 0, const(val, -np.inf), val)


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Geometric probability mass."""
    return fnp.exp(logpmf(k, p, loc))
