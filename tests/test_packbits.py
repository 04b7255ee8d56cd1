"""``packbits``/``unpackbits`` against NumPy (the values) and JAX (dtypes, errors)."""

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_, np.int32])
@pytest.mark.parametrize("axis", [None, 0, 1, -2, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits(dtype, axis, bitorder):
    a = np.random.default_rng(0).integers(0, 3, size=(1, 2, 3, 5)).astype(dtype)
    got = fg.jit(lambda a: fnp.packbits(a, axis=axis, bitorder=bitorder))(a)
    np.testing.assert_array_equal(got, np.packbits(a, axis=axis, bitorder=bitorder))
    assert got.dtype == jnp.packbits(a, axis=axis, bitorder=bitorder).dtype


@pytest.mark.parametrize("axis", [None, 0, 1, -2, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
@pytest.mark.parametrize("count", [None, 20, 3, -2])
def test_unpackbits(axis, bitorder, count):
    a = np.random.default_rng(1).integers(0, 256, size=(1, 2, 3, 4)).astype(np.uint8)
    got = fg.jit(lambda a: fnp.unpackbits(a, axis=axis, count=count, bitorder=bitorder))(a)
    want = np.unpackbits(a, axis=axis, count=count, bitorder=bitorder)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_unpackbits_needs_uint8():
    for np_ in (fnp, jnp):
        with pytest.raises(TypeError, match="Expected an input array of unsigned byte"):
            np_.unpackbits(np.arange(3, dtype=np.int32))
