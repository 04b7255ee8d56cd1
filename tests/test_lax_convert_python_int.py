"""``funcgrad.lax.convert_element_type`` of a Python int casts it as NumPy does, wrapping
outside the target's range (``2**32`` to int32 is 0), and returns an array even when
nothing is converted, as ``jax.lax``'s (JAX 0.10.2)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as fl

CASES = [
    (2**32, "int32"),
    (2**31, "int32"),
    (-(2**40) - 3, "int16"),
    (-1, "uint8"),
    (2**100, "float32"),
    (3, float),
    (7, bool),
    (np.int32(3), "int32"),
    (np.arange(3, dtype=np.int32), "int32"),
    (2.5, "int32"),
]


@pytest.mark.parametrize("value,dtype", CASES, ids=[f"{d}-{i}" for i, (_, d) in enumerate(CASES)])
def test_as_jax(value: object, dtype: object) -> None:
    theirs = jax.lax.convert_element_type(value, dtype)
    ours = fl.convert_element_type(value, dtype)
    assert isinstance(ours, jax.Array)
    assert ours.dtype == theirs.dtype and ours.weak_type == theirs.weak_type
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_under_jit_a_large_int_is_a_constant() -> None:
    f = lambda x: x + fl.convert_element_type(2**32 + 5, "int32")
    assert int(fg.jit(f)(np.int32(1))) == 6
