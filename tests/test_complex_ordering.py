"""Complex values in order-based operations, against JAX 0.10.2: ``max``/``min`` (and
``lax.reduce_max``/``reduce_min``) and ``sort``/``argsort``/``lax.sort`` order complex
values lexicographically (real part, then imaginary part), as JAX does, with JAX's NaN
placement; ``argmax``/``argmin`` refuse them with a ``TypeError``, as JAX does; the
gradient of a complex ``max`` goes to the chosen element."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp


def _complex(seed: int, shape: tuple, nans: bool) -> np.ndarray:
    """Small integer parts, so that ties in the real part are frequent."""
    rng = np.random.default_rng(seed)
    x = (rng.integers(-2, 3, shape) + 1j * rng.integers(-2, 3, shape)).astype(np.complex64)
    if nans and x.size:
        flat = x.reshape(-1)
        flat[rng.integers(0, x.size)] = complex(np.nan, 1.0)
        flat[rng.integers(0, x.size)] = complex(1.0, np.nan)
    return x


def _same(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(5,), (3, 4), (2, 3, 4)]),
    seed=st.integers(0, 999),
    nans=st.booleans(),
    op=st.sampled_from(["max", "min", "sort", "argsort"]),
)
def test_complex_order_matches_jax(shape, seed, nans, op):
    x = _complex(seed, shape, nans)
    for axis in (None, -1, 0):
        if op in ("sort", "argsort") and axis is None:
            continue
        _same(getattr(fnp, op)(x, axis=axis), getattr(jnp, op)(x, axis=axis))
        _same(fg.jit(lambda x: getattr(fnp, op)(x, axis=axis))(x), getattr(jnp, op)(x, axis=axis))


def test_complex_lax_reductions_and_sort():
    x = _complex(3, (3, 5), False)
    _same(flax.reduce_max(x, (1,)), jax.lax.reduce_max(x, (1,)))
    _same(flax.reduce_min(x, (0,)), jax.lax.reduce_min(x, (0,)))
    _same(flax.sort(x, dimension=0), jax.lax.sort(x, dimension=0))
    # an empty axis gives the identity
    e = np.zeros((2, 0), np.complex64)
    _same(flax.reduce_max(e, (1,)), jax.lax.reduce_max(e, (1,)))


def test_complex_max_gradient_and_where():
    x = _complex(5, (3, 4), False)
    g = fg.grad(lambda x: fnp.real(fnp.max(x, axis=1)).sum())(x)
    gj = jax.grad(lambda x: jnp.real(jnp.max(x, axis=1)).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj))
    w = x.real > 0
    _same(fnp.min(x, axis=0, where=w, initial=9 + 0j), jnp.min(x, axis=0, where=w, initial=9 + 0j))
    s = fg.grad(lambda v: (fnp.sort(v) * np.arange(4)).real.sum())(x[0])
    sj = jax.grad(lambda v: (jnp.sort(v) * np.arange(4)).real.sum())(x[0])
    np.testing.assert_allclose(np.asarray(s), np.asarray(sj))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_complex_argmax_refused_as_jax(op):
    x = _complex(1, (4,), False)
    with pytest.raises(TypeError):
        getattr(jnp, op)(x)
    with pytest.raises(TypeError, match="complex"):
        getattr(fnp, op)(x)
