"""``funcgrad.lax.shape_as_value``: a shape's dimensions as an integer array, with JAX
0.10.2's dtype (int32, int64 past int32's range), array type and result under ``jit``."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg


@pytest.mark.parametrize("shape", [(), (2,), (2, 3), (0, 7, 1), (2**31, 1)])
def test_as_jax(shape):
    ours, theirs = fg.lax.shape_as_value(shape), jax.lax.shape_as_value(shape)
    assert type(ours) is type(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_of_a_traced_value_s_shape():
    x = np.ones((4, 5), np.float32)
    ours = fg.jit(lambda v: fg.lax.shape_as_value(v.shape) * 2)(x)
    theirs = jax.jit(lambda v: jax.lax.shape_as_value(v.shape) * 2)(x)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_not_a_shape():
    for lib in (jax, fg):
        with pytest.raises(TypeError):
            lib.lax.shape_as_value((2.0,))
