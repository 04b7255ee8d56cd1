"""Argument promotion shared by ``funcgrad.scipy.stats``: inexact operands as ``jax.scipy.stats``
promotes them, and constants in their dtype."""

from __future__ import annotations

from typing import Any

from funcgrad import numpy as fnp
from funcgrad.numpy._core import ArrayLike, promote


def inexact(name: str, *args: ArrayLike) -> list[Any]:
    """``args`` as arrays of one inexact dtype (JAX's ``promote_args_inexact``: Python
    scalars stay weakly typed; integers and bools become the default float)."""
    return [fnp.asarray(a) for a in promote(name, *args, to="inexact")]


def const(x: Any, v: float) -> float:
    """A constant to combine with ``x`` (``jnp.where(c, -np.inf, x)`` style): a Python
    float, weakly typed, so the result keeps ``x``'s dtype and weak type."""
    del x
    return float(v)
