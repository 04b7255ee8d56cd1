"""logaddexp/logaddexp2 (and softplus, built on them) at NaN and infinite operands
against JAX 0.10.2: values everywhere; a NaN operand gives NaN derivatives in forward
and reverse mode (JAX's nn_test checks softplus's); equal infinities keep their value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.nn as fnn
import funcgrad.numpy as fnp

INF, NAN = np.inf, np.nan
POINTS = [(NAN, 0.0), (0.0, NAN), (NAN, INF), (INF, INF), (-INF, -INF), (INF, -INF), (1.0, 2.0)]


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("a,b", POINTS)
def test_values_match_jax(name, a, b):
    a, b = np.float32(a), np.float32(b)
    got, want = getattr(fnp, name)(a, b), getattr(jnp, name)(a, b)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("a,b", [(NAN, 0.0), (0.0, NAN), (NAN, 1.5)])
def test_nan_operand_gives_nan_derivatives(name, a, b):
    f = getattr(fnp, name)
    a, b = np.float32(a), np.float32(b)
    one, half = np.float32(1.0), np.float32(0.5)
    assert np.isnan(fg.jvp(f, (a, b), (one, half))[1])
    assert np.isnan(jax.jvp(getattr(jnp, name), (a, b), (one, half))[1])
    assert all(np.isnan(g) for g in fg.grad(f, argnums=(0, 1))(a, b))


def test_softplus_derivative_at_nan_and_finite():
    for x in (np.float32(NAN), np.float32(-3.0), np.float32(0.0), np.float32(25.0)):
        t = fg.jvp(fnn.softplus, (x,), (np.float32(1.0),))[1]
        jt = jax.jvp(jax.nn.softplus, (x,), (np.float32(1.0),))[1]
        np.testing.assert_allclose(np.asarray(t), np.asarray(jt), rtol=1e-6)
        np.testing.assert_allclose(
            fg.grad(fnn.softplus)(x), jax.grad(jax.nn.softplus)(x), rtol=1e-6
        )
