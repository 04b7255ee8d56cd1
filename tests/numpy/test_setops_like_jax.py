"""``unique`` of arrays with a zero-length axis: every result (values, first indices,
inverse, counts) with NumPy's shapes and values and ``jax.numpy.unique``'s dtypes.

NumPy is the oracle of shapes: where there are no slices along ``axis`` and each slice
is empty too (``zeros((0, 0))``, axis 0), JAX 0.10.2 returns one value but no counts
(its results disagree with each other); NumPy returns none, and so does funcgrad.

``unique`` flattens the slices along ``axis`` to rows; with no rows a reshape to
``(0, -1)`` is ambiguous, which used to raise on ``unique(zeros((0,)))``."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.numpy as fnp


@st.composite
def empty_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], int | None]:
    """A shape with at least one zero-length axis, and an axis (or ``None``)."""
    shape = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    shape[draw(st.integers(0, len(shape) - 1))] = 0
    axis = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    return tuple(shape), axis


@settings(max_examples=40, deadline=None)
@given(empty_cases(), st.sampled_from([np.uint8, np.int32, np.float32]))
def test_unique_with_empty_axis_matches_jax(case, dtype) -> None:
    shape, axis = case
    x = np.zeros(shape, dtype)
    got = fnp.unique(x, True, True, True, axis=axis)
    want = np.unique(x, True, True, True, axis=axis)
    dts = [r.dtype for r in jnp.unique(x, True, True, True, axis=axis)]
    assert len(got) == len(want) == 4
    for g, w, dt in zip(got, want, dts):
        assert (g.shape, g.dtype) == (w.shape, dt), (shape, axis, g.shape, w.shape)
        np.testing.assert_array_equal(np.asarray(g), w)


def test_unique_of_empty_vector_alone() -> None:
    got = fnp.unique(np.zeros((0,), np.float32))
    assert (got.shape, got.dtype) == ((0,), np.float32)
