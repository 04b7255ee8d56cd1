"""funcgrad.numpy's NaN reductions, quantiles, cov/corrcoef and histograms against
``jax.numpy``: values, shapes, dtypes, weak types, errors, gradients vs ``jax.grad`` and
``vmap`` vs ``jax.vmap``."""

from __future__ import annotations

import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from fnp_testutil import assert_same_leaves, fg_call

import funcgrad as fg
import funcgrad.numpy as fnp

RNG = np.random.default_rng(1)
X = RNG.standard_normal((3, 5))
XN = X.copy()
XN[0, 1] = np.nan
XN[2, :] = np.nan
I3 = np.array([3, 1, 2, 7])
FW = np.array([1, 2, 1, 1, 3])
AW = np.array([0.5, 1.0, 2.0, 1.0, 0.1])

CASES = [
    ("nanprod", (XN,), {"axis": 1}),
    ("nanmax", (XN,), {"axis": 1}),
    ("nanmin", (XN,), {}),
    ("nanmax", (I3,), {}),
    ("nanargmax", (XN,), {"axis": 1}),
    ("nanargmin", (XN,), {"axis": 0}),
    ("nanvar", (XN,), {"axis": 1}),
    ("nanstd", (XN,), {"axis": 0, "ddof": 1}),
    ("nancumsum", (XN,), {"axis": 1}),
    ("nancumprod", (XN,), {}),
    ("quantile", (X, 0.3), {}),
    ("quantile", (X, np.array([0.0, 0.25, 1.0])), {"axis": 1, "keepdims": True}),
    ("quantile", (X, 0.5), {"axis": 0, "method": "lower"}),
    ("quantile", (X, 0.4), {"axis": 1, "method": "higher"}),
    ("quantile", (X, 0.4), {"axis": 1, "method": "midpoint"}),
    ("quantile", (np.arange(4.0), np.array([0.5, 1 / 6, 0.3])), {"method": "nearest"}),
    ("quantile", (XN, 0.5), {"axis": 1}),
    ("quantile", (X.astype(np.float32), 0.5), {}),
    ("quantile", (I3, 0.5), {}),
    ("nanquantile", (XN, 0.5), {"axis": 1}),
    ("nanquantile", (XN, np.array([0.1, 0.9])), {"axis": (0, 1)}),
    ("percentile", (I3, 50), {}),
    ("percentile", (X, np.array([10, 90])), {"axis": 0}),
    ("nanpercentile", (XN, 30), {"axis": 1, "keepdims": True}),
    ("nanmedian", (XN,), {"axis": 1}),
    ("nanmedian", (XN,), {}),
    ("cov", (X,), {}),
    ("cov", (X,), {"rowvar": False, "bias": True}),
    ("cov", (X[0], X[1]), {}),
    ("cov", (X,), {"fweights": FW, "aweights": AW}),
    ("cov", (X,), {"aweights": AW, "ddof": 0}),
    ("cov", (X[0],), {}),
    ("cov", (I3,), {}),
    ("corrcoef", (X,), {}),
    ("corrcoef", (X[0], X[1]), {}),
    ("corrcoef", (X,), {"rowvar": False}),
    ("histogram", (X,), {}),
    ("histogram", (X,), {"bins": 4, "range": (-1.0, 1.0)}),
    ("histogram", (X,), {"bins": np.array([-2.0, 0.0, 0.5, 3.0]), "density": True}),
    ("histogram", (X,), {"bins": 3, "weights": np.abs(X)}),
    ("histogram", (I3,), {"bins": 3}),
    ("histogram_bin_edges", (X,), {"bins": 5}),
    ("histogram2d", (X[0], X[1]), {"bins": 3}),
    ("histogram2d", (X[0], X[1]), {"bins": [2, 3], "density": True}),
    ("histogramdd", (X.T,), {"bins": 2}),
]


@pytest.mark.parametrize("name,args,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jnp(name, args, kw):
    got = fg_call(name, args, kw) if name != "nanmedian" else getattr(fnp, name)(*args, **kw)
    want = getattr(jnp, name)(*args, **kw)
    assert_same_leaves(got, want, what=f"{name}{kw}")


def test_errors():
    with pytest.raises(ValueError, match="method"):
        fnp.quantile(X, 0.5, method="cubic")
    with pytest.raises(ValueError, match="rank"):
        fnp.quantile(X, np.ones((2, 2)))
    with pytest.raises(TypeError, match="interpolation"):
        fnp.percentile(X, 50, interpolation="linear")
    with pytest.raises(ValueError, match="2 dimensions"):
        fnp.cov(np.ones((2, 2, 2)))
    with pytest.raises(RuntimeError, match="fweights"):
        fnp.cov(X, fweights=np.array([1, 2]))
    with pytest.raises(ValueError, match="bins"):
        fnp.histogram(X, bins=0)


GRADS = [
    ("quantile", lambda m, x: m.sum(m.quantile(x, np.array([0.2, 0.7]), axis=1) ** 2), X),
    ("nanquantile", lambda m, x: m.nanquantile(x, 0.3, axis=1)[0], XN),
    ("median", lambda m, x: m.nanmedian(x, axis=0)[0], XN),
    ("nanvar", lambda m, x: m.nansum(m.nanvar(x, axis=1)), XN),
    ("nanmax", lambda m, x: m.nanmax(x, axis=1)[0], XN),
    ("cov", lambda m, x: m.sum(m.cov(x, aweights=AW) ** 2), X),
    ("corrcoef", lambda m, x: m.sum(m.corrcoef(x) ** 3), X),
    ("histogram-w", lambda m, x: m.sum(m.histogram(X, bins=3, weights=x)[0] ** 2), X),
]


@pytest.mark.parametrize("name,f,x", GRADS, ids=[g[0] for g in GRADS])
def test_grad_against_jax(name, f, x):
    np.testing.assert_allclose(
        fg.grad(lambda x: f(fnp, x))(x), jo.grad(lambda x: f(jnp, x))(x), rtol=1e-9, atol=1e-9
    )


def test_vmap_and_jit():
    got = fg.vmap(lambda r: fnp.quantile(r, 0.25))(X)
    np.testing.assert_allclose(got, jo.vmap(lambda r: jnp.quantile(r, 0.25))(X))
    got = fg.jit(lambda x: fnp.histogram(x, bins=4)[0])(X)
    np.testing.assert_allclose(got, jnp.histogram(X, bins=4)[0])
    got = fg.vmap(lambda r: fnp.nanmedian(r))(XN)
    np.testing.assert_allclose(got, jo.vmap(lambda r: jnp.nanmedian(r))(XN))


def test_histograms_of_integers_under_strict_promotion() -> None:
    """funcgrad's own arithmetic makes its conversions explicit: JAX's strict promotion
    mode (which JAX's test case class turns on) does not reject a histogram of ints."""
    import jax
    import jax.numpy as jnp

    x = np.arange(10).astype(np.int16)
    y = (np.arange(10) % 3).astype(np.int16)
    want2, wantd = jnp.histogram2d(x, y), jnp.histogramdd(np.stack([x, y], 1))
    old = jax.config.jax_numpy_dtype_promotion
    jax.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        got2, gotd = fnp.histogram2d(x, y), fnp.histogramdd(np.stack([x, y], 1))
    finally:
        jax.config.update("jax_numpy_dtype_promotion", old)
    for g, w in ((got2, want2), (gotd, wantd)):
        np.testing.assert_allclose(g[0], w[0])
        for ge, we in zip(g[1], w[1]):
            np.testing.assert_allclose(ge, we, rtol=1e-6)


@pytest.mark.parametrize("adt", [np.int16, np.float16, np.float32])
@pytest.mark.parametrize("wdt", [None, np.int16, np.uint8, np.float16, np.float32])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_dtypes_with_weights(adt, wdt, density) -> None:
    """Data and weights are promoted together to an inexact dtype, which the edges and
    the weighted counts take (unweighted ``histogramdd`` counts stay integers); the
    values, dtypes and strict promotion (weights of the data's dtype) as ``jnp``."""
    import jax

    a = np.array([1, -2, 3, 0, 2, 1]).astype(adt)
    w = None if wdt is None else np.array([1, 2, 1, 3, 2, 1]).astype(wdt)
    bins_list = [2, np.array([0, 1, 3], np.int32), np.array([-2, 0, 3], np.float16)]
    for bins in bins_list:
        bins2 = bins if isinstance(bins, int) else [bins, bins]
        got = fnp.histogram(a, bins=bins, weights=w, density=density)
        want = jnp.histogram(a, bins=bins, weights=w, density=density)
        got2 = fnp.histogram2d(a, a[::-1], bins=bins2, weights=w, density=density)
        want2 = jnp.histogram2d(a, a[::-1], bins=bins2, weights=w, density=density)
        for g, wt in zip((*got, *got2), (*want, *want2)):
            assert g.dtype == wt.dtype, (bins, g.dtype, wt.dtype)
            np.testing.assert_allclose(g, wt, rtol=1e-3)
    if wdt is None or np.dtype(wdt) == np.dtype(adt):
        with jax.numpy_dtype_promotion("strict"):
            got2 = fnp.histogram2d(a, a, bins=2, weights=w, density=density)
            want2 = jnp.histogram2d(a, a, bins=2, weights=w, density=density)
        np.testing.assert_allclose(got2[0], want2[0], rtol=1e-3)
