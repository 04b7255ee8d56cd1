"""``lax.padtype_to_pads`` gives JAX's pads as Python ints, from Python or NumPy shapes."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from funcgrad import lax as flax

CASES = [
    ((10, 10), (5, 5), (1, 1), "SAME"),
    ((8, 8), (3, 3), (2, 2), "SAME_LOWER"),
    ((7, 7), (3, 3), (2, 2), "VALID"),
    ((9, 4, 6), (2, 3, 4), (3, 1, 2), "SAME"),
]


@pytest.mark.parametrize(("shape", "window", "strides", "padding"), CASES)
@pytest.mark.parametrize("numpy_shapes", [False, True])
def test_pads_like_jax(
    shape: tuple, window: tuple, strides: tuple, padding: str, numpy_shapes: bool
) -> None:
    args = [np.array(a, np.int64) if numpy_shapes else a for a in (shape, window, strides)]
    ours = flax.padtype_to_pads(*args, padding)
    theirs = jax.lax.padtype_to_pads(*args, padding)
    assert [tuple(p) for p in ours] == [tuple(p) for p in theirs]
    assert all(type(v) is int for p in ours for v in p)
