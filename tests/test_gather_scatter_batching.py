"""Gathers and scatters under ``vmap`` with both operand and indices batched, and
``.at[]`` updates of whole rows, against JAX.

Batching pairs the operand's and the indices' batch dimensions as batching dimensions of
one general gather or scatter (JAX's batching rule) instead of folding the batch into the
gathered axis with offset indices; ``.at[]`` moves whole trailing windows (``x.at[i]`` of
a matrix writes row ``i``) and computes its traced positions elementwise. The values here
(clamped and dropped out-of-range indices, repeated indices, batch axes anywhere) are
checked against ``jax.vmap`` of ``jax.numpy``; the sharding types on 8 devices are in
``test_sharding_gather_scatter_types``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import indexing as ix


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    xd=st.integers(0, 2),
    idd=st.integers(0, 2),
    axis=st.integers(0, 1),
)
def test_vmap_gather_and_scatter_add_both_batched_match_jax(seed, xd, idd, axis):
    rng = np.random.default_rng(seed)
    B, shape, ishape = 3, (4, 5), (2, 3)
    x = rng.normal(size=shape[:0] + (B, *shape)).astype(np.float32)
    x = np.moveaxis(x, 0, xd)
    idx = np.moveaxis(rng.integers(-2, 7, size=(B, *ishape)).astype(np.int32), 0, idd)
    take = lambda a, i: jnp.take(a, jnp.clip(i, 0, a.shape[axis] - 1), axis=axis)
    want = jax.vmap(take, (xd, idd))(x, idx)
    got = fg.vmap(lambda a, i: ix.gather(a, i, axis=axis), (xd, idd))(x, idx)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # scatter_add is gather's transpose: the gradient of a weighted sum of the gather
    w = rng.normal(size=np.shape(want)).astype(np.float32)
    jg = jax.grad(lambda a: jnp.sum(jax.vmap(take, (xd, idd))(a, idx) * w))(x)
    fgrad = fg.grad(
        lambda a: fnp.sum(fg.vmap(lambda a, i: ix.gather(a, i, axis=axis), (xd, idd))(a, idx) * w)
    )(x)
    np.testing.assert_allclose(np.asarray(fgrad), np.asarray(jg), rtol=1e-6, atol=1e-6)
    u = rng.normal(size=np.shape(want)).astype(np.float32)
    sc = fg.vmap(lambda a, i, v: ix.scatter_add(a, i, v, axis=axis), (xd, idd, 0))(x, idx, u)
    ref = jax.vmap(
        lambda a, i, v: a.at[(slice(None),) * axis + (jnp.clip(i, 0, a.shape[axis] - 1),)].add(v),
        (xd, idd, 0),
    )(x, idx, u)
    np.testing.assert_allclose(np.asarray(sc), np.asarray(ref), rtol=1e-6, atol=1e-6)


def test_vmap_gather_empty_batch_and_unbatched_operand():
    x = np.zeros((0, 4, 3), np.float32)
    idx = np.zeros((0, 2), np.int32)
    got = fg.vmap(lambda a, i: ix.gather(a, i, axis=0))(x, idx)
    assert got.shape == (0, 2, 3)
    table = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    idx = np.array([[0, 3], [5, -1]], np.int32)
    got = fg.vmap(lambda i: ix.gather(table, i, axis=0))(idx)
    np.testing.assert_array_equal(np.asarray(got), table[np.clip(idx, 0, 3)])


def _updates(np_):
    """``.at[]`` forms whose trailing full slices move as windows, traced indices."""
    return {
        "row_set": lambda x, i, v: x.at[i].set(v[0]),
        "row_add_repeated": lambda x, i, v: x.at[np_.stack([i, i])].add(v[:2]),
        "row_set_repeated_last_wins": lambda x, i, v: x.at[np_.stack([i, i])].set(v[:2]),
        "row_mul": lambda x, i, v: x.at[i].multiply(v[1]),
        "row_min_repeated": lambda x, i, v: x.at[np_.stack([i, i + 1, i])].min(v[:3]),
        "row_max": lambda x, i, v: x.at[i, :].max(v[0]),
        "col_set": lambda x, i, v: x.at[:, i].set(v[0, :4]),
        "point_add": lambda x, i, v: x.at[i, 2].add(5.0),
        "slice_rows": lambda x, i, v: x.at[1:3].add(v[:2]),
        "new_axis": lambda x, i, v: x.at[None, i].set(v[:1]),
        "drop_out_of_bounds": lambda x, i, v: x.at[i + 7].set(v[0], mode="drop"),
        "clip_out_of_bounds": lambda x, i, v: x.at[i + 7].add(v[0], mode="clip"),
        "get_fill": lambda x, i, v: x.at[np_.stack([i, i + 5])].get(mode="fill", fill_value=-1.0),
        "get_no_wrap": lambda x, i, v: x.at[i - 3].get(mode="fill", wrap_negative_indices=False),
    }


@pytest.mark.parametrize("name", sorted(_updates(jnp)))
def test_at_updates_with_traced_row_indices_match_jax(name):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 6)).astype(np.float32)
    v = rng.normal(size=(3, 6)).astype(np.float32)
    for i in (np.int32(0), np.int32(2), np.int32(-1)):
        want = jax.jit(_updates(jnp)[name])(x, i, v)
        got = fg.jit(_updates(fnp)[name])(x, i, v)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=name)
    # batched over the operand, the index and the values at once
    xs = rng.normal(size=(3, 4, 6)).astype(np.float32)
    iv = np.array([0, 3, -2], np.int32)
    vs = rng.normal(size=(3, 3, 6)).astype(np.float32)
    want = jax.vmap(_updates(jnp)[name])(xs, iv, vs)
    got = fg.vmap(_updates(fnp)[name])(xs, iv, vs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=name)


def test_at_row_update_gradients_match_jax():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4, 6)).astype(np.float32)
    iv = np.array([1, 3, 1], np.int32)
    v = rng.normal(size=(3, 6)).astype(np.float32)

    def loss(np_, vmap):
        def f(x, v):
            y = vmap(lambda a, i, b: a.at[i].set(b * 2.0).at[i - 1].multiply(b))(x, iv, v)
            return np_.sum(np_.sin(y))

        return f

    want = jax.grad(loss(jnp, jax.vmap), argnums=(0, 1))(x, v)
    got = fg.grad(loss(fnp, fg.vmap), argnums=(0, 1))(x, v)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
