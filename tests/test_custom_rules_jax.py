"""Custom derivative rules as JAX has them: defjvps, symbolic zeros, nondiff
argnames, keyword arguments, self-calling linear rules, closures over outer
tracers and structure errors. JAX's custom_jvp/custom_vjp are the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _close(a, b):
    jax.tree_util.tree_map(
        lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5), a, b
    )


def _lib(which):
    if which == "fg":
        return fg, fnp, fg.custom_derivatives
    return jax, jnp, jax.custom_derivatives


@pytest.mark.parametrize("none_second", [False, True])
def test_defjvps(none_second):
    def make(which):
        t, m, _ = _lib(which)

        @t.custom_jvp
        def f(x, y):
            return m.sin(x) * y

        second = None if none_second else (lambda y_dot, ans, x, y: m.sin(x) * y_dot)
        f.defjvps(lambda x_dot, ans, x, y: m.cos(x) * x_dot * y, second)
        return f

    f, g = make("fg"), make("jax")
    _close(fg.grad(f, (0, 1))(2.0, 3.0), jax.grad(g, (0, 1))(2.0, 3.0))
    _close(fg.jvp(f, (2.0, 3.0), (1.0, 0.5)), jax.jvp(g, (2.0, 3.0), (1.0, 0.5)))
    x = np.linspace(0, 1, 3, dtype=np.float32)
    _close(fg.vmap(fg.grad(f))(x, x), jax.vmap(jax.grad(g))(x, x))


def test_defjvp_symbolic_zeros():
    seen = {}

    def make(which):
        t, _, cd = _lib(which)

        @t.custom_jvp
        def f(x, y):
            return x * y

        def rule(p, tans):
            (x, y), (tx, ty) = p, tans
            seen[which] = (isinstance(tx, cd.SymbolicZero), isinstance(ty, cd.SymbolicZero))
            out = 0.0
            if not isinstance(tx, cd.SymbolicZero):
                out = out + tx * y
            if not isinstance(ty, cd.SymbolicZero):
                out = out + x * ty
            return f(x, y), out

        f.defjvp(rule, symbolic_zeros=True)
        return f

    f, g = make("fg"), make("jax")
    _close(fg.grad(f)(2.0, 3.0), jax.grad(g)(2.0, 3.0))
    assert seen["fg"] == seen["jax"] == (False, True)
    _close(fg.jvp(f, (2.0, 3.0), (1.0, 1.0)), jax.jvp(g, (2.0, 3.0), (1.0, 1.0)))
    assert seen["fg"] == seen["jax"] == (False, False)


def test_defvjp_symbolic_zeros_and_optimize_remat():
    def make(which):
        t, m, cd = _lib(which)

        @t.custom_vjp
        def f(x, y):
            return m.sin(x) * y

        def fwd(x, y):
            assert isinstance(x, cd.CustomVJPPrimal) and isinstance(y, cd.CustomVJPPrimal)
            return f(x.value, y.value), (x.value, y.value)

        def bwd(res, ct):
            x, y = res
            return (m.cos(x) * y * ct, None)  # None: a zero cotangent

        with pytest.raises(NotImplementedError):
            f.defvjp(fwd, bwd, symbolic_zeros=True, optimize_remat=True)
        f.defvjp(fwd, bwd, symbolic_zeros=True)
        return f

    f, g = make("fg"), make("jax")
    _close(fg.grad(f)(2.0, 3.0), jax.grad(g)(2.0, 3.0))

    def plain(which):
        t, m, _ = _lib(which)

        @t.custom_vjp
        def h(x):
            return m.sin(x)

        h.defvjp(lambda x: (h(x), x), lambda x, ct: (m.cos(x) * ct,), optimize_remat=True)
        return h

    _close(fg.grad(plain("fg"))(2.0), jax.grad(plain("jax"))(2.0))


def test_nondiff_argnames_and_keyword_arguments():
    def make(which):
        t, _, _ = _lib(which)

        def body(x, scale, power):
            return scale * x**power

        f = t.custom_jvp(body, nondiff_argnames=("power",))

        @f.defjvp
        def rule(power, p, tans):
            (x, scale), (tx, ts) = p, tans
            return f(x, scale, power), scale * power * x ** (power - 1) * tx + x**power * ts

        return f

    f, g = make("fg"), make("jax")
    _close(f(2.0, 3.0, power=3), g(2.0, 3.0, power=3))
    _close(
        fg.grad(lambda x: f(x, scale=3.0, power=2))(2.0),
        jax.grad(lambda x: g(x, scale=3.0, power=2))(2.0),
    )
    _close(
        fg.grad(f, (0, 1))(2.0, 3.0, 3),
        jax.grad(g, (0, 1))(2.0, 3.0, 3),
    )


def test_linear_rule_that_calls_its_own_function():
    """A linear function whose JVP applies the function to the tangents: JAX
    transposes its body; funcgrad must not recurse forever."""

    def make(which):
        t, m, _ = _lib(which)

        @t.custom_jvp
        def f(x):
            return 3.0 * x + m.flip(x)

        f.defjvp(lambda p, tans: (f(*p), f(*tans)))
        return f

    f, g = make("fg"), make("jax")
    x = np.arange(3.0, dtype=np.float32)
    loss_f = lambda x: (f(x) ** 2).sum()
    loss_g = lambda x: (g(x) ** 2).sum()
    _close(fg.grad(loss_f)(x), jax.grad(loss_g)(x))
    _close(fg.jvp(f, (x,), (x,)), jax.jvp(g, (x,), (x,)))
    _close(fg.hessian(loss_f)(x), jax.hessian(loss_g)(x))
    _close(fg.vmap(fg.grad(loss_f))(np.stack([x, x])), jax.vmap(jax.grad(loss_g))(np.stack([x, x])))
    _close(fg.jacrev(f)(x), jax.jacrev(g)(x))


def test_rules_closing_over_outer_tracers_do_not_leak():
    def make(which, with_vjp=True):
        t, m, _ = _lib(which)

        def outer(a):
            @t.custom_jvp
            def f(y):
                return m.sin(y) * a

            f.defjvp(lambda p, tans: (f(*p), m.cos(p[0]) * a * tans[0]))

            @t.custom_vjp
            def h(y):
                return y * a

            h.defvjp(lambda y: (h(y), None), lambda _, ct: (ct * a,))
            if not with_vjp:  # JAX's custom_vjp may not close over jvp/grad tracers
                return t.grad(f)(np.float32(2.0))
            return t.grad(lambda y: f(y) + h(y))(np.float32(2.0))

        return outer

    a = np.linspace(0.5, 1.5, 3, dtype=np.float32)
    _close(fg.vmap(make("fg"))(a), jax.vmap(make("jax"))(a))
    # JAX itself leaks a rule closing over an outer jvp/grad tracer: check against
    # the closed form instead, d/da cos(2) a = cos(2)
    one, c = np.float32(1.5), np.cos(np.float32(2.0))
    _close(fg.jvp(make("fg", False), (one,), (one,)), (c * one, c * one))
    _close(fg.grad(make("fg", False))(one), c)
    # the library is still usable afterwards (nothing leaked onto the stack)
    _close(fg.grad(fnp.sin)(1.0), np.cos(1.0))


def _structure_cases(which):
    t, m, _ = _lib(which)

    @t.custom_jvp
    def pair(x):
        return (x, x * 2)

    pair.defjvp(lambda p, tans: ((p[0], p[0] * 2), tans[0]))  # tangent not a pair

    @t.custom_jvp
    def wrong_primal(x):
        return x

    wrong_primal.defjvp(lambda p, tans: ((p[0], p[0]), (tans[0], tans[0])))

    @t.custom_vjp
    def bad_fwd(x):
        return x

    bad_fwd.defvjp(lambda x: ((x, x), None), lambda r, ct: (ct,))

    @t.custom_vjp
    def bad_bwd_len(x):
        return m.sin(x)

    bad_bwd_len.defvjp(lambda x: (m.sin(x), x), lambda r, ct: (ct, ct))

    @t.custom_vjp
    def bad_bwd_tree(x):
        return m.sin(x[0])

    bad_bwd_tree.defvjp(lambda x: (m.sin(x[0]), x), lambda r, ct: ({"a": ct},))
    return {
        "tangent_structure": lambda: t.jvp(pair, (1.0,), (1.0,)),
        "fwd_structure": lambda: t.grad(bad_fwd)(1.0),
        "bwd_length": lambda: t.grad(bad_bwd_len)(1.0),
        "bwd_structure": lambda: t.grad(lambda x: bad_bwd_tree((x,)))(1.0),
    }


@pytest.mark.parametrize("case", sorted(_structure_cases("jax")))
def test_structure_mismatches_are_type_errors(case):
    with pytest.raises(TypeError) as jerr:
        _structure_cases("jax")[case]()
    with pytest.raises(jerr.type, match=r"structure|length|pair") as ferr:
        _structure_cases("fg")[case]()
    assert "Custom" in str(ferr.value)


def test_checkpoint_arguments_and_no_retrace():
    calls = []

    def f(x, k):
        calls.append(1)
        return fnp.sin(x) * k if k > 1 else x  # branches on the static argument

    def g(x, k):
        return jnp.sin(x) * k if k > 1 else x

    for _ in range(3):  # a fresh checkpoint(f) each time: traced once
        _close(
            fg.grad(lambda x: fg.checkpoint(f, static_argnums=1)(x, 2))(1.0),
            jax.grad(lambda x: jax.checkpoint(g, static_argnums=1)(x, 2))(1.0),
        )
    assert len(calls) == 1
    _close(fg.grad(lambda x: fg.checkpoint(f, static_argnums=(1,))(x, 1))(1.0), 1.0)
    _close(
        fg.grad(lambda x: fg.remat(fnp.sin, policy=None, prevent_cse=False)(x))(1.0),
        np.cos(1.0),
    )
    with pytest.raises(TypeError):
        fg.checkpoint(3)
