"""The Dirichlet distribution (``jax.scipy.stats.dirichlet``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike, here
from funcgrad.scipy.special import gammaln, xlogy
from funcgrad.scipy.stats._promotion import const, inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Any:
    """Log density at ``x`` (points along axis 0; ``x`` may omit the last coordinate,
    which is then ``1 - sum(x)``); ``-inf`` off the simplex."""
    x, alpha = inexact("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}{here()}")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry "
            f"fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}{here()}"
        )
    if x.shape[0] != k:
        x = fnp.concatenate([x, 1 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    log_norm = fnp.sum(gammaln(alpha)) - gammaln(fnp.sum(alpha))
    a = fnp.reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    val = fnp.sum(xlogy(a - 1, x), axis=0) - log_norm
    on_simplex = fnp.all(x > 0, axis=0) & (fnp.abs(fnp.sum(x, axis=0) - 1) < 1e-6)
    return fnp.where(on_simplex, val, const(val, -np.inf))


def pdf(x: ArrayLike, alpha: ArrayLike) -> Any:
    """Dirichlet density."""
    return fnp.exp(logpdf(x, alpha))
