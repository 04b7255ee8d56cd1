"""``vmap`` over a batch of no examples (a batch axis of length 0) against ``jax.vmap``:
the result is empty with one example's output shape behind the 0.

Batching rules that fold the batch axis into another axis (convolutions) divided by its
size, and gathers whose batching dimensions have length 0 refused their slice sizes
(JAX skips the bound check when there are no indices); both raised."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax as jlax

import funcgrad as fg
from funcgrad import lax as flax

RNG = np.random.default_rng(0)


def _batch(x, size, axis=0):
    """``size`` copies of ``x`` along a new axis ``axis`` (``size`` may be 0)."""
    return np.moveaxis(np.repeat(np.asarray(x)[None], size, axis=0), 0, axis)


def _check(f_ours, f_jax, args, in_axes):
    got = fg.vmap(f_ours, in_axes)(*args)
    want = jax.vmap(f_jax, in_axes)(*args)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


CONV_CASES = [
    # (lhs batched, rhs batched, feature groups, batch groups)
    (True, False, 1, 1),
    (False, True, 1, 1),
    (True, True, 1, 1),
    (True, True, 2, 1),
    (False, True, 2, 1),
    (True, False, 1, 2),
    (False, True, 1, 2),
]


@pytest.mark.parametrize("size", [0, 3])
@pytest.mark.parametrize("lb,rb,fgc,bgc", CONV_CASES)
def test_conv_batch_of_size(size, lb, rb, fgc, bgc):
    lhs = RNG.standard_normal((2 * bgc, 2 * fgc, 6, 5)).astype(np.float32)
    rhs = RNG.standard_normal((2 * fgc * bgc, 2, 3, 2)).astype(np.float32)
    if lb:
        lhs = _batch(lhs, size)
    if rb:
        rhs = _batch(rhs, size)
    kw = {
        "window_strides": (1, 1),
        "padding": "SAME",
        "feature_group_count": fgc,
        "batch_group_count": bgc,
    }

    def ours(a, b):
        return flax.conv_general_dilated(a, b, **kw)

    def theirs(a, b):
        return jlax.conv_general_dilated(a, b, **kw)

    _check(ours, theirs, (lhs, rhs), (0 if lb else None, 0 if rb else None))


GATHER_CASES = [
    # operand shape, indices, dimension numbers, slice sizes
    (
        (5,),
        np.array([[0], [2]]),
        {"offset_dims": (), "collapsed_slice_dims": (0,), "start_index_map": (0,)},
        (1,),
    ),
    (
        (2, 3, 10),
        np.array([[[0], [1]], [[2], [3]], [[4], [5]]]),
        {
            "offset_dims": (2,),
            "collapsed_slice_dims": (),
            "start_index_map": (2,),
            "operand_batching_dims": (0, 1),
            "start_indices_batching_dims": (1, 0),
        },
        (1, 1, 3),
    ),
]


@pytest.mark.parametrize("size", [0, 4])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1)])
@pytest.mark.parametrize("case", range(len(GATHER_CASES)))
def test_gather_batch_of_size(size, in_axes, case):
    shape, idx, dn, slice_sizes = GATHER_CASES[case]
    x = RNG.standard_normal(shape).astype(np.float32)
    ax, ai = in_axes
    if ax is not None:
        ax = min(ax, len(shape))
        x = _batch(x, size, ax)
    if ai is not None:
        ai = min(ai, idx.ndim - 1)
        idx = _batch(idx, size, ai)

    def ours(a, i):
        return flax.gather(a, i, flax.GatherDimensionNumbers(**dn), slice_sizes)

    def theirs(a, i):
        return jlax.gather(a, i, jlax.GatherDimensionNumbers(**dn), slice_sizes)

    _check(ours, theirs, (x, idx), (ax, ai))


def test_gather_with_no_indices_skips_the_slice_bound():
    """No indices: nothing is read, so a slice larger than the operand is accepted (as
    JAX); with indices it is still refused."""
    x = np.zeros((0, 3), np.float32)
    dn = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
    idx = np.zeros((0, 1), np.int32)
    got = flax.gather(x, idx, flax.GatherDimensionNumbers(**dn), (1, 3))
    want = jlax.gather(x, idx, jlax.GatherDimensionNumbers(**dn), (1, 3))
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    msg = r"Slice size at index 0 in gather op is out of range, must be within \[0, 0 \+ 1\)"
    for lax_ in (flax, jlax):
        with pytest.raises(TypeError, match=msg):
            lax_.gather(x, np.zeros((2, 1), np.int32), lax_.GatherDimensionNumbers(**dn), (1, 3))
