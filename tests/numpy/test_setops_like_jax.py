"""Set operations against NumPy and ``jax.numpy`` where they used to differ.

``unique`` of arrays with a zero-length axis: every result (values, first indices,
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


small_ints = st.lists(st.integers(0, 5), max_size=8).map(lambda v: np.array(v, np.int32))


@settings(max_examples=60, deadline=None)
@given(small_ints, small_ints, st.booleans(), st.sampled_from([None, 1, 2, 6]))
def test_setxor1d_matches_jax(a, b, assume_unique, size) -> None:
    """With ``assume_unique`` a value is kept when it occurs exactly once in both arrays
    together (NumPy's and JAX's rule, also when the assumption is broken, as the
    conformance file's inputs break it); ``size`` pads with the smallest result, or 0."""
    got = fnp.setxor1d(a, b, assume_unique=assume_unique, size=size)
    want = jnp.setxor1d(a, b, assume_unique=assume_unique, size=size)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    if size is None:  # NumPy agrees (its result for repeated values under assume_unique too)
        np.testing.assert_array_equal(np.asarray(got), np.setxor1d(a, b, assume_unique))


_PARTS = [-0.0, 0.0, 1.0, np.nan]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_PARTS), st.sampled_from(_PARTS)), max_size=12),
    st.booleans(),
)
def test_unique_complex_nans_match_jax(parts, equal_nan) -> None:
    """A NaN in either part of a complex value is one NaN, sorted last (it used to sort by
    its real part, and NaNs with different real parts stayed apart)."""
    x = np.array([complex(r, i) for r, i in parts], np.complex64)
    got = fnp.unique(x, True, True, True, equal_nan=equal_nan)
    want = jnp.unique(x, True, True, True, equal_nan=equal_nan)
    for g, w in zip(got, want):
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
