"""``lax.linalg.tridiagonal_solve``: values, vmap and gradients against JAX's."""

import jax
import numpy as np
import pytest

import funcgrad as fg


def _system(batch=(), m=6, n=3, seed=0):
    rng = np.random.RandomState(seed)
    dl = rng.randn(*batch, m).astype(np.float32)
    d = (rng.randn(*batch, m) + 4).astype(np.float32)
    du = rng.randn(*batch, m).astype(np.float32)
    b = rng.randn(*batch, m, n).astype(np.float32)
    return dl, d, du, b


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_values(batch):
    args = _system(batch)
    np.testing.assert_allclose(
        fg.lax.linalg.tridiagonal_solve(*args),
        jax.lax.linalg.tridiagonal_solve(*args),
        rtol=1e-5,
        atol=1e-5,
    )


def test_vmap_as_jax():
    rng = np.random.RandomState(1)
    dl, d, du = (rng.randn(4, 10).astype(np.float32) for _ in range(3))
    d = d + 4
    b = rng.randn(4, 5, 10).astype(np.float32)
    for in_axes, args in [
        ((1, 1, 1, 2), (dl, d, du, b)),
        ((None, None, None, 2), (dl[:, 0], d[:, 0], du[:, 0], b)),
    ]:
        np.testing.assert_allclose(
            fg.vmap(fg.lax.linalg.tridiagonal_solve, in_axes=in_axes)(*args),
            jax.vmap(jax.lax.linalg.tridiagonal_solve, in_axes=in_axes)(*args),
            rtol=1e-5,
            atol=1e-5,
        )


def test_gradients():
    dl, d, du, b = _system()

    def loss(lib):
        return lambda dl, d, du, b: (lib.lax.linalg.tridiagonal_solve(dl, d, du, b) ** 2).sum()

    got = fg.grad(loss(fg), argnums=(0, 1, 2, 3))(dl, d, du, b)
    want = jax.grad(loss(jax), argnums=(0, 1, 2, 3))(dl, d, du, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
