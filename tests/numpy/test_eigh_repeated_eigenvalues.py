"""eigh's reverse mode at repeated eigenvalues: a function of the eigenvalues alone has
the finite gradient JAX gives (the eigenvector term's 1 / (w_j - w_i) is not formed when
no eigenvector is used); with eigenvectors used, generic matrices still match JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


@pytest.mark.parametrize(
    "x",
    [np.eye(3, dtype=np.complex64), np.eye(3, dtype=np.float32), np.diag(np.float32([1, 1, 2]))],
)
def test_eigenvalues_only_at_repeated_eigenvalues(x):
    def f(m):
        return fnp.real(fnp.sum(fnp.linalg.eigh(m)[0] ** 2))

    def jf(m):
        return jnp.real(jnp.sum(jnp.linalg.eigh(m)[0] ** 2))

    want = jax.jit(jax.grad(jax.jit(jf)))(x)
    for got in (fg.grad(f)(x), fg.jit(fg.grad(fg.jit(f)))(x)):
        assert not np.isnan(np.asarray(got)).any()
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)


def test_eigenvectors_used_match_jax():
    a = np.random.default_rng(0).normal(size=(4, 4))
    a = a + a.T

    def f(m):
        w, v = fnp.linalg.eigh(m)
        return fnp.sum(w**2) + fnp.sum(v[:, 0] ** 2 * fnp.arange(4.0))

    def jf(m):
        w, v = jnp.linalg.eigh(m)
        return jnp.sum(w**2) + jnp.sum(v[:, 0] ** 2 * jnp.arange(4.0))

    np.testing.assert_allclose(fg.grad(f)(a), jax.grad(jf)(a), rtol=1e-8, atol=1e-10)
