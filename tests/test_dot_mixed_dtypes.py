"""``lax.dot_general`` of operands of two dtypes, against JAX 0.10.2: JAX multiplies
them as they are and types the result as XLA's higher-precision operand type (complex,
then exponent range, mantissa, width, signedness), booleans included; funcgrad gives
the same dtypes and values, under ``jit`` and ``vmap`` too, and the derivatives of the
float/complex mixes."""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax as flax

PAIRS = [
    (ml_dtypes.bfloat16, np.int16),
    (np.float32, np.complex64),
    (np.complex64, np.float32),
    (np.int8, np.int32),
    (np.bool_, np.bool_),
    (np.bool_, np.int32),
    (np.float32, np.float16),
    (np.float16, ml_dtypes.bfloat16),
    (np.int8, np.uint8),
    (np.uint8, np.int8),
    (np.uint16, np.int8),
    (np.int32, np.float16),
]
DN = (((1,), (0,)), ((), ()))


def _operands(a: type, b: type) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    x = rng.randint(0, 3, (2, 3)).astype(a)
    y = (rng.randint(0, 3, (3, 4)) + (250 if np.dtype(b).kind in "iu" else 0)).astype(b)
    if np.dtype(b) == np.int8:
        y = rng.randint(-5, 5, (3, 4)).astype(b)
    return x, y


def _same(ours: object, theirs: object) -> None:
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=lambda t: np.dtype(t).name)
def test_values_and_dtype(a: type, b: type) -> None:
    x, y = _operands(a, b)
    _same(flax.dot_general(x, y, DN), jax.lax.dot_general(x, y, DN))
    _same(flax.dot(x, y), jax.lax.dot(x, y))


@pytest.mark.parametrize(("a", "b"), PAIRS[:4], ids=lambda t: np.dtype(t).name)
def test_jit_and_vmap(a: type, b: type) -> None:
    x, y = _operands(a, b)
    xs = np.stack([x, x[::-1]])
    theirs = jax.jit(jax.vmap(lambda u: jax.lax.dot_general(u, y, DN)))(xs)
    ours = fg.jit(fg.vmap(lambda u: flax.dot_general(u, y, DN)))(xs)
    _same(ours, theirs)


@pytest.mark.parametrize(
    ("a", "b"), [(np.float32, np.complex64), (np.float32, np.float16)], ids=str
)
def test_derivatives(a: type, b: type) -> None:
    rng = np.random.RandomState(1)
    x = rng.randn(2, 3).astype(a)
    y = (rng.randn(3, 4) + (1j * rng.randn(3, 4) if np.dtype(b).kind == "c" else 0)).astype(b)

    def loss(lax: object) -> object:
        return lambda u, v: (lax.dot_general(u, v, DN) ** 2).real.sum()

    theirs = jax.grad(loss(jax.lax), argnums=(0, 1))(x, y)
    ours = fg.grad(loss(flax), argnums=(0, 1))(x, y)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=2e-3, atol=1e-3)
