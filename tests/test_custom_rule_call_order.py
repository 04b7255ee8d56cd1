"""Which Python functions of a ``custom_jvp``/``custom_vjp`` function run, how many times
and in what order, under each transform and their combinations: recorded for funcgrad
and for JAX (the oracle) and compared, with the values (JAX's Custom derivative rules
notebook prints them; see docs/design.md, "When custom rules run")."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _lib(which):
    return (fg, fnp) if which == "fg" else (jax, jnp)


def _make(which, log):
    t, m = _lib(which)

    @t.custom_jvp
    def f(x):
        log.append("f")
        return m.sin(x)

    @f.defjvp
    def f_jvp(p, tn):
        log.append("f_jvp")
        return f(p[0]), m.cos(p[0]) * tn[0]

    @t.custom_vjp
    def g(x):
        log.append("g")
        return m.sin(x)

    def g_fwd(x):
        log.append("g_fwd")
        return g(x), m.cos(x)

    def g_bwd(c, ct):
        log.append("g_bwd")
        return (c * ct,)

    g.defvjp(g_fwd, g_bwd)

    @t.custom_jvp
    def h(x, y):  # a rule that never calls its function
        log.append("h")
        return x * y

    @h.defjvp
    def h_jvp(p, tn):
        log.append("h_jvp")
        (x, y), (tx, ty) = p, tn
        return x * y, tx * y + x * ty

    return t, m, f, g, h


def _cases(t, m, f, g, h):
    grad, jvp, vjp, jit, vmap = t.grad, t.jvp, t.vjp, t.jit, t.vmap
    xs = m.arange(3.0)
    return {
        "eager": lambda: (f(3.0), g(3.0)),
        "vmap": lambda: (vmap(f)(xs), vmap(g)(xs)),
        "jit": lambda: jit(f)(3.0),
        "jvp": lambda: jvp(f, (3.0,), (1.0,)),
        "grad": lambda: grad(f)(3.0),
        "grad_grad": lambda: grad(grad(f))(3.0),
        "grad_grad_grad": lambda: grad(grad(grad(f)))(3.0),
        "vjp": lambda: vjp(f, 3.0)[1](1.0),
        "linearize": lambda: t.linearize(f, 3.0)[1](1.0),
        "grad_jit": lambda: grad(jit(f))(3.0),
        "jit_grad": lambda: jit(grad(f))(3.0),
        "jit_grad_grad": lambda: jit(grad(grad(f)))(3.0),
        "grad_vmap": lambda: grad(lambda x: vmap(f)(x).sum())(xs),
        "vmap_grad": lambda: vmap(grad(f))(xs),
        "jvp_grad": lambda: jvp(grad(f), (3.0,), (1.0,)),
        "grad_jvp": lambda: grad(lambda x: jvp(f, (x,), (1.0,))[1])(3.0),
        "grad_twice": lambda: grad(lambda x: f(x) + f(2 * x))(3.0),
        "grad_of_constant_call": lambda: grad(lambda x: f(2.0) * x)(3.0),
        "grad_stop_gradient": lambda: grad(lambda x: f(t.lax.stop_gradient(x)) * x)(3.0),
        "grad_nested_calls": lambda: grad(lambda x: f(f(x)))(3.0),
        "jacfwd": lambda: t.jacfwd(f)(3.0),
        "jacrev": lambda: t.jacrev(f)(3.0),
        "hessian": lambda: t.hessian(f)(3.0),
        "grad_cond": lambda: grad(lambda x: t.lax.cond(True, f, m.cos, x))(3.0),
        "grad_checkpoint": lambda: grad(t.checkpoint(f))(3.0),
        "grad_argnum1": lambda: grad(h, 1)(2.0, 3.0),
        "jvp_rule_only": lambda: jvp(h, (2.0, 3.0), (1.0, 0.0)),
        "vmap_jvp": lambda: vmap(lambda x: jvp(f, (x,), (1.0,)))(xs),
        "jvp_vmap": lambda: jvp(vmap(f), (xs,), (m.ones(3),)),
        "vjp_grad": lambda: grad(g)(3.0),
        "vjp_only": lambda: vjp(g, 3.0)[0],
        "vjp_applied": lambda: vjp(g, 3.0)[1](1.0),
        "vjp_jvp_error": lambda: jvp(g, (3.0,), (1.0,)),
        "vjp_grad_jit": lambda: grad(jit(g))(3.0),
        "vjp_jit_grad": lambda: jit(grad(g))(3.0),
        "vjp_grad_vmap": lambda: grad(lambda x: vmap(g)(x).sum())(xs),
        "vjp_vmap_grad": lambda: vmap(grad(g))(xs),
        "vjp_grad_grad": lambda: grad(grad(g))(3.0),
        "vjp_jacrev": lambda: t.jacrev(g)(3.0),
        "vjp_nested_calls": lambda: grad(lambda x: g(g(x)))(3.0),
        "vjp_then_jvp_rule": lambda: grad(lambda x: f(g(x)))(3.0),
        "vjp_of_constant_call": lambda: grad(lambda x: g(2.0) * x)(3.0),
        "vjp_grad_checkpoint": lambda: grad(t.checkpoint(g))(3.0),
    }


def _run(which, case):
    log: list[str] = []
    t, m, f, g, h = _make(which, log)
    try:
        out = _cases(t, m, f, g, h)[case]()
    except TypeError as e:  # jvp of a custom_vjp function: both raise, after fwd ran
        return log, type(e).__name__
    return log, jax.tree_util.tree_map(np.asarray, out)


@pytest.mark.parametrize("case", list(_cases(jax, jnp, *(None,) * 3)))
def test_same_python_calls_as_jax(case):
    got_log, got = _run("fg", case)
    want_log, want = _run("jax", case)
    assert got_log == want_log
    if isinstance(want, str):
        assert got == want
    else:
        jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6), got, want)


def test_rule_sees_known_tangents_under_jvp():
    """At an eager ``jvp`` the rule's tangents are the given values (JAX's rule sees
    concrete tangents there): a malformed rule's error shows them."""
    seen = {}
    for which in ("fg", "jax"):
        t, _ = _lib(which)

        @t.custom_jvp
        def f(x):
            return x * 2.0

        def f_jvp(p, tn, which=which):
            seen[which] = float(tn[0])
            return f(p[0]), tn[0] * 2.0

        f.defjvp(f_jvp)
        t.jvp(f, (1.0,), (0.25,))
    assert seen["fg"] == seen["jax"] == 0.25
