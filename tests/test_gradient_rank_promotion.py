"""``gradient`` with coordinate arrays under ``jax_numpy_rank_promotion="raise"``, against
NumPy (values) and JAX (it raises nothing either)."""

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@pytest.mark.parametrize("shape", [(5,), (5, 7), (5, 10, 3)])
def test_gradient_coordinates_rank_promotion_raise(shape):
    rng = np.random.default_rng(0)
    y = rng.normal(size=shape).astype(np.float32)
    coords = [np.cumsum(rng.uniform(0.5, 1.5, size=s)).astype(np.float32) for s in shape]
    old = fg.config.read("jax_numpy_rank_promotion")
    fg.config.update("jax_numpy_rank_promotion", "raise")
    try:
        ours = fnp.gradient(y, *coords)
        theirs = jnp.gradient(y, *coords)
    finally:
        fg.config.update("jax_numpy_rank_promotion", old)
    want = np.gradient(y, *coords)
    ours, theirs, want = ([v] if len(shape) == 1 else v for v in (ours, theirs, want))
    for o, t, w in zip(ours, theirs, want):
        np.testing.assert_allclose(o, w, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-5)
