"""vmap's errors for an in_axes that is not a tree prefix, for a named, batched output
with ``out_axes=None`` and for an output that is no array type: the words JAX's tests
match, for funcgrad and JAX."""

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


@pytest.mark.parametrize("out", ["hello", "pair_with_object"])
def test_output_that_is_no_array_type(out):
    """JAX's words, with the value and its Python type (a ``str`` alone, an ``object`` in a
    pair); ``None`` and Python or NumPy scalars are fine outputs in both."""
    thing = object()
    f = (lambda x: "hello") if out == "hello" else (lambda x: (x, thing))
    msgs = []
    for lib in (jax, fg):
        with pytest.raises(TypeError) as info:
            lib.vmap(f)(jnp.arange(5))
        msgs.append(str(info.value))
    assert msgs[0].startswith("Output from batched function ")
    assert msgs[0].endswith("is not a valid JAX type")
    assert msgs[1] == msgs[0]
    for g in (lambda x: None, lambda x: 1.0, lambda x: (x, 2)):
        ours, theirs = fg.vmap(g)(jnp.arange(3)), jax.vmap(g)(jnp.arange(3))
        assert jax.tree_util.tree_structure(ours) == jax.tree_util.tree_structure(theirs)
