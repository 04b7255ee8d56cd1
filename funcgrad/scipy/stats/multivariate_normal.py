"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``)."""

from __future__ import annotations

import math
from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike, here
from funcgrad.primitives import decomp
from funcgrad.scipy.stats._promotion import inexact

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: None = None) -> Any:
    """Log density of ``N(mean, cov)`` at ``x`` (batched over leading axes).

    ``cov`` may be a scalar (an isotropic covariance) or a ``(..., n, n)`` positive
    definite matrix, factored by Cholesky; ``allow_singular`` is not supported.
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = inexact("multivariate_normal.logpdf", x, mean, cov)
    if mean.ndim == 0:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (_LOG_2PI + fnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if cov.ndim == 0:
        return -0.5 * fnp.sum(y * y, axis=-1) / cov - n / 2 * (_LOG_2PI + fnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal.logpdf got incompatible shapes: x {x.shape}, "
            f"mean {mean.shape}, cov {cov.shape}{here()}"
        )
    # as jnp.linalg.cholesky: the input is symmetrised, so the gradient in cov is too
    chol = fnp.linalg.cholesky(cov)
    batch = fnp.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
    chol = fnp.broadcast_to(chol, (*batch, n, n))
    y = fnp.broadcast_to(y, (*batch, n))
    # z = L^-1 y, so that y^T cov^-1 y = |z|^2
    z = decomp.triangular_solve(chol, y[..., None], left_side=True, lower=True)
    z = fnp.asarray(z)[..., 0]
    log_det_half = fnp.sum(fnp.log(fnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * fnp.sum(z * z, axis=-1) - n / 2 * _LOG_2PI - log_det_half


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Any:
    """Density of ``N(mean, cov)`` at ``x``."""
    return fnp.exp(logpdf(x, mean, cov))
