"""``funcgrad.scipy.cluster.vq``: vector quantisation, as ``jax.scipy.cluster.vq``."""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.numpy._core import here


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Assign each observation to its nearest code: ``(codes, distances)``.

    ``obs`` is ``(N, D)`` (or ``(N,)`` for one feature) and ``code_book`` ``(K, D)``
    (or ``(K,)``). ``check_finite`` is accepted for SciPy's signature (as in JAX, values
    are not checked: a check would need concrete values under ``jit``).
    """
    obs, code_book = fnp.asarray(obs), fnp.asarray(code_book)
    dt = fnp.result_type(obs, code_book)
    if not fnp.issubdtype(dt, fnp.inexact):
        dt = fnp.result_type(dt, float)
    obs, code_book = obs.astype(dt), code_book.astype(dt)
    if obs.ndim != code_book.ndim:
        raise ValueError(
            f"vq: observation and code_book should have the same rank, got obs "
            f"{obs.dtype}{list(obs.shape)} and code_book "
            f"{code_book.dtype}{list(code_book.shape)}{here()}"
        )
    if obs.ndim == 1:
        obs, code_book = obs[..., None], code_book[..., None]
    if obs.ndim != 2:
        raise ValueError(f"vq: ndim different than 1 or 2 are not supported{here()}")
    dist = fnp.sqrt(fnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1))
    return fnp.argmin(dist, axis=-1), fnp.min(dist, axis=-1)
