"""``funcgrad.scipy.integrate``, ``.cluster.vq``, ``.ndimage``, ``.interpolate`` against
``jax.scipy`` (values, dtypes, gradients, ``jit`` and ``vmap``)."""

from __future__ import annotations

import itertools

import jax
import jax.scipy as jsp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.scipy.cluster.vq as fvq
import funcgrad.scipy.integrate as fint
import funcgrad.scipy.interpolate as finterp
import funcgrad.scipy.ndimage as fnd

RNG = np.random.default_rng(0)


def close(a, b, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)
    assert np.asarray(a).dtype == np.asarray(b).dtype
    assert np.shape(a) == np.shape(b)


# --------------------------------------------------------------------------- integrate


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("xkind", ["none", "dx", "x1d", "xnd"])
def test_trapezoid_matches_jax(axis, xkind):
    y = RNG.normal(size=(4, 5, 6))
    n = y.shape[axis]
    kw = {
        "none": {},
        "dx": {"dx": 0.3},
        "x1d": {"x": np.sort(RNG.normal(size=n))},
        "xnd": {"x": np.sort(RNG.normal(size=y.shape), axis=axis)},
    }[xkind]
    close(fint.trapezoid(y, axis=axis, **kw), jsp.integrate.trapezoid(y, axis=axis, **kw))
    g = fg.grad(lambda y: fint.trapezoid(y, axis=axis, **kw).sum())(y)
    close(g, jo.grad(lambda y: jsp.integrate.trapezoid(y, axis=axis, **kw).sum())(y))


# --------------------------------------------------------------------------- vq


@pytest.mark.parametrize("shape", [((7, 3), (4, 3)), ((9,), (3,))])
def test_vq_matches_jax(shape):
    obs, cb = RNG.normal(size=shape[0]), RNG.normal(size=shape[1])
    got, want = fvq.vq(obs, cb), jsp.cluster.vq.vq(obs, cb)
    close(got[0], want[0])
    close(got[1], want[1])
    jitted = fg.jit(fvq.vq)(obs, cb)
    close(jitted[1], want[1])
    with pytest.raises(ValueError, match="same rank"):
        fvq.vq(obs[..., None], cb)


def test_vq_int_inputs_promote_like_jax():
    obs, cb = np.arange(6).reshape(3, 2), np.array([[0, 0], [4, 4]])
    got, want = fvq.vq(obs, cb), jsp.cluster.vq.vq(obs, cb)
    close(got[0], want[0])
    close(got[1], want[1])


# --------------------------------------------------------------------------- ndimage

MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]


@pytest.mark.parametrize(("order", "mode"), list(itertools.product([0, 1], MODES)))
def test_map_coordinates_matches_jax(order, mode):
    img = RNG.normal(size=(5, 6))
    coords = [RNG.uniform(-3, 8, size=(4, 3)), RNG.uniform(-3, 9, size=(4, 3))]
    got = fnd.map_coordinates(img, coords, order, mode=mode, cval=0.5)
    want = jsp.ndimage.map_coordinates(img, coords, order, mode=mode, cval=0.5)
    close(got, want, rtol=1e-12, atol=1e-12)
    if order == 1:
        f = lambda im, c: fnd.map_coordinates(im, c, 1, mode=mode).sum()
        jf = lambda im, c: jsp.ndimage.map_coordinates(im, c, 1, mode=mode).sum()
        for gg, jg in zip(
            fg.grad(f, argnums=(0, 1))(img, coords), jo.grad(jf, (0, 1))(img, coords)
        ):
            jax.tree_util.tree_map(close, gg, jg)


@given(st.integers(1, 6), st.lists(st.floats(-12, 12), min_size=1, max_size=8))
def test_map_coordinates_1d_modes_hypothesis(n, xs):
    arr = np.arange(1.0, n + 1.0) ** 2
    for mode in MODES:
        for order in (0, 1):
            got = fnd.map_coordinates(arr, [np.array(xs)], order, mode=mode)
            want = jsp.ndimage.map_coordinates(arr, [np.array(xs)], order, mode=mode)
            close(got, want, rtol=1e-12, atol=1e-12)


def test_map_coordinates_integer_input_and_errors():
    img = np.arange(12, dtype=np.int32).reshape(3, 4)
    c = [np.array([0.5, 1.5, 2.2]), np.array([0.5, 2.5, 3.9])]
    close(fnd.map_coordinates(img, c, 1), jsp.ndimage.map_coordinates(img, c, 1))
    with pytest.raises(ValueError, match=r"sequence of length input\.ndim"):
        fnd.map_coordinates(img, c[:1], 1)
    with pytest.raises(NotImplementedError, match="mode"):
        fnd.map_coordinates(img, c, 1, mode="grid-wrap")
    with pytest.raises(NotImplementedError, match="order"):
        fnd.map_coordinates(img, c, 3)


# --------------------------------------------------------------------------- interpolate


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill", [np.nan, None, -1.0])
def test_regular_grid_interpolator_matches_jax(method, fill):
    pts = (np.sort(RNG.uniform(0, 3, 4)), np.sort(RNG.uniform(-1, 1, 5)))
    vals = RNG.normal(size=(4, 5, 2))
    xi = RNG.uniform(-1.5, 3.5, size=(3, 6, 2))
    f = finterp.RegularGridInterpolator(pts, vals, method=method, fill_value=fill)
    j = jsp.interpolate.RegularGridInterpolator(pts, vals, method=method, fill_value=fill)
    close(f(xi), j(xi), rtol=1e-12, atol=1e-12)
    close(f((xi[..., 0], xi[..., 1])), j((xi[..., 0], xi[..., 1])), rtol=1e-12, atol=1e-12)
    close(
        fg.jit(
            lambda v, x: finterp.RegularGridInterpolator(pts, v, method=method, fill_value=fill)(x)
        )(vals, xi),
        j(xi),
        rtol=1e-12,
        atol=1e-12,
    )
    if method == "linear" and fill is None:
        gf = fg.grad(lambda x: f(x).sum())(xi)
        gj = jo.grad(lambda x: j(x).sum())(xi)
        close(gf, gj, rtol=1e-9, atol=1e-9)


def test_regular_grid_interpolator_1d_vmap_and_errors():
    g = np.linspace(0.0, 1.0, 6)
    vals = np.sin(g)
    f = finterp.RegularGridInterpolator((g,), vals)
    j = jsp.interpolate.RegularGridInterpolator((g,), vals)
    xs = np.linspace(-0.1, 1.1, 7)
    close(f(xs), j(xs))
    close(fg.vmap(lambda x: f(x[None]))(xs), jo.vmap(lambda x: j(x[None]))(xs))
    with pytest.raises(ValueError, match="not defined"):
        finterp.RegularGridInterpolator((g,), vals, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        finterp.RegularGridInterpolator((g,), vals, bounds_error=True)
    with pytest.raises(ValueError, match="dimension"):
        f(np.zeros((3, 2)))
