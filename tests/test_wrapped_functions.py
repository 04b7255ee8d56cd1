"""Wrappers that keep the wrapped function's face, as JAX's: ``jit`` shows the
function's name, doc, annotations and own attributes; ``grad``/``jacfwd``/``jacrev``
keep its signature, so ``jit(static_argnames=...)`` above them names its parameters;
``copy``/``deepcopy`` of a traced value inside ``jit`` is the value. JAX is the oracle."""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _f(x: int) -> int:
    """docstring of f."""
    return x + 1


_f.some_value = 4


@pytest.mark.parametrize("attr", ["__doc__", "__name__", "__module__", "__qualname__",
                                  "__annotations__", "some_value"])  # fmt: skip
def test_jit_keeps_the_function_attributes(attr):
    assert getattr(fg.jit(_f), attr) == getattr(jax.jit(_f), attr) == getattr(_f, attr)


def test_jit_attribute_errors_and_own_state():
    jf = fg.jit(_f)
    with pytest.raises(AttributeError, match="no attribute 'not_there'"):
        jf.not_there  # noqa: B018
    assert jf.fun is _f and int(jf(1)) == 2


@pytest.mark.parametrize("name", ["grad", "jacfwd", "jacrev"])
def test_static_argnames_through_a_transform(name):
    def run(t, m):
        @t.jit(static_argnames=["flag"])
        @getattr(t, name)
        def my_function(x, flag):
            return x if flag else m.zeros_like(x)

        return my_function(1.0, False), my_function(1.0, True)

    np.testing.assert_allclose(run(fg, fnp), run(jax, jnp))


@pytest.mark.parametrize("cp", [copy.copy, copy.deepcopy])
def test_copy_of_a_traced_value(cp):
    got = fg.jit(lambda x: cp(x) * 2.0)(np.float32(1.5))
    want = jax.jit(lambda x: cp(x) * 2.0)(np.float32(1.5))
    np.testing.assert_allclose(got, want)
    assert int(fg.jit(cp)(1)) == int(jax.jit(cp)(1)) == 1
