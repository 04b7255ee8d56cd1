"""``funcgrad.experimental.ode.odeint`` against ``jax.experimental.ode.odeint`` (JAX
0.10.2) and SciPy's ``odeint``: values, reverse-mode derivatives (first and second
order, against JAX's and against finite differences), pytree states, closed-over
arrays, ``vmap`` of ``grad``, complex states, ``hmax``, and JAX's errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate as osp_integrate
from jax.experimental.ode import odeint as jax_odeint

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.experimental.ode import odeint


def _pend(np_: Any, y: Any, t: Any, m: Any, g: Any) -> Any:
    theta, omega = y[0], y[1]
    return np_.stack([omega, -m * omega - g * np_.sin(theta) * np_.cos(0.3 * t)])


def test_values_match_scipy_and_jax() -> None:
    y0 = np.array([np.pi - 0.1, 0.0], np.float32)
    ts = np.linspace(0.0, 2.0, 9).astype(np.float32)
    ours = odeint(lambda y, t, m, g: _pend(fnp, y, t, m, g), y0, ts, 0.25, 9.8)
    theirs = jax_odeint(lambda y, t, m, g: _pend(jnp, y, t, m, g), y0, ts, 0.25, 9.8)
    ref = osp_integrate.odeint(
        lambda y, t: np.array([y[1], -0.25 * y[1] - 9.8 * np.sin(y[0]) * np.cos(0.3 * t)]),
        y0.astype(np.float64),
        ts.astype(np.float64),
        rtol=1e-10,
        atol=1e-10,
    )
    assert ours.shape == (9, 2) and ours.dtype == np.float32
    np.testing.assert_allclose(np.asarray(ours), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(ours[0]), y0)


def test_gradients_match_jax() -> None:
    y0 = np.array([np.pi - 0.1, 0.0])
    ts = np.linspace(0.0, 1.0, 6)

    def loss(lib: Any, solve: Any) -> Any:
        def f(y0: Any, ts: Any, m: Any, g: Any) -> Any:
            ys = solve(lambda y, t, m, g: _pend(lib, y, t, m, g), y0, ts, m, g)
            return (ys**2).sum() + ys[-1, 0]

        return f

    ours = fg.grad(loss(fnp, odeint), argnums=(0, 1, 2, 3))(y0, ts, 0.25, 9.8)
    theirs = jax.grad(loss(jnp, jax_odeint), argnums=(0, 1, 2, 3))(y0, ts, 0.25, 9.8)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-3, atol=2e-3)


def test_second_order_gradient_against_finite_differences() -> None:
    def f(k: Any) -> Any:
        ys = odeint(lambda y, t, k: -k * y + fnp.sin(t), fnp.asarray(1.0), fnp.linspace(0, 1, 5), k)
        return ys[-1]

    # y' = -k y + sin t, y(0) = 1; d2y(1)/dk2 by central differences of the exact value
    def exact(k: float) -> float:
        # y(1) = e^{-k} (1 + int_0^1 e^{k s} sin s ds)
        integral = (np.exp(k) * (k * np.sin(1) - np.cos(1)) + 1) / (k**2 + 1)
        return np.exp(-k) * (1 + integral)

    k, h = 0.7, 1e-3
    d1 = (exact(k + h) - exact(k - h)) / (2 * h)
    d2 = (exact(k + h) - 2 * exact(k) + exact(k - h)) / h**2
    np.testing.assert_allclose(float(f(k)), exact(k), rtol=1e-5)
    np.testing.assert_allclose(float(fg.grad(f)(k)), d1, rtol=1e-3)
    np.testing.assert_allclose(float(fg.grad(fg.grad(f))(k)), d2, rtol=1e-2)


def test_pytree_state_and_closure() -> None:
    x = 0.3

    def ours(x: Any) -> Any:
        dyn = lambda y, t: {"a": -x * y["a"], "b": y["a"].sum() * y["b"]}
        ys = odeint(dyn, {"a": fnp.ones(2), "b": fnp.asarray(0.5)}, fnp.asarray([0.0, 0.5, 1.0]))
        return ys["a"].sum() + ys["b"][-1]

    def theirs(x: Any) -> Any:
        dyn = lambda y, t: {"a": -x * y["a"], "b": y["a"].sum() * y["b"]}
        ys = jax_odeint(
            dyn, {"a": jnp.ones(2), "b": jnp.asarray(0.5)}, jnp.asarray([0.0, 0.5, 1.0])
        )
        return ys["a"].sum() + ys["b"][-1]

    np.testing.assert_allclose(float(ours(x)), float(theirs(x)), rtol=1e-5)
    np.testing.assert_allclose(float(fg.grad(ours)(x)), float(jax.grad(theirs)(x)), rtol=1e-4)
    np.testing.assert_allclose(
        float(fg.jit(fg.grad(ours))(x)), float(jax.grad(theirs)(x)), rtol=1e-4
    )


def test_vmap_of_grad_matches_jax() -> None:
    def make(lib: Any, solve: Any) -> Any:
        def h(x: Any) -> Any:
            return solve(lambda y, t: -x * y, lib.asarray(1.0), lib.arange(0.0, 2.0, 0.25))[-1]

        return h

    xs = np.linspace(0.0, 1.0, 4)
    ours = fg.vmap(fg.value_and_grad(make(fnp, odeint)))(xs)
    theirs = jax.vmap(jax.value_and_grad(make(jnp, jax_odeint)))(xs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)


def test_complex_state_gradient_matches_jax() -> None:
    def make(lib: Any, solve: Any) -> Any:
        def f(y0: Any, alpha: Any) -> Any:
            dyn = lambda y, t, a: a * y * lib.exp(-t).astype(y.dtype)
            return solve(dyn, y0, lib.linspace(0.0, 1.0, 5), alpha).real.sum()

        return f

    y0, alpha = np.complex128(1 + 2j), np.complex128(0.3 + 0.4j)
    ours = fg.grad(make(fnp, odeint), argnums=(0, 1))(y0, alpha)
    theirs = jax.grad(make(jnp, jax_odeint), argnums=(0, 1))(y0, alpha)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4)


def test_hmax_sees_a_short_pulse() -> None:
    def rhs(y: Any, t: Any) -> Any:
        return fnp.where((t >= 5.0) & (t <= 7.0), -1.0, fnp.where(t <= 2.0, 1.0, 0.0))

    ys = odeint(rhs, fnp.asarray(0.0), fnp.asarray([0.0, 5.0, 10.0]), hmax=1.0)
    np.testing.assert_allclose(np.asarray(ys), [0.0, 2.0, 0.0], atol=1e-4)


def test_errors_as_jax() -> None:
    with pytest.raises(TypeError, match="odeint \\*args must be arrays or scalars"):
        odeint(lambda y, t, f: y, 1.0, fnp.asarray([0.0, 1.0]), lambda: 0)
    with pytest.raises(TypeError, match="can't apply forward-mode"):
        fg.jacfwd(lambda k: odeint(lambda y, t: k * y, 1.0, fnp.linspace(0, 1.0, 5)).sum())(3.0)
    with pytest.raises(TypeError, match="can't apply forward-mode"):
        jax.jacfwd(lambda k: jax_odeint(lambda y, t: k * y, 1.0, jnp.linspace(0, 1.0, 5)).sum())(
            3.0
        )
