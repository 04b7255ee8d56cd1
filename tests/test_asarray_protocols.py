"""``asarray``/``array`` of objects with ``__array__`` and of Python buffers
(``bytearray``, ``array.array``, ``memoryview``), against JAX."""

import array

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad.numpy as fnp


class _ArrayLike:
    dtype = np.dtype("float32")

    def __array__(self, dtype=None, copy=None):
        return np.array([3.0, 4.0], dtype=dtype)


@pytest.mark.parametrize("make", [
    _ArrayLike,
    lambda: bytearray(b"\x2a\xf3"),
    lambda: array.array("l", [0, 1, 2, 3]),
    lambda: memoryview(np.arange(3, dtype=np.int16)),
])  # fmt: skip
@pytest.mark.parametrize("ndmin", [0, 2])
def test_array_of_protocol_objects(make, ndmin):
    got, want = fnp.array(make(), ndmin=ndmin), jnp.array(make(), ndmin=ndmin)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(fnp.asarray(make()), jnp.asarray(make()))
