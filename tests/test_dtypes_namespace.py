"""``funcgrad.dtypes`` (``jax.dtypes``'s names) and ``funcgrad.numpy.issubdtype`` for
ml_dtypes' types, against JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import dtypes as fdtypes

_TYPES = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128, ml_dtypes.bfloat16,
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.int4, ml_dtypes.uint4,
]  # fmt: skip
_ABSTRACT = [
    np.generic, np.number, np.inexact, np.floating, np.complexfloating,
    np.integer, np.signedinteger, np.unsignedinteger, np.bool_,
]  # fmt: skip


@pytest.mark.parametrize("t", _TYPES, ids=lambda t: np.dtype(t).name)
def test_issubdtype_matches_jax(t: type) -> None:
    for other in _ABSTRACT + _TYPES:
        assert fnp.issubdtype(t, other) == jnp.issubdtype(t, other), (t, other)
        assert fdtypes.issubdtype(np.dtype(t), other) == jax.dtypes.issubdtype(np.dtype(t), other)


@pytest.mark.parametrize("x64", [False, True])
def test_canonicalize_dtype_matches_jax(x64: bool) -> None:
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        for t in _TYPES:
            assert fdtypes.canonicalize_dtype(t) == jax.dtypes.canonicalize_dtype(t), t
    finally:
        jax.config.update("jax_enable_x64", old)


def test_dtypes_names() -> None:
    assert fg.dtypes is fdtypes
    assert fdtypes.bfloat16 is jax.dtypes.bfloat16
    assert np.dtype(fdtypes.float0) == np.dtype(jax.dtypes.float0)
    for t in (np.int8, np.float32, ml_dtypes.bfloat16, np.complex64):
        assert fdtypes.itemsize_bits(t) == jax.dtypes.itemsize_bits(t)
    for x in (np.float32(1), np.int32(1), np.bool_(True), np.complex64(1j), 1.0, 2):
        assert fdtypes.scalar_type_of(x) is jax.dtypes.scalar_type_of(x)
    assert fdtypes.finfo(np.float32).eps == jax.dtypes.finfo(np.float32).eps
    assert fdtypes.iinfo(np.int8).max == jax.dtypes.iinfo(np.int8).max
    assert fdtypes.result_type(np.float32, 1) == jax.dtypes.result_type(np.float32, 1)
    assert issubclass(fdtypes.TypePromotionError, ValueError)


def test_numpy_narrow_type_names() -> None:
    for name in ("int2", "int4", "uint2", "uint4", "float4_e2m1fn"):
        assert np.dtype(getattr(fnp, name)) == np.dtype(getattr(jnp, name)), name
