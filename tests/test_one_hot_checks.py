"""funcgrad.nn.one_hot's checks as JAX's: a traced ``num_classes`` is a
ConcretizationTypeError naming the argument; a float input is deprecated; a bool input
warns and is refused with JAX's TypeError."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def test_traced_num_classes_names_the_argument():
    msg = r"in jax.nn.one_hot argument `num_classes`"
    with pytest.raises(jax.errors.ConcretizationTypeError, match=msg):
        jax.jit(jax.nn.one_hot)(3, 5)  # (JAX's own words, the oracle)
    with pytest.raises(fg.errors.ConcretizationTypeError, match=msg):
        fg.jit(fg.nn.one_hot)(3, 5)
    assert issubclass(fg.errors.ConcretizationTypeError, TypeError)


def test_float_input_warns_as_jax():
    x = np.array([1.0, 2.0], np.float32)
    msg = "jax.nn.one_hot input should be integer-typed"
    with pytest.warns(DeprecationWarning, match=msg):
        want = jax.nn.one_hot(x, 3)
    with pytest.warns(DeprecationWarning, match=msg):
        got = fg.nn.one_hot(fnp.asarray(x), 3)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_integer_input_does_not_warn(recwarn):
    out = fg.nn.one_hot(np.array([0, 2]), 3)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(jax.nn.one_hot(np.array([0, 2]), 3)))
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("x", [np.array([True, False]), True, np.zeros((2, 0), bool)])
def test_bool_input_is_refused_as_jax(x):
    def outcome(f):
        warns = pytest.warns(DeprecationWarning, match="should be integer-typed")
        with warns, pytest.raises(TypeError) as info:
            f(x, 3)
        return str(info.value)

    assert outcome(fg.nn.one_hot) == outcome(jax.nn.one_hot)
    assert outcome(fg.jit(fg.nn.one_hot, static_argnums=1)) == outcome(
        jax.jit(jax.nn.one_hot, static_argnums=1)
    )
