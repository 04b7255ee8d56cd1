"""``funcgrad.lax.custom_linear_solve`` against ``jax.lax.custom_linear_solve`` (JAX 0.10.2):
values, first and second derivatives in both modes (implicit differentiation through the
``linear_solve`` primitive), ``vmap``, ``jit``, symmetric systems, pytrees, ``has_aux``,
and JAX's errors (no ``transpose_solve`` in reverse mode, mismatched output trees). The
primitive's own rules are also checked by tests/test_registry.py."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp


def _system(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    return a.astype(np.float32), rng.standard_normal(3).astype(np.float32)


def _solver(xp, lax, symmetric: bool = False):
    def f(a, b):
        if symmetric:
            a = a + a.T
        matvec = partial(xp.dot, a)
        solve = lambda _, x: xp.linalg.solve(a, x)
        tsolve = None if symmetric else (lambda _, x: xp.linalg.solve(a.T, x))
        return lax.custom_linear_solve(matvec, b, solve, tsolve, symmetric=symmetric)

    return f


def _close(x, y, tol=2e-4):
    for u, v in zip(jax.tree_util.tree_leaves(x), jax.tree_util.tree_leaves(y), strict=True):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=tol, atol=tol)


@pytest.mark.parametrize("symmetric", [False, True])
def test_values_and_derivatives_match_jax(symmetric):
    a, b = _system()
    ours, theirs = _solver(fnp, flax, symmetric), _solver(jnp, jax.lax, symmetric)
    _close(ours(a, b), theirs(a, b))
    _close(fg.jit(ours)(a, b), theirs(a, b))
    for argnums in (0, 1):
        _close(fg.jacfwd(ours, argnums)(a, b), jax.jacfwd(theirs, argnums)(a, b))
        _close(fg.jacrev(ours, argnums)(a, b), jax.jacrev(theirs, argnums)(a, b))

    def scalar(f, xp):
        return lambda a, b: xp.sum(f(a, b) ** 2)

    _close(
        fg.hessian(scalar(ours, fnp), (0, 1))(a, b)[0][1],
        jax.hessian(scalar(theirs, jnp), (0, 1))(a, b)[0][1],
        tol=2e-3,
    )
    # the implicit derivative is the derivative of the exact solution
    eff = a + a.T if symmetric else a
    _close(fg.grad(lambda b: ours(a, b).sum())(b), np.linalg.solve(eff.T, np.ones(3)))


def test_vmap_and_vmap_of_grad():
    a, _ = _system(1)
    c = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    ours, theirs = _solver(fnp, flax), _solver(jnp, jax.lax)
    _close(fg.vmap(ours, (None, 1), 1)(a, c), jax.vmap(theirs, (None, 1), 1)(a, c))
    g = fg.vmap(fg.grad(lambda a, b: ours(a, b).sum()), (None, 1))(a, c)
    gj = jax.vmap(jax.grad(lambda a, b: theirs(a, b).sum()), (None, 1))(a, c)
    _close(g, gj)


def test_pytree_and_aux():
    a, b = _system(3)

    def run(xp, lax):
        def f(a, b):
            matvec = lambda t: {"u": xp.dot(a, t["u"]), "v": 2.0 * t["v"]}

            def solve(_, t):
                return {"u": xp.linalg.solve(a, t["u"]), "v": t["v"] / 2.0}, xp.sum(t["v"])

            def tsolve(_, t):
                return {"u": xp.linalg.solve(a.T, t["u"]), "v": t["v"] / 2.0}, xp.sum(t["v"])

            x, aux = lax.custom_linear_solve(
                matvec, {"u": b, "v": b[:2]}, solve, tsolve, has_aux=True
            )
            return xp.sum(x["u"]) + xp.sum(x["v"] ** 2) + aux

        return f

    _close(run(fnp, flax)(a, b), run(jnp, jax.lax)(a, b))
    _close(fg.grad(run(fnp, flax), (0, 1))(a, b), jax.grad(run(jnp, jax.lax), (0, 1))(a, b))


def test_errors_as_jax():
    a, b = _system(4)

    def no_transpose(a, b):
        return flax.custom_linear_solve(
            partial(fnp.dot, a), b, lambda _, x: fnp.linalg.solve(a, x)
        ).sum()

    _close(
        fg.jacfwd(no_transpose)(a, b), jax.jacfwd(lambda a, b: jnp.linalg.solve(a, b).sum())(a, b)
    )
    with pytest.raises(TypeError, match="transpose_solve required"):
        fg.grad(no_transpose)(a, b)
    solve = lambda _, x: x
    with pytest.raises(TypeError, match=r"matvec\(\) output pytree"):
        flax.custom_linear_solve(lambda x: [x], 1.0, solve, solve)
    with pytest.raises(TypeError, match=r"solve\(\) output pytree"):
        flax.custom_linear_solve(lambda x: x, 1.0, lambda f, x: [x], solve)
    with pytest.raises(TypeError, match=r"transpose_solve\(\) output pytree"):
        flax.custom_linear_solve(lambda x: x, 1.0, solve, lambda f, x: [x])
    with pytest.raises(ValueError, match=r"solve\(\) output shapes"):
        flax.custom_linear_solve(lambda x: x, 1.0, lambda f, x: fnp.ones(2), solve)
