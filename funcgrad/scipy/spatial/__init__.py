"""``funcgrad.scipy.spatial``: ``jax.scipy.spatial``'s ``transform`` (rotations)."""

from __future__ import annotations

from funcgrad.scipy.spatial import transform

__all__ = ["transform"]
