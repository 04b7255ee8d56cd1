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


def close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def all_cases(mod, name, cases):
    """One jitted program (funcgrad's or JAX's) computing ``mod.name`` for every keyword
    case: one compilation per library instead of one per case."""
    fn = getattr(mod, name)
    return (fg.jit if mod is ffft else jax.jit)(lambda x: tuple(fn(x, **kw) for kw in cases))


CASES_1D = [
    {"n": n, "axis": axis, "norm": norm}
    for norm in (None, "backward", "ortho")
    for n, axis in ((None, -1), (3, -1), (7, 0), (1, 1))
]
CASES_ND = [
    {"s": (2,), "axes": None, "norm": None},
    {"s": (4, 6), "axes": None, "norm": "ortho"},
    {"s": (2,), "axes": (0,), "norm": "backward"},
    {"s": None, "axes": (-1, 0), "norm": None},
    {"s": (3, 2, 5), "axes": None, "norm": "ortho"},
    {"s": None, "axes": None, "norm": None},
]


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_1d_matches_jax(name):
    got, want = all_cases(ffft, name, CASES_1D)(X), all_cases(jfft, name, CASES_1D)(X)
    for g, w in zip(got, want):
        close(g, w)


@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_nd_matches_jax(name):
    x = RNG.normal(size=(2, 3, 4))
    got, want = all_cases(ffft, name, CASES_ND)(x), all_cases(jfft, name, CASES_ND)(x)
    for g, w in zip(got, want):
        close(g, w)


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
    f = getattr(ffft, name) if name == "dct" else fg.jit(getattr(ffft, name))  # eager / jit
    close(f(x), jax.jit(getattr(jfft, name))(x), tol)


def test_python_list_input():
    """A list is refused with JAX's TypeError and message."""
    with pytest.raises(TypeError) as want:
        jfft.dct([1.0, 2.0, 3.0])
    with pytest.raises(TypeError) as got:
        ffft.dct([1.0, 2.0, 3.0])
    assert str(got.value).split("\n")[0] == str(want.value)


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
    close(fg.jit(fg.vmap(ffft.idct))(X), jax.jit(jax.vmap(jfft.idct))(X))
