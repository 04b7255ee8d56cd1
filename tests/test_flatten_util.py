"""funcgrad.flatten_util.ravel_pytree against jax.flatten_util.ravel_pytree: the flat
vector's values and dtype, the tree unravel rebuilds, dtype-polymorphic unravel for one
dtype, the dtype check for several, and use under jit/grad/vmap."""

from __future__ import annotations

import chex
import hypothesis.extra.numpy as hnp
import jax
import jax.flatten_util as jfu
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.flatten_util import ravel_pytree

DTYPES = [np.float32, np.int32, np.bool_, np.complex64, np.float16]


@st.composite
def trees(draw):
    n = draw(st.integers(0, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    leaves = []
    for _ in range(n):
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
        dtype = draw(st.sampled_from(DTYPES))
        values = rng.integers(-4, 5, size=shape) + (
            1j * rng.integers(-4, 5, size=shape) if dtype == np.complex64 else 0
        )
        leaves.append(np.asarray(values).astype(dtype))
    kind = draw(st.sampled_from(["list", "dict", "tuple"]))
    if kind == "dict":
        return {f"k{i}": x for i, x in enumerate(leaves)}
    return leaves if kind == "list" else tuple(leaves)


@settings(max_examples=40, deadline=None)
@given(trees())
def test_ravel_and_unravel_match_jax(tree):
    flat, unravel = ravel_pytree(tree)
    with jax.numpy_dtype_promotion("standard"):
        jflat, junravel = jfu.ravel_pytree(tree)
    assert flat.shape == jflat.shape and flat.dtype == jflat.dtype
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(jflat))
    back = unravel(flat)
    chex.assert_trees_all_equal_structs(back, junravel(jflat))
    for a, b in zip(jax.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(tree)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(np.asarray(a), b)


def test_one_dtype_unravel_keeps_any_dtype_and_several_dtypes_check():
    x = np.arange(10, dtype=np.float32)
    flat, unravel = ravel_pytree(x)
    mask = unravel(flat < 5.3)
    assert mask.dtype == np.bool_ and mask.shape == (10,)
    flat2, unravel2 = ravel_pytree((x, np.arange(10, dtype=np.int32)))
    assert flat2.dtype == np.float32
    with pytest.raises(TypeError, match="but expected dtype float32"):
        unravel2(flat2 < 5.3)
    with pytest.raises(ValueError, match="1-D array of 20 elements"):
        unravel2(fnp.zeros(19))


def test_empty_tree_is_float32():
    flat, unravel = ravel_pytree([])
    assert flat.shape == (0,) and flat.dtype == np.float32
    assert unravel(flat) == []


def test_under_transforms_and_no_retrace():
    params = {
        "w": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),
        "b": np.ones(3, np.float32),
    }
    flat, unravel = ravel_pytree(params)

    def loss(v):
        p = unravel(v)
        return fnp.sum(fnp.tanh(p["w"]) ** 2) + fnp.sum(p["b"] ** 3)

    jflat, junravel = jfu.ravel_pytree(params)

    def jloss(v):
        p = junravel(v)
        return jax.numpy.sum(jax.numpy.tanh(p["w"]) ** 2) + jax.numpy.sum(p["b"] ** 3)

    np.testing.assert_allclose(fg.grad(loss)(flat), jax.grad(jloss)(jflat), rtol=1e-6)
    np.testing.assert_allclose(fg.jit(fg.grad(loss))(flat), jax.grad(jloss)(jflat), rtol=1e-6)
    batched = fg.vmap(lambda v: ravel_pytree(unravel(v))[0])(np.stack([flat, 2 * flat]))
    np.testing.assert_allclose(batched, np.stack([flat, 2 * flat]))
    # equal structures give equal unravel functions: a static argument does not retrace
    _, unravel_again = ravel_pytree(params)
    assert unravel_again == unravel and hash(unravel_again) == hash(unravel)
    traces = []

    def apply(v, u):
        traces.append(1)
        return u(v)["b"].sum()

    f = fg.jit(apply, static_argnums=1)
    f(flat, unravel)
    f(flat, unravel_again)
    assert len(traces) == 1
