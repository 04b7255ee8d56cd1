"""Dtype helpers JAX's test files take from ``jax._src.dtypes`` to build their NumPy
references (``np.roots(x).astype(dtypes.to_complex_dtype(x.dtype))``): test utilities
on NumPy dtypes (own code, JAX 0.10.2's results without x64), not funcgrad's
behaviour, so the swap provides them beside ``funcgrad.dtypes``."""

from __future__ import annotations

from typing import Any

import numpy as np

_WIDE = (np.dtype(np.int64), np.dtype(np.uint64))

#: the dtypes JAX gives Python scalars before canonicalisation
PYTHON_SCALAR_DTYPES = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}


def _is_ml_float(dt: np.dtype) -> bool:
    """ml_dtypes' floats (``bfloat16``, ``float8_*``): not ``np.inexact`` to NumPy."""
    return dt.type.__module__.split(".")[0] == "ml_dtypes" and "float" in dt.name


def to_inexact_dtype(dtype: Any) -> np.dtype:
    """``dtype`` if floating or complex; else the float that holds it (64-bit integers:
    ``float64``; booleans and narrower integers: ``float32``)."""
    dt = np.dtype(dtype)
    if np.issubdtype(dt, np.inexact) or _is_ml_float(dt):
        return dt
    return np.dtype(np.float64) if dt in _WIDE else np.dtype(np.float32)


def to_floating_dtype(dtype: Any) -> np.dtype:
    """The real floating dtype of :func:`to_inexact_dtype` (a complex's component)."""
    dt = to_inexact_dtype(dtype)
    if np.issubdtype(dt, np.complexfloating):
        return np.dtype(np.float64) if dt == np.complex128 else np.dtype(np.float32)
    return dt


def to_complex_dtype(dtype: Any) -> np.dtype:
    """``complex128`` for double-precision inputs (``float64``, ``complex128``, 64-bit
    integers), ``complex64`` for the others."""
    dt = to_inexact_dtype(dtype)
    wide = dt in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128) if wide else np.dtype(np.complex64)
