"""``funcgrad.scipy.fft`` (DCT type 2 and its inverse) against ``jax.scipy.fft``: values,
dtypes, shapes, errors, gradients, ``jit`` and ``vmap``."""

from __future__ import annotations

import jax
import jax.scipy.fft as jfft
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.scipy.fft as ffft
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 5))


def jitted(mod, name, **kw):
    """``mod.name`` with ``kw`` bound, under funcgrad's or JAX's ``jit`` (one compilation per
    case keeps the suite fast; eager calls are checked in the tests below)."""
    fn = getattr(mod, name)
    return (fg.jit if mod is ffft else jax.jit)(lambda x: fn(x, **kw))


def close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["dct", "idct"])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize(("n", "axis"), [(None, -1), (3, -1), (7, 0), (1, 1)])
def test_1d_matches_jax(name, norm, n, axis):
    kw = {"n": n, "axis": axis, "norm": norm}
    close(jitted(ffft, name, **kw)(X), jitted(jfft, name, **kw)(X))


@pytest.mark.parametrize("name", ["dctn", "idctn"])
@pytest.mark.parametrize(
    ("s", "axes", "norm"),
    [((2,), None, None), ((4, 6), None, "ortho"), ((2,), (0,), "backward"),
     (None, (-1, 0), None), ((3, 2, 5), None, "ortho")],
)  # fmt: skip
def test_nd_matches_jax(name, norm, s, axes):
    x = RNG.normal(size=(2, 3, 4))
    kw = {"s": s, "axes": axes, "norm": norm}
    close(jitted(ffft, name, **kw)(x), jitted(jfft, name, **kw)(x))


@pytest.mark.parametrize("name", ["dct", "idctn"])
@pytest.mark.parametrize(
    "x",
    [
        X.astype(np.float32),
        np.arange(6),
        X + 1j * X[::-1],
        (X + 1j * X[::-1]).astype(np.complex64),
        np.array([2.5]),
    ],
    ids=["f32", "int", "c128", "c64", "len1"],
)
def test_dtypes_match_jax(name, x):
    tol = 1e-5 if x.dtype in (np.float32, np.complex64) else 1e-10
    close(getattr(ffft, name)(x), getattr(jfft, name)(x), tol)  # eager


def test_python_list_input():
    close(ffft.dct([1.0, 2.0, 3.0]), jfft.dct(np.array([1.0, 2.0, 3.0])))


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_errors_like_jax(name):
    fn = getattr(ffft, name)
    with pytest.raises(NotImplementedError, match="type 2"):
        fn(X, type=3)
    with pytest.raises(ValueError, match="not implemented"):
        fn(X, norm="forward")


def test_s_too_long_raises():
    with pytest.raises(ValueError, match="at most"):
        ffft.dctn(X, s=(2, 2, 2))


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_inverse_round_trip(norm):
    x = RNG.normal(size=(4, 6))
    close(ffft.idct(ffft.dct(x, norm=norm), norm=norm), x)
    close(ffft.idctn(ffft.dctn(x, norm=norm), norm=norm), x)


@given(st.lists(st.floats(-1e3, 1e3), min_size=5, max_size=5), st.sampled_from([None, "ortho"]))
def test_round_trip_and_parseval(values, norm):
    x = np.array(values)
    y = ffft.dct(x, norm=norm)
    np.testing.assert_allclose(np.asarray(ffft.idct(y, norm=norm)), x, atol=1e-9)
    if norm == "ortho":  # orthonormal: energy is preserved
        np.testing.assert_allclose(np.sum(np.asarray(y) ** 2), np.sum(x**2), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_grad_matches_jax(name):
    w = RNG.normal(size=(3, 4))

    def loss(mod):
        return lambda x: (getattr(mod, name)(x, norm="ortho")[:, :4] * w).sum()

    close(fg.jit(fg.grad(loss(ffft)))(X), jax.jit(jax.grad(loss(jfft)))(X))


def test_check_grads_and_transforms():
    x = RNG.normal(size=(5,))
    check_grads(lambda v: ffft.dct(v, n=6), (x,), order=1)
    check_grads(lambda v: ffft.idct(v, norm="ortho"), (x,), order=1)
    jitted = fg.jit(lambda v: ffft.dctn(v, axes=(0, 1)))
    close(jitted(X), jfft.dctn(X, axes=(0, 1)))
    close(fg.vmap(ffft.idct)(X), jax.vmap(jfft.idct)(X))
