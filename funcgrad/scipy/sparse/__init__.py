"""``funcgrad.scipy.sparse``: ``jax.scipy.sparse``'s ``linalg`` (Krylov solvers)."""

from __future__ import annotations

from funcgrad.scipy.sparse import linalg

__all__ = ["linalg"]
