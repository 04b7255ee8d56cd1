"""The derivative of ``.at[].mul`` with repeated indices, which JAX refuses
(``NotImplementedError`` unless ``unique_indices=True``): funcgrad's JVP and VJP agree
with central finite differences (also where a repeated index multiplies by 0), in
float64 (x64 is on in the suite)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

IDX = np.array([0, 0, 3, 0, 5])
X = np.arange(1.0, 7.0)
ZS = [np.array([2.0, 3.0, 5.0, 7.0, -1.5]), np.array([2.0, 0.0, 5.0, 7.0, 0.0])]
EPS = 1e-6


def _f(x, z):
    return fnp.asarray(x).at[IDX].mul(z)


def _loss(x, z):
    return float((np.asarray(_f(x, z)) ** 2).sum())


def test_jax_refuses_it():
    with pytest.raises(NotImplementedError, match="unique_indices"):
        jax.jvp(lambda x, z: jnp.asarray(x).at[IDX].mul(z), (X, ZS[0]), (X, ZS[0]))


@pytest.mark.parametrize("Z", ZS, ids=["nonzero", "zeros"])
def test_jvp_matches_finite_differences(Z):
    rng = np.random.default_rng(0)
    tx, tz = rng.standard_normal(X.shape), rng.standard_normal(Z.shape)
    _, t = fg.jvp(_f, (X, Z), (tx, tz))
    fd = (
        np.asarray(_f(X + EPS * tx, Z + EPS * tz)) - np.asarray(_f(X - EPS * tx, Z - EPS * tz))
    ) / (2 * EPS)
    np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("Z", ZS, ids=["nonzero", "zeros"])
def test_grad_matches_finite_differences(Z):
    gx, gz = fg.grad(lambda x, z: (_f(x, z) ** 2).sum(), (0, 1))(X, Z)
    fdx = [(_loss(X + EPS * e, Z) - _loss(X - EPS * e, Z)) / (2 * EPS) for e in np.eye(X.size)]
    fdz = [(_loss(X, Z + EPS * e) - _loss(X, Z - EPS * e)) / (2 * EPS) for e in np.eye(Z.size)]
    np.testing.assert_allclose(gx, fdx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gz, fdz, rtol=1e-5, atol=1e-5)
