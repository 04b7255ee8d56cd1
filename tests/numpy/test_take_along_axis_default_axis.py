"""``take_along_axis`` without ``axis`` gathers along the last axis, as JAX 0.10.2's
(``axis=-1``, NumPy 2's default): values against JAX for 1-, 2- and 3-d arrays, with
negative and out-of-range indices under each mode; and ``mode="one_hot"``."""

from __future__ import annotations

import inspect

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad.numpy as fnp

RNG = np.random.RandomState(0)


def test_signature_default() -> None:
    ours = inspect.signature(fnp.take_along_axis).parameters["axis"].default
    assert ours == inspect.signature(jnp.take_along_axis).parameters["axis"].default == -1


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_last_axis_by_default(shape: tuple, mode: str | None) -> None:
    a = RNG.randn(*shape).astype(np.float32)
    idx = RNG.randint(-shape[-1] - 1, shape[-1] + 1, (*shape[:-1], 3)).astype(np.int32)
    theirs = jnp.take_along_axis(a, idx, mode=mode)
    ours = fnp.take_along_axis(a, idx, mode=mode)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize(("shape", "axis"), [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1)])
@pytest.mark.parametrize("wrap", [None, False])
def test_one_hot_mode(shape: tuple, axis: int, wrap: bool | None) -> None:
    # JAX's mode="one_hot": a one-hot contraction (out-of-range indices give 0)
    a = RNG.randn(*shape).astype(np.float32)
    n = shape[axis]
    ishape = list(shape)
    ishape[axis] = 3
    idx = RNG.randint(-n - 1, n + 1, ishape).astype(np.int32)
    kw = dict(axis=axis, mode="one_hot", wrap_negative_indices=wrap)
    theirs = jnp.take_along_axis(a, idx, **kw)
    ours = fnp.take_along_axis(a, idx, **kw)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_one_hot_mode_lets_nan_through() -> None:
    a = np.array([1.0, np.nan, 3.0], np.float32)
    idx = np.array([0, 2], np.int32)
    theirs = jnp.take_along_axis(a, idx, axis=0, mode="one_hot")
    ours = fnp.take_along_axis(a, idx, axis=0, mode="one_hot")
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
