"""Arrays to and from ``.npy``/``.npz`` files: ``save``, ``savez`` (NumPy's own, as in
``jax.numpy``) and ``load``, which gives funcgrad arrays and restores ``bfloat16``."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from jax import dtypes as jnp_dtypes

from funcgrad.numpy._creation import asarray

save = np.save
savez = np.savez


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """:func:`numpy.load`; a ``.npy`` array comes back as an array (``bfloat16``, which
    NumPy stores as ``V2``, restored), other contents as NumPy gives them."""
    res = np.load(file, *args, **kwargs)
    if isinstance(res, np.ndarray):
        if res.dtype == np.dtype("V2"):
            res = res.view(jnp_dtypes.bfloat16)
        with contextlib.suppress(TypeError, ValueError):  # a dtype arrays cannot hold
            res = asarray(res)
    return res
