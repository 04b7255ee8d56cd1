"""``x.at[idx].power(values)`` as JAX's: ``x`` to the power of ones multiplied at ``idx``
by ``values``, so a position indexed several times takes the product of its values as
exponent, and traced indices work (funcgrad refused both: "at[].power with repeated or
traced indices"). Values, ``jit`` and gradients against JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp


@settings(max_examples=25, deadline=None)
@given(
    idx=st.lists(st.integers(-5, 4), min_size=1, max_size=4),
    seed=st.integers(0, 2**16),
    traced=st.booleans(),
)
def test_at_power_matches_jax(idx, seed, traced):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2.0, 5).astype(np.float32)
    v = rng.uniform(-1.5, 1.5, len(idx)).astype(np.float32)
    i = np.asarray(idx, np.int32)

    def run(np_, jit, grad):
        f = lambda x, i, v: np_.asarray(x).at[i].power(v)
        g = jit(f) if traced else (lambda x, i, v: f(x, i, v))
        val = g(x, i, v)
        dx = grad(lambda x: np_.sum(g(x, i, v)))(x)
        return np.asarray(val), np.asarray(dx)

    got, want = run(fnp, fg.jit, fg.grad), run(jnp, jax.jit, jax.grad)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "uint8"])
def test_at_power_integers(dtype):
    x = np.array([2, 3, 4], dtype)
    i = np.array([0, 0, 2])
    got = fg.jit(lambda x, i: fnp.asarray(x).at[i].power(2))(x, i)
    want = jax.jit(lambda x, i: jnp.asarray(x).at[i].power(2))(x, i)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
