"""Eager ``grad`` reuses the transformation of a traced structure it met before
(funcgrad/api/_reverse.py, ``_run_seeded``): the function is still traced at every
call, so what it reads from Python (captured arrays, values steering control flow)
is what the gradient sees. Oracle: JAX's own ``grad``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.api import _reverse


def test_captured_arrays_that_change_between_calls_are_read_at_each_call():
    rng = np.random.default_rng(0)
    w = rng.standard_normal(5).astype(np.float32)
    state = {"c": rng.standard_normal(5).astype(np.float32)}

    def f(w, np_=fnp):
        return np_.sum(np_.sin(state["c"] * w) * w)

    g = fg.grad(f)
    for _ in range(4):
        state["c"] = rng.standard_normal(5).astype(np.float32)
        np.testing.assert_allclose(g(w), jax.grad(lambda w: f(w, jnp))(w), rtol=1e-5, atol=1e-6)
    assert len(_reverse._SEEDED) >= 1  # (one structure, reused)


def test_python_control_flow_on_values_picks_the_branch_at_each_call():
    def f(w):  # (JAX's grad cannot read w[0]; funcgrad's eager grad knows it)
        if float(w[0]) > 0:
            return fnp.sum(w**3)
        return fnp.sum(fnp.exp(w))

    g = fg.grad(f)
    for w0 in (1.0, -1.0, 2.0, -0.5):
        w = np.array([w0, 0.5, 0.25], np.float32)
        want = jax.grad(lambda w: jnp.sum(w**3) if w0 > 0 else jnp.sum(jnp.exp(w)))(w)
        np.testing.assert_allclose(g(w), want, rtol=1e-5)


def test_value_and_grad_with_aux_through_the_reused_program():
    c = np.arange(4, dtype=np.float32)

    def f(w, np_=fnp):
        y = np_.tanh(w * c)
        return np_.sum(y * y), y

    vg = fg.value_and_grad(f, has_aux=True)
    for k in range(3):
        w = np.full(4, 0.1 * (k + 1), np.float32)
        (v, aux), g = vg(w)
        (v2, aux2), g2 = jax.value_and_grad(lambda w: f(w, jnp), has_aux=True)(w)
        np.testing.assert_allclose(v, v2, rtol=1e-6)
        np.testing.assert_allclose(aux, aux2, rtol=1e-6)
        np.testing.assert_allclose(g, g2, rtol=1e-5)


@settings(max_examples=20, deadline=None)
@given(
    coeffs=st.lists(st.floats(-2, 2, allow_nan=False), min_size=3, max_size=3),
    power=st.integers(1, 3),
)
def test_reused_gradient_matches_jax_for_any_captured_coefficients(coeffs, power):
    c = np.asarray(coeffs, np.float32)
    x = np.linspace(-1, 1, 3).astype(np.float32)

    def f(w, np_=fnp):
        return np_.mean((np_.dot(c[:, None] * w, x) - 1.0) ** 2) + np_.sum(w**power)

    w = np.array([0.3, -0.2, 0.1], np.float32)
    np.testing.assert_allclose(
        fg.grad(f)(w), jax.grad(lambda w: f(w, jnp))(w), rtol=1e-4, atol=1e-5
    )


def test_a_reused_program_keeps_the_lines_of_the_call_it_serves():
    def f(w):
        return fnp.sum(fnp.tanh(w))

    def g(w):
        return fnp.sum(fnp.tanh(w))

    w = np.ones(3, np.float32)
    fg.grad(f)(w)
    lines = {e.source[1] for e in fg.make_ir(fg.grad(g))(w).eqns if e.source}
    assert g.__code__.co_firstlineno + 1 in lines
    assert f.__code__.co_firstlineno + 1 not in lines
