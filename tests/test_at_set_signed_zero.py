"""``x.at[idx].set(v)`` of signed zeros under ``jit``, against JAX 0.10.2 bit for bit: a
set scatter-adds its values into a base and selects them, and a base of ``+0.0`` turned a
written ``-0.0`` into ``+0.0`` (``0.0 + -0.0``); the base is ``-0.0`` now (both parts of a
complex one), the exact identity of ``+``. Static and traced indices, a repeated one (the last write
wins), float16/bfloat16/float32/complex64, integers and bools unchanged."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

_VALUES = [-0.0, 0.0, 1.5, -2.0, float("inf"), float("nan")]
_DTYPES = ["float16", "bfloat16", "float32", "complex64"]


def _bits(a) -> bytes:
    a = np.asarray(a)
    if a.dtype == np.dtype(ml_dtypes.bfloat16):
        a = a.view(np.uint16)
    return a.tobytes()


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(_DTYPES),
    st.lists(st.sampled_from(_VALUES), min_size=1, max_size=4),
    st.lists(st.integers(0, 4), min_size=1, max_size=4, unique=True),
    st.booleans(),
)
def test_set_keeps_signed_zeros_like_jax(dtype, values, where, traced):
    n = min(len(values), len(where))
    re = np.array(values[:n])
    # (complex values: the imaginary part a zero of the real part's sign)
    v = (re + 0j * re if dtype == "complex64" else re).astype(dtype)
    if dtype == "complex64":
        v.imag = np.copysign(0.0, re)
    i = np.array(where[:n], np.int32)
    x = np.arange(1, 6).astype(dtype)
    if traced:
        got = fg.jit(lambda x, i, v: x.at[i].set(v))(fnp.asarray(x), fnp.asarray(i), fnp.asarray(v))
        want = jax.jit(lambda x, i, v: x.at[i].set(v))(
            jnp.asarray(x), jnp.asarray(i), jnp.asarray(v)
        )
    else:
        got = fg.jit(lambda x, v: x.at[i].set(v))(fnp.asarray(x), fnp.asarray(v))
        want = jax.jit(lambda x, v: x.at[i].set(v))(jnp.asarray(x), jnp.asarray(v))
    assert _bits(got) == _bits(want)


def test_repeated_places_last_write_keeps_its_sign():
    x = np.arange(1, 4).astype(np.float32)
    i, v = np.array([1, 1], np.int32), np.array([5.0, -0.0], np.float32)
    got = fg.jit(lambda x, i, v: x.at[i].set(v))(fnp.asarray(x), fnp.asarray(i), fnp.asarray(v))
    assert np.asarray(got)[1] == 0 and np.signbit(np.asarray(got)[1])


@pytest.mark.parametrize("dtype", _DTYPES)
def test_scalar_negative_zero(dtype):
    x = np.arange(1, 4).astype(dtype)
    zero = complex(-0.0, -0.0) if dtype == "complex64" else -0.0
    got = fg.jit(lambda x: x.at[1].set(zero))(fnp.asarray(x))
    want = jax.jit(lambda x: x.at[1].set(zero))(jnp.asarray(x))
    assert _bits(got) == _bits(want)


@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_exact_types_unchanged(dtype):
    x = np.array([1, 0, 1]).astype(dtype)
    got = fg.jit(lambda x, i: x.at[i].set(x[0]))(fnp.asarray(x), fnp.asarray([1, 1]))
    want = jax.jit(lambda x, i: x.at[i].set(x[0]))(jnp.asarray(x), jnp.asarray([1, 1]))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
