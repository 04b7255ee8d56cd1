"""funcgrad.lax.reduce_window (pooling) against jax.lax: values, grads, vmap, errors."""

from __future__ import annotations

import operator

import jax_oracle as jo
import numpy as np
import pytest
from jax import lax as jlax

import funcgrad as fg
import funcgrad.lax as flax
from funcgrad.testing import check_jvp, check_vjp

RNG = np.random.default_rng(1)
X = RNG.permutation(2 * 6 * 5).reshape(2, 6, 5).astype(np.float64) / 9.0

CASES = [
    ((1, 2, 2), (1, 2, 2), "VALID", None, None),
    ((1, 3, 3), (1, 1, 1), "SAME", None, None),
    ((1, 3, 2), (1, 2, 1), ((0, 0), (1, 2), (0, 1)), None, None),
    ((1, 2, 2), (1, 1, 2), "VALID", (1, 2, 1), (1, 1, 2)),
    ((2, 2, 1), (1, 1, 1), ((1, 0), (0, 0), (0, 0)), None, (1, 2, 1)),
]


@pytest.mark.parametrize("comp", ["add", "max", "min"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_reduce_window_matches_jax(comp, case):
    win, strides, padding, bdil, wdil = CASES[case]
    init = {"add": 0.0, "max": -np.inf, "min": np.inf}[comp]

    def f(mod, x):
        return mod.reduce_window(x, init, getattr(mod, comp), win, strides, padding, bdil, wdil)

    want = f(jlax, X)
    got = f(flax, X)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.dtype == want.dtype
    w = RNG.normal(size=want.shape)
    if wdil is not None and comp != "add":  # JAX has no VJP here: finite differences
        check_vjp(lambda x: f(flax, x), [X])
        check_jvp(lambda x: f(flax, x), [X])
        return
    np.testing.assert_allclose(
        fg.grad(lambda x: (f(flax, x) * w).sum())(X),
        jo.grad(lambda x: (f(jlax, x) * w).sum())(X),
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_allclose(fg.vmap(lambda x: f(flax, x))(X[None]), want[None], rtol=1e-12)


def test_reduce_window_non_identity_init_and_ints():
    want = jlax.reduce_window(X, 1.0, jlax.add, (1, 2, 2), (1, 1, 1), "SAME")
    got = flax.reduce_window(X, 1.0, operator.add, (1, 2, 2), (1, 1, 1), "SAME")
    np.testing.assert_allclose(got, want, rtol=1e-12)
    xi = (X * 9).astype(np.int32)
    imin = np.int32(np.iinfo(np.int32).min)
    np.testing.assert_array_equal(
        flax.reduce_window(xi, imin, flax.max, (1, 2, 2), (1, 2, 2), "VALID"),
        jlax.reduce_window(xi, imin, jlax.max, (1, 2, 2), (1, 2, 2), "VALID"),
    )


def test_avg_pool_second_order_and_jit():
    def f(mod, x):
        return (mod.reduce_window(x, 0.0, mod.add, (1, 2, 2), (1, 1, 1), "SAME") ** 3).sum()

    hv = RNG.normal(size=X.shape)
    got = fg.jit(fg.grad(lambda x: (fg.grad(lambda y: f(flax, y))(x) * hv).sum()))(X)
    want = jo.grad(lambda x: (jo.grad(lambda y: f(jlax, y))(x) * hv).sum())(X)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_shape_tuples():
    args = ((2, 6, 5), (1, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (0, 2)), (1, 2, 1), (1, 1, 2))
    assert flax.reduce_window_shape_tuple(*args) == jlax.reduce_window_shape_tuple(*args)
    for pad in ("SAME", "VALID", ((1, 0), (0, 2))):
        dn = ("NHWC", "HWIO", "NHWC")
        got = flax.conv_general_shape_tuple((2, 7, 6, 3), (3, 2, 3, 4), (2, 1), pad, dn)
        want = jlax.conv_general_shape_tuple((2, 7, 6, 3), (3, 2, 3, 4), (2, 1), pad, dn)
        assert tuple(got) == tuple(want)


def test_reduce_window_errors():
    with pytest.raises(TypeError, match="reduce_window"):
        flax.reduce_window(X, 0.0, flax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="reduce_window"):  # int init, float operand
        flax.reduce_window(X, 0, lambda a, b: a - b, (1, 2, 2), (1, 1, 1), "VALID")
    with pytest.raises(TypeError, match="reduce_window_max"):
        flax.reduce_window(X + 1j, -np.inf, flax.max, (1, 2, 2), (1, 1, 1), "VALID")
