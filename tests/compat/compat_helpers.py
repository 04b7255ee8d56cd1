"""Helpers shared by the compat tests (imported as a plain module)."""

from __future__ import annotations

import numpy as np


def npv(t) -> np.ndarray:
    """A tensor's values as a NumPy array (compat or real torch)."""
    return np.asarray(t.detach().numpy())


def is_compat(lib) -> bool:
    return lib.__name__.startswith("compat")


def fd_jacobian(f, xs, eps=1e-6):
    """Central-difference Jacobians of ``f(*xs) -> ndarray`` w.r.t. each float64 array."""
    out = np.asarray(f(*xs), np.float64)
    jacs = []
    for i, x in enumerate(xs):
        x = np.asarray(x, np.float64)
        jac = np.zeros(out.shape + x.shape)
        for idx in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            args_p = list(xs)
            args_m = list(xs)
            args_p[i], args_m[i] = xp, xm
            d = (np.asarray(f(*args_p), np.float64) - np.asarray(f(*args_m), np.float64)) / (
                2 * eps
            )
            jac[(...,) + idx] = d
        jacs.append(jac)
    return out, jacs
