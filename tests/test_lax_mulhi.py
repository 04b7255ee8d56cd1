"""``lax.mulhi`` (the high half of the double-width integer product) against
``jax.lax.mulhi`` for every integer dtype, its host rule against Python's integers, and
``vmap`` against ``jax.vmap``."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.primitives.bits import _host_mulhi

INTS = ["int8", "int16", "int32", "uint8", "uint16", "uint32"]


def _values(dtype: str, n: int) -> st.SearchStrategy:
    info = np.iinfo(dtype)
    return st.lists(st.integers(int(info.min), int(info.max)), min_size=n, max_size=n).map(
        lambda v: np.array(v, dtype)
    )


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(INTS).flatmap(lambda d: st.tuples(_values(d, 6), _values(d, 6))))
def test_mulhi_matches_jax(xy):
    x, y = xy
    got, want = fg.lax.mulhi(x, y), jax.lax.mulhi(x, y)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # the host rule, against Python's unbounded integers
    bits = x.dtype.itemsize * 8
    exact = np.array([(int(a) * int(b)) >> bits for a, b in zip(x, y)]).astype(x.dtype)
    np.testing.assert_array_equal(_host_mulhi(x, y), exact)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_host_rule_of_64_bit_operands(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.max, info.min, 12345678901, 3], dtype)
    y = np.array([info.max, info.max, -987654321 if dtype == "int64" else 987654321, 5], dtype)
    exact = [(int(a) * int(b)) >> 64 for a, b in zip(x, y)]
    np.testing.assert_array_equal(_host_mulhi(x, y), np.array(exact, dtype))


def test_mulhi_vmap_and_errors():
    x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4) * 123456789
    y = np.int32(987654321)
    got = fg.vmap(fg.lax.mulhi, (0, None))(x, y)
    want = jax.vmap(jax.lax.mulhi, (0, None))(x, y)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    with pytest.raises(TypeError):
        fg.lax.mulhi(np.ones(3, np.float32), np.ones(3, np.float32))
