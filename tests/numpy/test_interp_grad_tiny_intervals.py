"""``interp``'s derivative at sample points closer together than ``spacing(eps)`` stays
finite, as JAX 0.10.2's (such an interval counts as empty); values and gradients
against JAX, and values against NumPy on ordinary inputs (duplicates included)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

KWARGS = [{}, {"period": 0.59}, {"left": 0, "right": 1}]


@pytest.mark.parametrize("kw", KWARGS, ids=str)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_gradient_finite_like_jax(kw: dict, dtype: type) -> None:
    x = dtype(np.exp(np.linspace(-90, -20, 1000)))
    ours = fg.grad(lambda z: fnp.sum(fnp.interp(z, z, fnp.ones_like(z), **kw)))(x)
    theirs = jax.grad(lambda z: jnp.sum(jnp.interp(z, z, jnp.ones_like(z), **kw)))(x)
    assert np.all(np.isfinite(np.asarray(ours)))
    np.testing.assert_allclose(np.asarray(ours, np.float32), np.asarray(theirs, np.float32))


def test_values_like_numpy() -> None:
    rng = np.random.RandomState(0)
    xp = np.sort(rng.rand(20).astype(np.float32))
    xp[5] = xp[4]  # a repeated sample point
    fp = rng.randn(20).astype(np.float32)
    x = rng.rand(50).astype(np.float32) * 1.2 - 0.1
    np.testing.assert_allclose(
        np.asarray(fnp.interp(x, xp, fp)), np.interp(x, xp, fp), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(fnp.interp(x, xp, fp)), np.asarray(jnp.interp(x, xp, fp)), rtol=1e-5, atol=1e-6
    )
