"""``funcgrad.scipy.ndimage.map_coordinates`` against ``jax.scipy.ndimage``: every mode
and order (values, gradients w.r.t. the image and the coordinates, integer inputs,
errors)."""

from __future__ import annotations

import functools
import itertools

import jax
import jax.scipy as jsp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.scipy.ndimage as fnd

RNG = np.random.default_rng(0)
#: values, dtype and shape as JAX's (NaNs equal)
close = functools.partial(jo.same_values, rtol=1e-6, atol=1e-6)


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


def test_map_coordinates_order_error_has_jax_phrase():
    x = np.ones((3, 3), np.float32)
    coords = [np.zeros(2, np.float32), np.zeros(2, np.float32)]
    for lib in (jsp.ndimage, fnd):
        with pytest.raises(NotImplementedError, match="requires order<=1"):
            lib.map_coordinates(x, coords, order=2)


def test_map_coordinates_mode_error_has_jax_phrase():
    x = np.ones((3, 3), np.float32)
    coords = [np.zeros(2, np.float32), np.zeros(2, np.float32)]
    for lib in (jsp.ndimage, fnd):
        with pytest.raises(NotImplementedError, match="does not yet support mode"):
            lib.map_coordinates(x, coords, order=1, mode="grid-wrap")
