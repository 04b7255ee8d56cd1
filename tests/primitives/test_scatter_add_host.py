"""``scatter_add``'s host-tier rule (the axis form ``compat``'s ``index_add`` and sparse
products use) against JAX's ``x.at[..., idx, ...].add(u)`` at the clamped indices: the flat-index
``np.add.at`` it runs on must add the same values in the same order, at any axis, with
out-of-range indices clamped and repeated indices accumulated."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad.primitives.indexing import scatter_add_p


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([((20,), 0), ((20, 4), 0), ((3, 20, 4), 1), ((3, 20), 1), ((2, 3, 5), 2)]),
    st.sampled_from([(30,), (4, 5), ()]),
    st.sampled_from([np.float32, np.float64, np.int32]),
    st.integers(0, 2**31 - 1),
)
def test_matches_jax_at_add(case, ishape, dtype, seed):
    (shape, axis), rng = case, np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    idx = rng.integers(-3, shape[axis] + 3, ishape)
    u = (rng.standard_normal(shape[:axis] + ishape + shape[axis + 1 :]) * 10).astype(dtype)
    got = scatter_add_p.host(x, idx, u, axis=axis)
    # (the primitive clamps out-of-range indices, negative ones to 0, as lax's CLIP mode;
    # jnp's .at[] would first wrap a negative index as NumPy does)
    clamped = np.clip(idx, 0, shape[axis] - 1)
    where = (slice(None),) * axis + (jnp.asarray(clamped),)
    want = np.asarray(jnp.asarray(x).at[where].add(jnp.asarray(u)))
    assert got.dtype == want.dtype and got.shape == want.shape
    # (repeated indices: XLA adds in an order of its own, so float32 sums differ by rounding)
    atol = 1e-5 * (1 + np.abs(want).max()) if dtype == np.float32 else 0
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=atol)
