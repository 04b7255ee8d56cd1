"""``funcgrad.lax.custom_root`` against ``jax.lax.custom_root`` (JAX 0.10.2): a root
found by a non-differentiable solver (bisection in a ``while_loop``), differentiated by
the implicit function theorem in both modes, to second order, under ``vmap`` and ``jit``,
with a vector system, ``has_aux``, and the closed-form derivative as an oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp


def _bisect(xp, lax):
    def search(func, x0):
        low, high = np.float32(0.0), np.float32(100.0)

        def cond(state):
            lo, hi = state
            mid = (lo + hi) / 2
            return (lo < mid) & (mid < hi)

        def body(state):
            lo, hi = state
            mid = (lo + hi) / 2
            too_large = func(mid) > 0
            return xp.where(too_large, lo, mid), xp.where(too_large, mid, hi)

        return lax.while_loop(cond, body, (low, high))[0]

    return search


def _sqrt_cubed(xp, lax, has_aux=False):
    search = _bisect(xp, lax)

    def f(x):
        def solve(func, x0):
            r = search(func, x0)
            return (r, xp.sum(r)) if has_aux else r

        out = lax.custom_root(
            lambda y: y**2 - x**3,
            np.float32(0.0),
            solve,
            lambda g, y: y / g(np.float32(1.0)),
            has_aux,
        )
        return out[0] + out[1] if has_aux else out

    return f


def test_scalar_root_and_its_derivatives():
    ours, theirs = _sqrt_cubed(fnp, flax), _sqrt_cubed(jnp, jax.lax)
    x = np.float32(5.0)
    np.testing.assert_allclose(float(ours(x)), float(theirs(x)), rtol=1e-6)
    np.testing.assert_allclose(float(fg.grad(ours)(x)), 1.5 * np.sqrt(5.0), rtol=1e-5)
    np.testing.assert_allclose(float(fg.jacfwd(ours)(x)), float(jax.jacfwd(theirs)(x)), rtol=1e-5)
    np.testing.assert_allclose(
        float(fg.grad(fg.grad(ours))(x)), float(jax.grad(jax.grad(theirs))(x)), rtol=1e-4
    )
    np.testing.assert_allclose(float(fg.grad(fg.grad(ours))(x)), 0.75 / np.sqrt(5.0), rtol=1e-4)
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(fg.vmap(fg.grad(ours))(xs)), 1.5 * np.sqrt(xs), rtol=1e-5)
    np.testing.assert_allclose(float(fg.jit(ours)(x)), 5.0**1.5, rtol=1e-6)


def test_aux_carries_no_derivative():
    ours, theirs = _sqrt_cubed(fnp, flax, True), _sqrt_cubed(jnp, jax.lax, True)
    x = np.float32(2.0)
    np.testing.assert_allclose(float(ours(x)), float(theirs(x)), rtol=1e-6)
    np.testing.assert_allclose(float(fg.grad(ours)(x)), float(jax.grad(theirs)(x)), rtol=1e-5)


def test_vector_root():
    """``a x = b`` solved directly, differentiated in ``a`` and ``b`` through the root."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)

    def make(xp, lax):
        def root(a, b):
            return lax.custom_root(
                lambda x: xp.dot(a, x) - b,
                xp.zeros(3, np.float32),
                lambda f, x0: xp.linalg.solve(a, b),
                lambda g, y: xp.linalg.solve(jax_or_fg(xp).jacobian(g)(y), y),
            )

        return root

    def jax_or_fg(xp):
        return fg if xp is fnp else jax

    ours, theirs = make(fnp, flax), make(jnp, jax.lax)
    np.testing.assert_allclose(np.asarray(ours(a, b)), np.asarray(theirs(a, b)), rtol=1e-5)
    for argnums in (0, 1):
        np.testing.assert_allclose(
            np.asarray(fg.jacrev(ours, argnums)(a, b)),
            np.asarray(jax.jacrev(theirs, argnums)(a, b)),
            rtol=1e-4,
            atol=1e-5,
        )
