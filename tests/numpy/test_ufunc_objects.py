"""funcgrad.numpy's ufunc objects (``add``, ``multiply``, ``maximum``... and
``frompyfunc``) against jax.numpy 0.10.2's: ``reduce`` (axes, keepdims, initial, where,
dtype), ``accumulate``, ``reduceat`` (also with traced indices under jit), ``outer``,
``at`` (repeated indices, ``inplace=False`` only), the read-only properties, equality,
errors, and gradients through them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

NAMES = ["add", "multiply", "maximum", "minimum", "subtract", "logaddexp", "bitwise_and",
         "bitwise_xor", "logical_and", "logical_or", "logical_xor"]  # fmt: skip
X = np.array([[1.5, -2.0, 3.0, 0.5], [2.0, 4.0, -1.0, 1.0], [0.5, 1.0, 2.0, -3.0]], np.float32)


def _operand(name: str) -> np.ndarray:
    if name.startswith("bitwise"):
        return (X * 2).astype(np.int32)
    if name.startswith("logical"):
        return X > 0.7
    return X


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_methods_match_jax(name):
    f, j, x = getattr(fnp, name), getattr(jnp, name), _operand(name)
    assert (f.nin, f.nout, f.nargs, f.identity) == (j.nin, j.nout, j.nargs, j.identity)
    for axis in (0, 1, -1, None):
        for keepdims in (False, True):
            _same(
                f.reduce(x, axis=axis, keepdims=keepdims), j.reduce(x, axis=axis, keepdims=keepdims)
            )
    for axis in (0, 1):
        _same(f.accumulate(x, axis=axis), j.accumulate(x, axis=axis))
    idx = np.array([0, 2, 1, 3], np.int32)
    _same(f.reduceat(x, idx, axis=1), j.reduceat(x, idx, axis=1))
    _same(
        fg.jit(lambda x, i: f.reduceat(x, i, axis=1))(x, idx),
        jax.jit(lambda x, i: j.reduceat(x, i, axis=1))(x, idx),
    )
    _same(f.outer(x[0], x[1:]), j.outer(x[0], x[1:]))
    at = np.array([0, 0, 3], np.int32)
    _same(f.at(x[0], at, x[1, :3], inplace=False), j.at(x[0], at, x[1, :3], inplace=False))
    _same(f(x[0], x[1]), j(x[0], x[1]))


def test_reduce_options_match_jax():
    mask = np.array([True, False, True, True])
    for f, j in ((fnp.add, jnp.add), (fnp.maximum, jnp.maximum), (fnp.subtract, jnp.subtract)):
        _same(
            f.reduce(X, axis=1, where=mask, initial=0.0),
            j.reduce(X, axis=1, where=mask, initial=0.0),
        )
        _same(f.reduce(X, axis=0, initial=5.0), j.reduce(X, axis=0, initial=5.0))
    _same(
        fnp.add.reduce(X.astype(np.int32), dtype=np.float32),
        jnp.add.reduce(X.astype(np.int32), dtype=np.float32),
    )
    _same(fnp.add.reduce(X, axis=(0, 1)), jnp.add.reduce(X, axis=(0, 1)))


def test_frompyfunc_matches_jax():
    def scalar(a, b):
        assert np.shape(a) == np.shape(b) == ()  # called on scalars, as JAX's
        return a * b + 1

    f = fnp.frompyfunc(scalar, nin=2, nout=1, identity=1)
    j = jnp.frompyfunc(scalar, nin=2, nout=1, identity=1)
    v = np.arange(1.0, 5.0, dtype=np.float32)
    _same(f.reduce(v), j.reduce(v))
    _same(f.accumulate(v), j.accumulate(v))
    _same(f.outer(v[:2], v), j.outer(v[:2], v))
    _same(f.reduceat(v, np.array([0, 2])), j.reduceat(v, np.array([0, 2])))
    _same(
        f.at(v, np.array([1, 1]), 2.0, inplace=False), j.at(v, np.array([1, 1]), 2.0, inplace=False)
    )
    assert f == fnp.frompyfunc(scalar, nin=2, nout=1, identity=1)
    assert hash(f) == hash(fnp.frompyfunc(scalar, nin=2, nout=1, identity=1))
    assert f != fnp.frompyfunc(scalar, nin=2, nout=1, identity=0)


def test_errors_and_read_only_properties():
    with pytest.raises(NotImplementedError, match="inplace=False"):
        fnp.add.at(X[0], np.array([0]), 1.0)
    with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
        fnp.negative.reduce(X)
    with pytest.raises(ValueError, match="which has no identity"):
        fnp.maximum.reduce(np.zeros((0,), np.float32))
    with pytest.raises(NotImplementedError, match="tuple of axes"):
        fnp.subtract.reduce(X, axis=(0, 1))
    for attr in ("nin", "nout", "nargs", "identity"):
        with pytest.raises(AttributeError):
            setattr(fnp.add, attr, None)
    assert repr(fnp.add) == repr(jnp.add) and fnp.add.__name__ == "add"


def test_gradients_through_methods():
    v = X[0]
    for f, j in (
        (fnp.multiply, jnp.multiply),
        (fnp.maximum, jnp.maximum),
        (fnp.logaddexp, jnp.logaddexp),
    ):
        _same(fg.grad(lambda a: f.reduce(a))(v), jax.grad(lambda a: j.reduce(a))(v))
        _same(
            fg.grad(lambda a: f.accumulate(a).sum())(v),
            jax.grad(lambda a: j.accumulate(a).sum())(v),
        )
    at = np.array([0, 0, 2])
    _same(
        fg.grad(lambda a: fnp.add.at(a, at, v[:3], inplace=False).sum())(v),
        jax.grad(lambda a: jnp.add.at(a, at, v[:3], inplace=False).sum())(v),
    )
