"""``funcgrad.dtypes.itemsize_bits`` and ``result_type(None, ...)`` against JAX 0.10.2's
``jax.dtypes``: sub-byte types count their format's bits (``int4``: 4; they counted a
byte), ``None`` is refused by ``itemsize_bits`` and is NumPy's ``float64`` (canonical) to
``result_type`` (it raised)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp

ALL = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
    ml_dtypes.bfloat16,
    ml_dtypes.int1,
    ml_dtypes.int2,
    ml_dtypes.int4,
    ml_dtypes.uint1,
    ml_dtypes.uint2,
    ml_dtypes.uint4,
    ml_dtypes.float4_e2m1fn,
    ml_dtypes.float6_e2m3fn,
    ml_dtypes.float6_e3m2fn,
    ml_dtypes.float8_e3m4,
    ml_dtypes.float8_e4m3,
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e8m0fnu,
]


@pytest.mark.parametrize("dtype", ALL, ids=lambda t: np.dtype(t).name)
def test_itemsize_bits_as_jax(dtype):
    assert funcgrad.dtypes.itemsize_bits(dtype) == jax.dtypes.itemsize_bits(dtype)
    assert funcgrad.dtypes.itemsize_bits(np.dtype(dtype)) == jax.dtypes.itemsize_bits(dtype)


def test_itemsize_bits_refuses_none():
    with pytest.raises(ValueError, match="dtype cannot be None"):
        jax.dtypes.itemsize_bits(None)
    with pytest.raises(ValueError, match="dtype cannot be None"):
        funcgrad.dtypes.itemsize_bits(None)


@pytest.mark.parametrize(
    "other",
    [(), (None,), (np.int8,), (np.int32,), (ml_dtypes.bfloat16,), (np.complex64,), (1.0,), (True,)],
)
def test_result_type_of_none_as_jax(other):
    args = (None, *other)
    assert fnp.result_type(*args) == jnp.result_type(*args)
    assert funcgrad.dtypes.result_type(*args) == jax.dtypes.result_type(*args)
