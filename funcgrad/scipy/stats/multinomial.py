"""The multinomial distribution (``jax.scipy.stats.multinomial``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike, here, promote
from funcgrad.scipy.special import gammaln, xlogy
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["logpmf", "pmf"]


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """``log n! + sum(x log p - log x!)`` over the last axis; ``-inf`` unless
    ``sum(x) == n``. ``x`` and ``n`` must be integers."""
    (p,) = inexact("multinomial.logpmf", p)
    x, n = (fnp.asarray(v) for v in promote("multinomial.logpmf", x, n, to="numeric"))
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}{here()}"
        )
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    val = gammaln(n + 1) + fnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return fnp.where(fnp.sum(x) == n, val, -np.inf)


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """Multinomial probability mass."""
    return fnp.exp(logpmf(x, n, p))
