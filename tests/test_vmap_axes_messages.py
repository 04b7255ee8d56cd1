"""vmap's errors for an in_axes that is not a tree prefix and for a named, batched output
with ``out_axes=None``: the words JAX's tests match, for funcgrad and JAX."""

import jax
import jax.numpy as jnp
import pytest

import funcgrad as fg


@pytest.mark.parametrize("lib", [fg, jax])
def test_in_axes_not_a_prefix(lib):
    with pytest.raises(
        ValueError,
        match=r"(?s)vmap in_axes specification must be a tree prefix of the corresponding "
        r"value;.*Mismatch details.*different types",
    ):
        lib.vmap(lambda x: x, in_axes=([0],))(jnp.ones(3))


@pytest.mark.parametrize("lib", [fg, jax])
def test_named_batched_output_with_out_axes_none(lib):
    with pytest.raises(
        ValueError, match=r"vmap has mapped output.*axis_name=foo.*but out_axes is None"
    ):
        lib.vmap(lambda x: x, out_axes=None, axis_name="foo")(jnp.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="at vmap out_axes"):
        lib.vmap(lambda x: x, out_axes=None)(jnp.array([1.0, 2.0]))
