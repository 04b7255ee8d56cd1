"""The host tier's ``bitcast_convert_type`` keeps JAX's shapes: 0-d operands stay 0-d (a
same-size cast) or become ``(ratio,)`` (to a narrower type); non-contiguous operands are
read in their logical order. Checked against ``jax.lax.bitcast_convert_type``, and
``funcgrad.numpy.ldexp``'s gradient (bitcasts of 0-d exponents) against JAX's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from funcgrad.core import tiers

_PAIRS = [
    ("uint32", "float32"),
    ("float32", "int32"),
    ("float64", "uint64"),
    ("float32", "uint8"),
    ("int64", "float32"),
    ("uint16", "float16"),
]


@pytest.mark.parametrize("src,dst", _PAIRS)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_host_bitcast_matches_jax(src, dst, shape):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2**7, size=shape).astype(src)
    if shape == (2, 3):
        x = np.asarray(x.T)  # (a non-contiguous operand)
    with tiers.eager_tier("host"):
        got = np.asarray(flax.bitcast_convert_type(x, np.dtype(dst)))
    want = np.asarray(jax.lax.bitcast_convert_type(x, np.dtype(dst)))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("tier", ["host", "compiled"])
def test_ldexp_gradient_of_a_scalar_is_a_scalar(tier):
    with tiers.eager_tier(tier):
        g = fg.grad(lambda x: fnp.ldexp(x, np.int32(-1)))(1.5)
        m = fg.grad(lambda x: fnp.frexp(x)[0])(1.5)
    assert np.shape(g) == () and np.shape(m) == ()
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.ldexp(x, np.int32(-1)))(1.5))
    np.testing.assert_allclose(m, jax.grad(lambda x: jnp.frexp(x)[0])(1.5))
