"""``x.at[idx].apply(func)`` with repeated or traced indices, against JAX 0.10.2 (and
NumPy's ``ufunc.at``): ``func`` runs once per occurrence of a position, in order, under
``jit`` with traced indices and under ``vmap`` too."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.arange(1.0, 11.0, dtype=np.float32)
IDX = np.array([0, 0, 3, -1, 3, 3, 5], np.int32)


def _same(ours: object, theirs: object) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("name", ["sin", "tanh", "negative", "sqrt"])
def test_ufuncs_like_numpy_at_and_jax(name: str) -> None:
    want = X.copy()
    getattr(np, name).at(want, IDX)
    theirs = jnp.asarray(X).at[IDX].apply(getattr(jnp, name))
    ours = fnp.asarray(X).at[IDX].apply(getattr(fnp, name))
    _same(ours, theirs)
    np.testing.assert_allclose(np.asarray(ours), want, rtol=1e-5)


def test_traced_indices_under_jit() -> None:
    def f(np_: object) -> object:
        return lambda x, i: x.at[i].apply(lambda v: v * 2 + 1)

    _same(fg.jit(f(fnp))(X, IDX), jax.jit(f(jnp))(X, IDX))


def test_vmap_and_two_dimensions() -> None:
    rows = np.stack([X, X[::-1].copy()])
    idx = np.array([[3, 3], [0, 9]], np.int32)

    def f(x: object, i: object) -> object:
        return x.at[i].apply(lambda v: v - 1)

    _same(fg.vmap(f)(fnp.asarray(rows), idx), jax.vmap(f)(jnp.asarray(rows), idx))
    m = X.reshape(2, 5)
    cols = np.array([0, 0, 4])
    _same(
        fnp.asarray(m).at[:, cols].apply(lambda v: v * 3),
        jnp.asarray(m).at[:, cols].apply(lambda v: v * 3),
    )


def test_integer_array_keeps_its_dtype() -> None:
    a = np.arange(6, dtype=np.int32)
    _same(
        fnp.asarray(a).at[np.array([1, 1, 2])].apply(lambda v: v * 2),
        jnp.asarray(a).at[np.array([1, 1, 2])].apply(lambda v: v * 2),
    )
