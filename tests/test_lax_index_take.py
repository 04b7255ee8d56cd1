"""``funcgrad.lax.index_take`` against ``jax.lax.index_take``: values, negative
indices, gradients, ``jit`` and ``vmap``."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as flax

_CASES = [
    ((3, 4, 5), ([0, 2],), (1,)),
    ((3, 4, 5), ([0, -1], [1, 3]), (0, 2)),
    ((3, 4), ([2, 0, 1], [3, 3, -4]), (0, 1)),
    ((6,), ([5, 0, -2, 1],), (0,)),
]


@pytest.mark.parametrize(("shape", "idxs", "axes"), _CASES)
def test_index_take_matches_jax(shape: tuple, idxs: tuple, axes: tuple) -> None:
    src = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    idx = tuple(np.asarray(i, np.int32) for i in idxs)
    want = jax.lax.index_take(src, idx, axes)
    np.testing.assert_array_equal(flax.index_take(src, idx, axes), want)
    np.testing.assert_array_equal(fg.jit(lambda s: flax.index_take(s, idx, axes))(src), want)

    def loss(lax: Any, take: Any) -> Any:
        return lambda s: (take(s, idx, axes) ** 2).sum()

    np.testing.assert_allclose(
        fg.grad(loss(flax, flax.index_take))(src),
        jax.grad(loss(jax.lax, jax.lax.index_take))(src),
    )


def test_index_take_vmap() -> None:
    src = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    idx = (np.array([2, 0], np.int32),)
    want = jax.vmap(lambda s: jax.lax.index_take(s, idx, (1,)))(src)
    np.testing.assert_array_equal(fg.vmap(lambda s: flax.index_take(s, idx, (1,)))(src), want)
