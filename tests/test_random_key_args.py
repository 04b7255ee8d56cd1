"""``random.key``/``PRNGKey``'s ``impl``/``dtype`` arguments and ``jax_random_seed_offset``,
against JAX."""

import jax
import numpy as np
import pytest

import funcgrad as fg


def test_impl_threefry_is_the_default_key():
    for ctor in (fg.random.key, fg.random.PRNGKey):
        np.testing.assert_array_equal(ctor(42, impl="threefry2x32"), jax.random.PRNGKey(42))
    np.testing.assert_array_equal(fg.random.key(42, dtype="threefry2x32"), jax.random.PRNGKey(42))


def test_bad_impl_arguments_raise_as_jax():
    with pytest.raises(ValueError, match="Cannot specify both `impl` and `dtype`"):
        fg.random.key(42, impl="threefry2x32", dtype="threefry2x32")
    with pytest.raises(ValueError, match='unrecognized PRNG implementation "nope"'):
        fg.random.key(0, impl="nope")
    with pytest.raises(ValueError, match='unrecognized PRNG implementation "nope"'):
        jax.random.key(0, impl="nope")
    with pytest.raises(NotImplementedError, match="typed keys"):
        fg.random.key(0, impl="rbg")


@pytest.mark.parametrize("seed", [17, np.int32(17)])
def test_random_seed_offset(seed):
    old = fg.config.read("jax_random_seed_offset")
    try:
        fg.config.update("jax_random_seed_offset", 3)
        ours = [fg.random.key(seed), fg.random.PRNGKey(seed), fg.jit(fg.random.key)(seed)]
        want = jax.random.PRNGKey(seed)  # the same option, read by JAX
    finally:
        fg.config.update("jax_random_seed_offset", old)
    for k in ours:
        np.testing.assert_array_equal(k, want)
    assert not np.array_equal(want, jax.random.PRNGKey(seed))
