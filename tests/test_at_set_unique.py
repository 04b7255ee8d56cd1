"""``x.at[idx].set(v, unique_indices=True)`` with traced indices, against JAX 0.10.2:
distinct places (a permutation of rows, rows and columns of a 2-d array, a scalar
value, a bool array), under ``jit`` and with a gradient. The promise lets funcgrad skip
the O(k^2) search for each place's last write (a 100x100 ``a[perm] = v`` took seconds)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 30)).astype(np.float32)
PERM = RNG.permutation(40).astype(np.int32)
COLS = np.array([29, 0, 7, 3], np.int32)

CASES = {
    "rows": (lambda x, i, v: x.at[i].set(v, unique_indices=True), PERM, X[:, :1] * 2),
    "cols": (lambda x, i, v: x.at[:, i].set(v, unique_indices=True), COLS, X[:, :4] + 1),
    "pairs": (lambda x, i, v: x.at[i, i % 30].set(v, unique_indices=True), PERM, X[:, 5] * 3),
    "scalar": (lambda x, i, v: x.at[i[:5]].set(v, unique_indices=True), PERM, np.float32(-2)),
}


@pytest.mark.parametrize("name", CASES)
def test_unique_set_like_jax(name: str) -> None:
    f, i, v = CASES[name]
    ours = np.asarray(fg.jit(f)(fnp.asarray(X), i, v))
    theirs = np.asarray(jax.jit(f)(jnp.asarray(X), i, v))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def test_unique_set_bool() -> None:
    x = np.zeros(12, bool)
    i = np.array([11, 2, 5], np.int32)
    f = lambda x, i: x.at[i].set(True, unique_indices=True)
    np.testing.assert_array_equal(fg.jit(f)(fnp.asarray(x), i), jax.jit(f)(jnp.asarray(x), i))


def test_unique_set_gradient_like_jax() -> None:
    def loss(np_):
        return lambda x, v, i: np_.sum(np_.sin(x.at[i].set(v * 3, unique_indices=True)))

    v = X[:, :1].copy()
    ours = fg.jit(fg.grad(loss(fnp), argnums=(0, 1)))(fnp.asarray(X), fnp.asarray(v), PERM)
    theirs = jax.jit(jax.grad(loss(jnp), argnums=(0, 1)))(jnp.asarray(X), jnp.asarray(v), PERM)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)
