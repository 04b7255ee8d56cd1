"""``delete`` with traced indices and ``assume_unique_indices=True`` (JAX's way of
deleting under ``jit``): values against JAX 0.10.2 and NumPy's ``delete`` for every axis,
scalar and array indices, negative ones; without the flag traced indices stay refused."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.arange(24.0, dtype=np.float32).reshape(4, 6)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("shape", [(), (2,), (1, 3)])
def test_traced_unique_indices(axis: int | None, shape: tuple) -> None:
    size = X.size if axis is None else X.shape[axis]
    idx = np.random.RandomState(len(shape)).choice(size, shape, replace=False)
    idx = np.where(np.arange(idx.size).reshape(shape) % 2 == 1, idx - size, idx)  # negatives
    theirs = jax.jit(partial(jnp.delete, axis=axis, assume_unique_indices=True))(X, idx)
    ours = fg.jit(partial(fnp.delete, axis=axis, assume_unique_indices=True))(X, idx)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    np.testing.assert_array_equal(np.asarray(ours), np.delete(X, idx, axis=axis))


def test_traced_indices_need_the_flag() -> None:
    with pytest.raises(ValueError):
        fg.jit(fnp.delete)(X, np.array([1, 2]))
