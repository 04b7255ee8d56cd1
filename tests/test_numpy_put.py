"""``funcgrad.numpy.put`` against ``jax.numpy.put``: every mode, indices in and out of
bounds (negative ones included), values repeated to the indices' length, gradients."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([(5,), (2, 3), (3, 1, 2)]),
    st.lists(st.integers(-9, 9), min_size=1, max_size=6),
    st.integers(1, 4),
    st.sampled_from([None, "clip", "wrap"]),
    st.sampled_from([np.float32, np.int32]),
)
def test_put_matches_jax(shape, ind, nv, mode, dtype):
    a = np.arange(np.prod(shape), dtype=dtype).reshape(shape) + 100
    v = (np.arange(nv, dtype=dtype) + 1) * -1
    ind = np.array(ind, np.int32)
    got = fnp.put(a, ind, v, mode=mode, inplace=False)
    want = jnp.put(a, ind, v, mode=mode, inplace=False)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", [None, "clip", "wrap"])
def test_put_gradients_match_jax(mode):
    a = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    v = np.array([0.5, -2.0], np.float32)
    ind = np.array([1, 8, -2, -9], np.int32)  # (out of bounds both ways)

    def loss(m, a, v):
        return m.sum(
            m.sin(m.put(a, ind, v, mode=mode, inplace=False)) * m.arange(6.0).reshape(2, 3)
        )

    got = fg.grad(lambda a, v: loss(fnp, a, v), argnums=(0, 1))(a, v)
    want = jax.grad(lambda a, v: loss(jnp, a, v), argnums=(0, 1))(a, v)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_put_refuses_as_jax():
    a = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="in place"):
        fnp.put(a, [0], [1.0])
    with pytest.raises(NotImplementedError):
        fnp.put(a, [0], [1.0], mode="raise", inplace=False)
    with pytest.raises(ValueError):
        fnp.put(a, [0], [1.0], mode="nearest", inplace=False)
