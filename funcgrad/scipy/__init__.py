"""``funcgrad.scipy``: ``jax.scipy``'s namespaces (``linalg``, ``special``, ``stats``,
``optimize``) over funcgrad's primitives, so every function is differentiable,
batchable and compiles under ``jit``."""

from __future__ import annotations

import importlib

_SUBMODULES = (
    "linalg",
    "special",
    "stats",
    "optimize",
    "integrate",
    "interpolate",
    "ndimage",
    "cluster",
    "signal",
    "fft",
    "spatial",
    "sparse",
)


def __getattr__(name: str) -> object:
    """``funcgrad.scipy.linalg`` and the others load on first access."""
    if name in _SUBMODULES:
        return importlib.import_module(f"funcgrad.scipy.{name}")
    raise AttributeError(f"module 'funcgrad.scipy' has no attribute {name!r}")
