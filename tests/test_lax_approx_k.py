"""``lax.approx_max_k``/``approx_min_k`` against JAX 0.10.2 on this CPU (where JAX's
approximate TPU algorithm falls back to an exact one): values and indices of distinct
values, values where ties make the chosen index implementation-defined (JAX's CPU
fallback breaks them differently with and without ``aggregate_to_topk``),
``aggregate_to_topk=False``'s whole sorted dimension, gradients, errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.lax as flax


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 6),
    st.integers(0, 2**16),
    st.booleans(),
    st.booleans(),
)
def test_matches_jax(rows, cols, seed, largest, aggregate):
    rng = np.random.default_rng(seed)
    x = rng.permutation(rows * cols).reshape(rows, cols).astype(np.float32)
    k = int(rng.integers(1, cols + 1))
    dim = int(rng.integers(0, 2))
    k = min(k, x.shape[dim])
    name = "approx_max_k" if largest else "approx_min_k"
    kw = {"reduction_dimension": dim, "aggregate_to_topk": aggregate}
    got = getattr(flax, name)(x, k, **kw)
    want = getattr(jax.lax, name)(x, k, **kw)
    assert isinstance(got, list) and len(got) == 2
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))

    def loss(lib, f):
        return lambda v: (f(v, k, **kw)[0] * np.arange(1.0, 1 + f(x, k, **kw)[0].size).reshape(
            np.shape(f(x, k, **kw)[0]))).sum()  # fmt: skip

    np.testing.assert_array_equal(
        np.asarray(fg.grad(loss(fg, getattr(flax, name)))(x)),
        np.asarray(jax.grad(loss(jax, getattr(jax.lax, name)))(x)),
    )


@pytest.mark.parametrize(
    "args",
    [
        (np.arange(5.0), 7),
        (np.arange(5, dtype=np.int32), 2),
    ],
)
def test_errors_match_jax(args):
    errs = []
    for f in (flax.approx_max_k, jax.lax.approx_max_k):
        with pytest.raises(ValueError) as e:
            f(*args)
        errs.append(str(e.value))
    assert errs[0] == errs[1]


def test_tied_values_match_jax():
    x = np.array([[0.0, 1.0, 0.0, 2.0, 1.0], [3.0, 3.0, 3.0, 0.0, 0.0]], np.float32)
    for name in ("approx_max_k", "approx_min_k"):
        for dim, k in ((1, 3), (0, 1)):
            got = getattr(flax, name)(x, k, reduction_dimension=dim)[0]
            want = getattr(jax.lax, name)(x, k, reduction_dimension=dim)[0]
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
