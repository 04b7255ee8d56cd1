"""Derivatives at the edges of their domains, as JAX computes them: pow at a
zero base or exponent (first and second order, mixed partials symmetric), sinc
at 0 to fourth order, no NaN from the untaken branch of a batched cond."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-9, equal_nan=True)


POINTS = [(0.0, 0.0), (0.0, 1.0), (0.0, 2.0), (0.0, 0.5), (0.0, 3.0), (2.0, 0.0), (-2.0, 0.0)]
POINTS += [(-2.0, 2.0), (-2.0, 3.0), (1.5, 0.0), (1.3, 2.2)]


@pytest.mark.parametrize("x,y", POINTS)
def test_pow_first_and_second_derivatives(x, y):
    xy = np.array([x, y])
    _close(fg.grad(lambda v: v[0] ** v[1])(xy), jo.grad(lambda v: v[0] ** v[1])(xy))
    h = fg.hessian(lambda v: v[0] ** v[1])(xy)
    _close(h, jo.hessian(lambda v: v[0] ** v[1])(xy))
    if np.all(np.isfinite(h)):
        _close(h[0, 1], h[1, 0])  # the mixed partials agree


@pytest.mark.parametrize("x", [0.0, 0.5, -1.2])
def test_sinc_derivatives_to_fourth_order(x):
    f, g = fnp.sinc, jnp.sinc
    for _ in range(4):
        f, g = fg.grad(f), jo.grad(g)
        _close(f(x), g(x))
    if x == 0.0:
        _close(fg.grad(fg.grad(fnp.sinc))(x), -(np.pi**2) / 3)
    xs = np.array([0.0, 0.25, 1.0])
    _close(fg.vmap(fg.hessian(fnp.sinc))(xs), jo.vmap(jo.hessian(jnp.sinc))(xs))


BRANCHES = {
    "log|identity": (lambda m: m.log, lambda m: lambda x: x),
    "sqrt|zero": (lambda m: m.sqrt, lambda m: lambda x: x * 0.0),
    "2log|sin": (lambda m: lambda x: 2 * m.log(x), lambda m: m.sin),
}


@pytest.mark.parametrize("name", sorted(BRANCHES))
def test_batched_cond_untaken_branch_leaks_no_nan(name):
    tb, fb = BRANCHES[name]
    xs = np.array([-1.0, 0.0, 2.0])

    def f(xs):
        return fg.vmap(lambda x: fg.cond(x > 0, tb(fnp), fb(fnp), x))(xs).sum()

    def g(xs):
        return jo.vmap(lambda x: jax.lax.cond(x > 0, tb(jnp), fb(jnp), x))(xs).sum()

    _close(fg.grad(f)(xs), jo.grad(g)(xs))
    assert np.all(np.isfinite(np.asarray(fg.grad(f)(xs))))
    _close(fg.jit(fg.grad(f))(xs), jo.grad(g)(xs))
    t = np.ones(3)
    _close(fg.jvp(f, (xs,), (t,))[1], jo.jvp(g, (xs,), (t,))[1])
    _close(fg.hessian(f)(xs), jo.hessian(g)(xs))


def test_jvp_of_asarray_returns_arrays():
    x, t = np.arange(3.0), np.ones(3)
    out, tout = fg.jvp(fnp.asarray, (x,), (t,))
    jout, jtout = jo.jvp(jnp.asarray, (x,), (t,))
    assert isinstance(out, jax.Array) and isinstance(tout, jax.Array)
    _close(out, jout)
    _close(tout, jtout)
    out, tout = fg.jvp(lambda v: fnp.array(v) * 2, (x,), (t,))
    assert isinstance(tout, jax.Array)
    _close(tout, 2 * t)


X5 = np.arange(5.0)
X34 = np.arange(12.0).reshape(3, 4)
OOB_READS = [
    (X5, lambda x: x[10]),
    (X5, lambda x: x[-10]),
    (X5, lambda x: x[5]),
    (X5, lambda x: x[-6]),
    (X5, lambda x: x[np.array([7, -9, 2])]),
    (X34, lambda x: x[5, 1]),
    (X34, lambda x: x[1, -7]),
    (X34, lambda x: x[np.array([0, 9]), 2]),
    (X34, lambda x: x[..., 6]),
    (X34, lambda x: x[None, 4, 1:]),
]


@pytest.mark.parametrize("k", range(len(OOB_READS)))
def test_out_of_bounds_static_index_clamps_as_jax(k):
    """Out-of-bounds static indices read clamped (gather semantics) eagerly, under
    jit, under vmap and under grad (through the transpose of the read)."""
    arr, f = OOB_READS[k]
    _close(f(fnp.asarray(arr)), f(jnp.asarray(arr)))
    _close(fg.jit(f)(arr), jax.jit(f)(arr))
    two = np.stack([arr, arr])
    _close(fg.vmap(f)(two), jo.vmap(f)(two))
    if k not in (4, 7):  # JAX drops (not clamps) the gradient of an OOB index *array*
        _close(fg.grad(lambda x: f(x).sum())(arr), jo.grad(lambda x: f(x).sum())(arr))


@pytest.mark.parametrize("x, n", [(0.0, 0), (0.0, 1), (0.0, 2), (2.0, 0), (2.0, 3), (-1.5, 2)])
def test_power_with_a_traced_integer_exponent(x, n):
    """``x ** n`` with ``n`` a traced integer: its derivative at ``n = 0`` is 0, also at
    ``x = 0`` (JAX's rule; ``0 * x**-1`` would be NaN)."""
    import funcgrad.numpy as fnp

    f = lambda lib: lib.grad(lib.jit(lambda x, n: x**n))
    np.testing.assert_allclose(f(fg)(x, n), f(jax)(x, n), rtol=1e-6)
    vec = lambda lib, m: lib.grad(lambda z: m.sum(z ** m.arange(0, 3)))
    np.testing.assert_allclose(vec(fg, fnp)(x), vec(jax, jax.numpy)(x), rtol=1e-6)
