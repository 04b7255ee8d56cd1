"""``asarray``/``array`` of objects with ``__array__`` and of Python buffers
(``bytearray``, ``array.array``, ``memoryview``), against JAX."""

import array
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad.numpy as fnp


class _ArrayLike:
    dtype = np.dtype("float32")

    def __array__(self, dtype=None, copy=None):
        return np.array([3.0, 4.0], dtype=dtype)


@pytest.mark.parametrize("make", [
    _ArrayLike,
    lambda: bytearray(b"\x2a\xf3"),
    lambda: array.array("l", [0, 1, 2, 3]),
    lambda: memoryview(np.arange(3, dtype=np.int16)),
])  # fmt: skip
@pytest.mark.parametrize("ndmin", [0, 2])
def test_array_of_protocol_objects(make, ndmin):
    got, want = fnp.array(make(), ndmin=ndmin), jnp.array(make(), ndmin=ndmin)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(fnp.asarray(make()), jnp.asarray(make()))


def test_array_copy_and_positional_arguments():
    for np_ in (fnp, jnp):
        x = np_.array([1, 2, 3])
        assert np_.array(x, copy=False) is x
        assert np_.array(x) is not x
        with pytest.warns(DeprecationWarning, match="Passing the copy, order, and ndmin"):
            assert np_.array(x, None, False) is x
        with pytest.warns(DeprecationWarning, match="Passing the copy, order, and ndmin"):
            assert np_.array(x, None, True) is not x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(TypeError, match="got multiple values for argument 'copy'"):
                np_.array(x, None, True, copy=False)
            with pytest.raises(TypeError, match="takes at most 5 positional arguments"):
                np_.array(x, None, True, "K", 0, "extra")


def test_array_copy_of_traced_values():
    """A traced ``array(x, copy=True)`` is an equation of its own (JAX's ``copy_p``), so
    ``vmap`` returns a new array where ``copy=False`` (an identity) returns its input."""
    import jax

    import funcgrad as fg

    for lib, np_ in ((jax, jnp), (fg, fnp)):
        x = np_.ones(10)
        y = lib.vmap(lambda v, np_=np_: np_.array(v, copy=True))(x)
        assert y is not x
        np.testing.assert_array_equal(y, x)
        assert (lib.vmap(lambda v, np_=np_: np_.array(v, copy=False))(x) is x) == (
            jax.vmap(lambda v: jnp.array(v, copy=False))(x) is x
        )
        g = lib.grad(lambda v, np_=np_: np_.sum(np_.array(v, copy=True) ** 2))(x)
        np.testing.assert_array_equal(g, 2 * np.ones(10))
