"""lax.linalg.tridiagonal_solve with partial pivoting and perturb_singular, against
jax.lax.linalg.tridiagonal_solve 0.10.2 (LAPACK's gtsv scheme on CPU): systems that
need pivoting (a zero leading pivot), singular systems (inf/nan, or large finite
solutions when perturbed: the same numbers as JAX's), random batches of real and
complex systems with their gradients, and ignored endpoints."""

from __future__ import annotations

import jax
import jax.lax as jl
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.lax as fl

F32 = np.float32
PIVOTING = [
    ([0.0, 2.0, -2.0, 3.0], [1.0, 4.0, 1.0, -1.0], [2.0, -1.0, 1.0, 0.0], [1.0, 2.0, 3.0, 4.0]),
    ([0.0, 1.0, -6.0, 1.0], [1.0, -1.0, 2.0, 1.0], [2.0, 1.0, -1.0, 0.0], [1.0, 2.0, -1.0, -2.0]),
    ([0.0, 5.0, 1.0], [0.0, 1.0, 2.0], [1.0, 3.0, 0.0], [1.0, 0.0, 2.0]),  # zero first pivot
]
SINGULAR = [
    ([0.0, 1.0], [1.0, 3.0], [3.0, 0.0], [1.0, 4.0]),
    ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
]


def _system(case):
    dl, d, du, b = (np.asarray(v, F32) for v in case)
    return dl, d, du, b[:, None]


@pytest.mark.parametrize("perturb", [False, True])
@pytest.mark.parametrize("case", PIVOTING)
def test_systems_that_need_pivoting(case, perturb):
    args = _system(case)
    x = fl.linalg.tridiagonal_solve(*args, perturb_singular=perturb)
    want = jl.linalg.tridiagonal_solve(*args, perturb_singular=perturb)
    np.testing.assert_allclose(np.asarray(x), np.asarray(want), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", SINGULAR)
def test_singular_systems(case):
    args = _system(case)
    plain = np.asarray(fl.linalg.tridiagonal_solve(*args))
    assert not np.isfinite(plain).all()
    perturbed = np.asarray(fl.linalg.tridiagonal_solve(*args, perturb_singular=True))
    want = np.asarray(jl.linalg.tridiagonal_solve(*args, perturb_singular=True))
    assert np.isfinite(perturbed).all() and (np.abs(perturbed) > 1e6).all()
    np.testing.assert_allclose(perturbed, want, rtol=1e-5)


@settings(max_examples=20, deadline=None)
@given(
    shape=st.sampled_from([(1,), (2,), (5,), (3, 4)]),
    dtype=st.sampled_from([np.float32, np.complex64]),
    k=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    perturb=st.booleans(),
)
def test_random_systems_and_gradients_match_jax(shape, dtype, k, seed, perturb):
    rng = np.random.default_rng(seed)

    def draw(s):
        v = rng.normal(size=s)
        return (v + 1j * rng.normal(size=s) if dtype == np.complex64 else v).astype(dtype)

    dl, du, b = draw(shape), draw(shape), draw((*shape, k))
    d = (1.0 + rng.random(shape)).astype(dtype) * np.where(rng.random(shape) < 0.3, 0.01, 1)
    args = (dl, d.astype(dtype), du, b)
    x = fl.linalg.tridiagonal_solve(*args, perturb_singular=perturb)
    want = jl.linalg.tridiagonal_solve(*args, perturb_singular=perturb)
    np.testing.assert_allclose(np.asarray(x), np.asarray(want), rtol=2e-3, atol=2e-3)

    def loss(solve):
        return lambda *a: solve(*a, perturb_singular=perturb).real.sum()

    got = fg.grad(loss(fl.linalg.tridiagonal_solve), argnums=(0, 1, 2, 3))(*args)
    exp = jax.grad(loss(jl.linalg.tridiagonal_solve), argnums=(0, 1, 2, 3))(*args)
    for g, e in zip(got, exp):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=5e-3, atol=5e-3)


def test_endpoints_are_ignored():
    dl = np.linspace(-1.0, 1.0, 10, dtype=F32)
    d = np.linspace(1.0, 2.0, 10, dtype=F32)
    du = np.linspace(1.0, -1.0, 10, dtype=F32)
    b = np.linspace(0.1, -0.1, 10, dtype=F32)[:, None]
    zeroed = dl.copy(), du.copy()
    zeroed[0][0], zeroed[1][-1] = 0.0, 0.0
    np.testing.assert_allclose(
        fl.linalg.tridiagonal_solve(dl, d, du, b),
        fl.linalg.tridiagonal_solve(zeroed[0], d, zeroed[1], b),
        rtol=1e-6,
    )
