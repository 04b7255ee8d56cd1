"""Values that must be concrete, traced under jit: JAX's exception type and the words
its tests look for, for funcgrad and (as the oracle) JAX."""

import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

CASES = [
    ("The tolist\\(\\) method was called on traced array", lambda lib, np_: lambda x: x.tolist()),
    ("The tobytes\\(\\) method was called on traced array", lambda lib, np_: lambda x: x.tobytes()),
    ("slice start of jnp.mgrid", lambda lib, np_: lambda x: np_.mgrid[x[0, 0] : 3]),
    (
        "The `length` argument to `scan` expects a concrete `int` value",
        lambda lib, np_: lambda x: lib.lax.scan(lambda c, z: (c, z), 0.0, (), x[0, 0]),
    ),
    (
        "The `unroll` argument to `scan` expects a concrete `int` or `bool` value",
        lambda lib, np_: lambda x: lib.lax.scan(lambda c, z: (c, z), 0.0, (), 3, unroll=x[0, 0]),
    ),
]


@pytest.mark.parametrize("lib, np_, error", [
    (fg, fnp, fg.errors.ConcretizationTypeError),
    (jax, jnp, jax.errors.ConcretizationTypeError),
])  # fmt: skip
@pytest.mark.parametrize("pattern, make", CASES)
def test_concretization_error(lib, np_, error, pattern, make):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    with pytest.raises(error, match=pattern):
        lib.jit(make(lib, np_))(x)


def test_pickling_a_traced_value_is_a_concretization_error_as_jax():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(pickle.dumps)(0)
    # funcgrad pickled the tracer object (its builder and variable) and returned the bytes
    for transform in (fg.jit, fg.vmap):
        with pytest.raises(fg.errors.ConcretizationTypeError, match="serialize/pickle"):
            transform(pickle.dumps)(fnp.arange(3))
    # a concrete array pickles as before
    assert np.asarray(pickle.loads(pickle.dumps(fnp.arange(3)))).tolist() == [0, 1, 2]
