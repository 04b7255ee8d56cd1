"""The derivative of ``det`` is ``adj(a)^T``, also at exactly singular matrices (an LU
pivot of zero, where ``det(a) * inv(a)`` is ``0 * inf``): checked against the cofactor
matrix built from NumPy's minors (an independent oracle), and against JAX's gradient and
Hessian at generic matrices. JAX's own ``testDetGrad`` checks the zero matrix."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _cofactors(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    out = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return out


def _singular_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    dependent_columns = rng.normal(size=(4, 4))
    dependent_columns[:, 1] = 2 * dependent_columns[:, 0]  # a zero pivot mid-way
    zero_row = rng.normal(size=(5, 5))
    zero_row[3] = 0
    corank_two = rng.normal(size=(5, 5))
    corank_two[[1, 3]] = 0
    return [np.zeros((1, 1)), np.zeros((4, 4)), dependent_columns, zero_row, corank_two]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", range(5))
def test_gradient_at_singular_matrices_is_the_cofactor_matrix(case, dtype):
    a = _singular_cases()[case]
    g = fg.grad(fnp.linalg.det)(a.astype(dtype))
    assert not np.isnan(np.asarray(g)).any()
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(np.asarray(g), _cofactors(a), atol=tol, rtol=tol)


def test_generic_matrices_match_jax_to_second_order():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(5, 5))
    batch = rng.normal(size=(2, 4, 4))
    np.testing.assert_allclose(
        fg.grad(lambda m: fnp.linalg.det(m).sum())(batch),
        jax.grad(lambda m: jnp.linalg.det(m).sum())(batch),
        rtol=1e-10,
    )
    np.testing.assert_allclose(
        fg.hessian(fnp.linalg.det)(a), jax.hessian(jnp.linalg.det)(a), rtol=1e-9, atol=1e-12
    )
    t = rng.normal(size=(5, 5))
    np.testing.assert_allclose(
        fg.jvp(fnp.linalg.det, (a,), (t,))[1], jax.jvp(jnp.linalg.det, (a,), (t,))[1], rtol=1e-10
    )
