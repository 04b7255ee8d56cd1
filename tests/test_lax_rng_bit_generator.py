"""``funcgrad.lax.rng_bit_generator`` against ``jax.lax.rng_bit_generator`` (JAX 0.10.2):
the same next key and bits for every algorithm and unsigned dtype, eager and under
``jit``, and under ``vmap`` (JAX's rule: the first key draws for the whole batch)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as fl

KEY = np.array([1, 2, 3, 4], np.uint32)


def _same(ours: Any, theirs: Any) -> None:
    assert len(ours) == len(theirs) == 2
    for o, t in zip(ours, theirs, strict=True):
        o, t = np.asarray(o), np.asarray(t)
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_array_equal(o, t)


def _gen(lax_: Any, shape: tuple, dtype: Any, algorithm: Any) -> Any:
    return lambda k: lax_.rng_bit_generator(k, shape, dtype, algorithm)


@pytest.mark.parametrize("algorithm", ["RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_bits_and_next_key(algorithm: str, dtype: str) -> None:
    theirs = _gen(jax.lax, (5, 7), dtype, getattr(jax.lax.RandomAlgorithm, algorithm))(KEY)
    ours = _gen(fl, (5, 7), dtype, getattr(fl.RandomAlgorithm, algorithm))
    _same(ours(KEY), theirs)
    _same(fg.jit(ours)(KEY), theirs)


def test_empty_shape_returns_the_key() -> None:
    key = np.array([3, 1, 4, 2], np.uint32)
    _same(fl.rng_bit_generator(key, (0,)), jax.lax.rng_bit_generator(key, (0,)))


@pytest.mark.parametrize("in_axes", [0, 1])
def test_vmap_as_jax(in_axes: int) -> None:
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    keys = keys if in_axes == 0 else keys.T.copy()

    def f(lax_: Any) -> Any:
        return lambda k: lax_.rng_bit_generator(k, shape=(5, 7))

    theirs = jax.vmap(f(jax.lax), in_axes=in_axes)(keys)
    _same(fg.vmap(f(fl), in_axes=in_axes)(keys), theirs)
    nested = np.arange(24, dtype=np.uint32).reshape(2, 3, 4)
    _same(fg.vmap(fg.vmap(f(fl)))(nested), jax.vmap(jax.vmap(f(jax.lax)))(nested))


def test_errors() -> None:
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        fl.rng_bit_generator(KEY, (3,), np.int32)
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        jax.lax.rng_bit_generator(KEY, (3,), np.int32)
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        fl.rng_bit_generator(KEY[:2], (3,))
