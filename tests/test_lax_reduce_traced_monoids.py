"""``lax.reduce`` with a computation written as a function (a lambda, or one monoid
per operand of a variadic reduce, as JAX's ``testReducePairGrad``): values, jit and
derivatives against JAX; a computation that is not a monoid per operand is refused."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax as flax

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 1.5, (3, 4))
Y = RNG.uniform(0.5, 1.5, (3, 4))
PAIR = (np.array(0.0), np.array(1.0))


def _pair(xs, ys):
    return (xs[0] + ys[0], xs[1] * ys[1])


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1)])
def test_pair_of_monoids(dims) -> None:
    with jax.enable_x64(True):
        f = lambda lax_, a, b: lax_.reduce((a, b), PAIR, _pair, dims)
        got = f(flax, X, Y)
        want = f(jax.lax, X, Y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
        jitted = fg.jit(lambda a, b: f(flax, a, b))(X, Y)
        np.testing.assert_allclose(jitted[1], want[1], rtol=1e-12)
        loss = lambda lax_, np_: lambda a, b: np_.sum(f(lax_, a, b)[0] * f(lax_, a, b)[1])
        gf = fg.grad(loss(flax, fg.numpy), argnums=(0, 1))(X, Y)
        gj = jax.grad(loss(jax.lax, jax.numpy), argnums=(0, 1))(X, Y)
        for g, w in zip(gf, gj):
            np.testing.assert_allclose(g, w, rtol=1e-10)


def test_lambdas_and_refusal() -> None:
    for comp, init in ((lambda a, b: a + b, 0.0), (lambda a, b: b * a, 1.0)):
        got = flax.reduce(X, np.float64(init), comp, (1,))
        np.testing.assert_allclose(got, jax.lax.reduce(X, np.float64(init), comp, (1,)))
    # not monoids: reduced by the general path (tests/test_lax_general_reductions.py)
    comp = lambda a, b: a + 2 * b
    np.testing.assert_allclose(flax.reduce(X, 0.0, comp, (1,)), jax.lax.reduce(X, 0.0, comp, (1,)))
    comp2 = lambda xs, ys: (xs[0] + ys[1], xs[1] * ys[0])
    for g, w in zip(
        flax.reduce((X, Y), PAIR, comp2, (0,)), jax.lax.reduce((X, Y), PAIR, comp2, (0,))
    ):
        np.testing.assert_allclose(g, w)
