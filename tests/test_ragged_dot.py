"""``lax.ragged_dot`` against JAX 0.10.2: values and dtypes (groups covering all rows,
fewer rows than the groups name, rows past the last group, empty groups), traced group
sizes under ``jit``, derivatives in ``lhs`` and ``rhs``, ``preferred_element_type``."""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax as flax

RNG = np.random.RandomState(0)
CASES = [
    (64, 4, 3, [64]),
    (64, 9, 8, [20, 44]),
    (10, 9, 8, [1, 1]),  # rows past the groups: zeros
    (6, 3, 2, [2, 0, 4]),  # an empty group
    (5, 4, 3, [4, 4]),  # the groups name more rows than there are
]


def _args(m: int, k: int, n: int, sizes: list, dtype: type) -> tuple:
    lhs = RNG.randn(m, k).astype(dtype)
    rhs = RNG.randn(len(sizes), k, n).astype(dtype)
    return lhs, rhs, np.array(sizes, np.int32)


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_values_like_jax(case: tuple, dtype: type) -> None:
    lhs, rhs, gs = _args(*case, dtype)
    theirs = jax.lax.ragged_dot(lhs, rhs, gs)
    ours = flax.ragged_dot(lhs, rhs, gs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    tol = 1e-5 if dtype == np.float32 else 2e-2
    np.testing.assert_allclose(
        np.asarray(ours, np.float32), np.asarray(theirs, np.float32), rtol=tol, atol=tol
    )


def test_traced_group_sizes_and_preferred_type() -> None:
    lhs, rhs, gs = _args(12, 4, 3, [5, 3, 4], np.float32)
    theirs = jax.jit(jax.lax.ragged_dot)(lhs, rhs, gs)
    ours = fg.jit(flax.ragged_dot)(lhs, rhs, gs)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)
    lb, rb = lhs.astype(ml_dtypes.bfloat16), rhs.astype(ml_dtypes.bfloat16)
    theirs = jax.lax.ragged_dot(lb, rb, gs, preferred_element_type=np.float32)
    ours = flax.ragged_dot(lb, rb, gs, preferred_element_type=np.float32)
    assert ours.dtype == theirs.dtype == np.float32
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)


def test_derivatives() -> None:
    lhs, rhs, gs = _args(12, 4, 3, [5, 3, 4], np.float32)
    w = RNG.randn(12, 3).astype(np.float32)

    def loss(lax: object) -> object:
        return lambda a, b: ((lax.ragged_dot(a, b, gs) * w) ** 2).sum()

    theirs = jax.grad(loss(jax.lax), argnums=(0, 1))(lhs, rhs)
    ours = fg.grad(loss(flax), argnums=(0, 1))(lhs, rhs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-4, atol=1e-4)


def test_shapes_checked() -> None:
    with pytest.raises(TypeError, match="ragged_dot"):
        flax.ragged_dot(np.ones((4, 3)), np.ones((2, 5, 2)), np.array([2, 2]))
