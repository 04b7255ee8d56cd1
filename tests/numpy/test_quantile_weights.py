"""funcgrad.numpy's quantile family against jax.numpy 0.10.2: the ``inverted_cdf``
method with and without ``weights`` (NaN data, bad weights, weights over the reduced
axes), and the quantiles of several ``q`` under ``jax_numpy_rank_promotion='raise'``
(JAX's setting, which funcgrad's own arithmetic on eager values inside them used to
trip). Also ``average`` with
weights over several reduced axes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

OPS = ["quantile", "nanquantile", "percentile", "nanpercentile"]
CASES = [((7,), None), ((3, 5), 1), ((3, 5), None), ((2, 3, 4), (0, 2)), ((2, 3, 4), (2, 1))]


def _data(shape, seed, nans):
    rng = np.random.default_rng(seed)
    x = rng.integers(-5, 6, size=shape).astype(np.float32)  # ties, as real data has
    if nans:
        x[rng.random(shape) < 0.2] = np.nan
    return x


@settings(max_examples=30, deadline=None)
@given(
    op=st.sampled_from(OPS),
    case=st.sampled_from(CASES),
    seed=st.integers(0, 2**16),
    keepdims=st.booleans(),
    weighted=st.sampled_from(["none", "full", "axes"]),
    nans=st.booleans(),
)
def test_inverted_cdf_matches_jax(op, case, seed, keepdims, weighted, nans):
    shape, axis = case
    x = _data(shape, seed, nans)
    scale = 100.0 if "percentile" in op else 1.0
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.7, 1.0], np.float32) * scale
    rng = np.random.default_rng(seed + 1)
    kw = {}
    if weighted == "full":
        kw["weights"] = rng.integers(0, 4, size=shape).astype(np.float32)
    elif weighted == "axes" and axis is not None:
        axes = (axis,) if isinstance(axis, int) else axis
        kw["weights"] = rng.random(tuple(shape[a] for a in axes)).astype(np.float32)
    got = getattr(fnp, op)(x, q, axis=axis, method="inverted_cdf", keepdims=keepdims, **kw)
    want = getattr(jnp, op)(x, q, axis=axis, method="inverted_cdf", keepdims=keepdims, **kw)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_bad_weights_and_errors_as_jax():
    x = np.arange(6.0, dtype=np.float32)
    w = np.array([1, 1, -1, 1, 1, 1], np.float32)
    for f in (fnp, jnp):
        assert np.isnan(f.quantile(x, np.float32(0.5), weights=w, method="inverted_cdf"))
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf'"):
        fnp.quantile(x, 0.5, weights=np.ones(6))
    with pytest.raises(ValueError, match="Weights cannot be complex"):
        fnp.quantile(x, 0.5, weights=np.ones(6, np.complex64), method="inverted_cdf")
    with pytest.raises(ValueError, match="must match 'a' shape when axis is None"):
        fnp.quantile(x, 0.5, weights=np.ones(3), method="inverted_cdf")
    with pytest.raises(ValueError, match=r"must match reduction axes \(3,\)"):
        fnp.quantile(x.reshape(2, 3), 0.5, axis=1, weights=np.ones(2), method="inverted_cdf")


@pytest.mark.parametrize("method", ["linear", "nearest", "inverted_cdf"])
def test_several_q_under_strict_rank_promotion(method):
    x = _data((4, 7), 3, False)
    q = np.array([0.2, 0.5, 0.9], np.float32)
    old = fg.config.read("jax_numpy_rank_promotion")
    fg.config.update("jax_numpy_rank_promotion", "raise")
    try:
        with jax.numpy_rank_promotion("raise"):
            got = fnp.quantile(x, q, axis=1, method=method)
            want = jnp.quantile(x, q, axis=1, method=method)
            with pytest.raises(ValueError, match="rank"):  # JAX's setting is on
                jnp.add(x, q[:1])
    finally:
        fg.config.update("jax_numpy_rank_promotion", old)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize(
    "shape,axis", [((2, 3, 4), (1, 2)), ((2, 3, 4), (2, 0)), ((2, 3, 4, 5), (3, 0, 2, 1))]
)
def test_average_weights_over_several_axes(shape, axis):
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape).astype(np.float32)
    w = rng.random(tuple(shape[a] for a in axis)).astype(np.float32)
    np.testing.assert_allclose(fnp.average(x, axis, w), jnp.average(x, axis, w), rtol=2e-5)
    with pytest.raises(ValueError, match="shape of weights must be consistent"):
        fnp.average(x, axis, w.T if w.ndim > 1 and w.shape != w.T.shape else np.ones(7))
