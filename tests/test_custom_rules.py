"""Custom derivative rules as JAX has them: defjvps, symbolic zeros, nondiff
argnames, keyword arguments, self-calling linear rules, closures over outer
tracers and structure errors. JAX's custom_jvp/custom_vjp are the oracle."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import jax_oracle as jo
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
    _close(fg.grad(f, (0, 1))(2.0, 3.0), jo.grad(g, (0, 1))(2.0, 3.0))
    _close(fg.jvp(f, (2.0, 3.0), (1.0, 0.5)), jo.jvp(g, (2.0, 3.0), (1.0, 0.5)))
    x = np.linspace(0, 1, 3, dtype=np.float32)
    _close(fg.vmap(fg.grad(f))(x, x), jo.vmap(jo.grad(g))(x, x))


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
    _close(fg.grad(f)(2.0, 3.0), jo.grad(g)(2.0, 3.0))
    assert seen["fg"] == seen["jax"] == (False, True)
    _close(fg.jvp(f, (2.0, 3.0), (1.0, 1.0)), jo.jvp(g, (2.0, 3.0), (1.0, 1.0)))
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
    _close(fg.grad(f)(2.0, 3.0), jo.grad(g)(2.0, 3.0))

    def plain(which):
        t, m, _ = _lib(which)

        @t.custom_vjp
        def h(x):
            return m.sin(x)

        h.defvjp(lambda x: (h(x), x), lambda x, ct: (m.cos(x) * ct,), optimize_remat=True)
        return h

    _close(fg.grad(plain("fg"))(2.0), jo.grad(plain("jax"))(2.0))


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
        jo.grad(lambda x: g(x, scale=3.0, power=2))(2.0),
    )
    _close(
        fg.grad(f, (0, 1))(2.0, 3.0, 3),
        jo.grad(g, (0, 1))(2.0, 3.0, 3),
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
    _close(fg.grad(loss_f)(x), jo.grad(loss_g)(x))
    _close(fg.jvp(f, (x,), (x,)), jo.jvp(g, (x,), (x,)))
    _close(fg.hessian(loss_f)(x), jo.hessian(loss_g)(x))
    _close(fg.vmap(fg.grad(loss_f))(np.stack([x, x])), jo.vmap(jo.grad(loss_g))(np.stack([x, x])))
    _close(fg.jacrev(f)(x), jo.jacrev(g)(x))


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
    _close(fg.vmap(make("fg"))(a), jo.vmap(make("jax"))(a))
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
    with pytest.raises(jerr.type, match=r"structure|length|pair|scalar-output") as ferr:
        _structure_cases("fg")[case]()
    # (under grad JAX runs fwd alone, never the function: a fwd giving a pair where the
    # function gives one value fails as a non-scalar output, in both)
    assert str(jerr.value).split(" ")[0] in str(ferr.value)


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
            jo.grad(lambda x: jax.checkpoint(g, static_argnums=1)(x, 2))(1.0),
        )
    assert len(calls) == 1
    _close(fg.grad(lambda x: fg.checkpoint(f, static_argnums=(1,))(x, 1))(1.0), 1.0)
    _close(
        fg.grad(lambda x: fg.remat(fnp.sin, policy=None, prevent_cse=False)(x))(1.0),
        np.cos(1.0),
    )
    with pytest.raises(TypeError):
        fg.checkpoint(3)
    with pytest.raises(ValueError):
        jax.checkpoint(g, static_argnums=3)(1.0, 2)
    with pytest.raises(ValueError):
        fg.checkpoint(f, static_argnums=3)(1.0, 2)
    # keyword arguments are traced (differentiable), as in JAX; a static value that
    # compares equal but has another type is traced again
    kw_f = lambda x, *, y=2.0: fnp.sin(x) * y
    kw_g = lambda x, *, y=2.0: jnp.sin(x) * y
    _close(
        fg.grad(lambda y: fg.checkpoint(kw_f)(1.0, y=y))(3.0),
        jo.grad(lambda y: jax.checkpoint(kw_g)(1.0, y=y))(3.0),
    )
    _close(fg.checkpoint(kw_f)(1.0), jax.checkpoint(kw_g)(1.0))
    typed = lambda x, k: x * 2 if isinstance(k, bool) else x * 3
    assert float(fg.checkpoint(typed, static_argnums=1)(1.0, 1)) == 3.0
    assert float(fg.checkpoint(typed, static_argnums=1)(1.0, True)) == 2.0


def test_rule_closing_over_vmap_tracer_under_jvp():
    """A custom_jvp defined inside vmap whose rule closes over the batched value,
    differentiated from outside (forward mode, twice) and in reverse mode."""

    def make(which):
        t, m, _ = _lib(which)

        def h(z):
            def f(x):
                @t.custom_jvp
                def g(y):
                    return m.sin(x * y)

                g.defjvp(lambda p, tans: (g(*p), m.cos(x * p[0]) * x * tans[0]))
                return g(z)  # no batched argument: the batched value is only closed over

            return t.vmap(f)(m.arange(1.0, 4.0, dtype="float32"))

        return h

    f, g = make("fg"), make("jax")
    z, dz = np.float32(0.5), np.float32(2.0)
    _close(fg.jvp(f, (z,), (dz,)), jo.jvp(g, (z,), (dz,)))
    _close(fg.jacrev(f)(z), jo.jacrev(g)(z))
    inner_f = lambda z: fg.jvp(f, (z,), (dz,))[1]
    inner_g = lambda z: jo.jvp(g, (z,), (dz,))[1]
    _close(fg.jvp(inner_f, (z,), (dz,)), jo.jvp(inner_g, (z,), (dz,)))


def test_rule_closing_over_jvp_tracer_under_jvp_of_jvp():
    """The rule closes over a value of an outer jvp (itself under a jvp, and under
    grad) that is used after the inner jvp ended. JAX refuses a rule closing over a
    jvp tracer, so the oracle is JAX on the same function without the custom rule:
    the rule is the exact derivative, and the closed-over value carries no tangent
    into the rule (stop_gradient) in both."""

    def make(custom):
        t, m = (fg, fnp) if custom else (jax, jnp)

        def outer(a):
            c = t.lax.stop_gradient(a * a)

            def body(y):
                return m.sin(y) * c

            if custom:
                f = t.custom_jvp(body)
                f.defjvp(lambda p, tans: (f(*p), m.cos(p[0]) * c * tans[0]))
            else:
                f = body
            y = a * 2.0
            return t.jvp(f, (y,), (a,))[1] + f(y) * a

        return outer

    f, g = make(True), make(False)
    a, da = np.float32(0.7), np.float32(1.5)
    _close(fg.jvp(f, (a,), (da,)), jo.jvp(g, (a,), (da,)))
    ff = lambda a: fg.jvp(f, (a,), (da,))[1]
    gg = lambda a: jo.jvp(g, (a,), (da,))[1]
    _close(fg.jvp(ff, (a,), (da,)), jo.jvp(gg, (a,), (da,)))
    _close(fg.grad(ff)(a), jo.grad(gg)(a))
    _close(fg.grad(fnp.cos)(1.0), np.float32(-np.sin(1.0)))  # nothing leaked


@pytest.mark.parametrize("capture", ["bwd", "fwd"])
def test_custom_vjp_rules_closing_over_outer_tracers(capture):
    """fwd returning, or bwd capturing, a value of an enclosing jit/vmap/grad."""

    def make(which):
        t, m, _ = _lib(which)

        def f(y):
            @t.custom_vjp
            def h(x):
                return 2.0 * m.sin(x)

            if capture == "bwd":
                h.defvjp(lambda x: (h(x), ()), lambda _, g: (2.0 * m.cos(y) * g,))
            else:
                h.defvjp(lambda x: (h(x), y), lambda r, g: (2.0 * m.cos(r) * g,))
            return t.grad(h)(np.float32(1.0))

        return f, t

    (f, t1), (g, t2) = make("fg"), make("jax")
    xs = np.arange(3.0, dtype=np.float32)
    _close(t1.jit(f)(np.float32(2.0)), t2.jit(g)(np.float32(2.0)))
    _close(t1.vmap(f)(xs), t2.vmap(g)(xs))
    _close(t1.jit(t1.vmap(f))(xs), t2.jit(t2.vmap(g))(xs))
    _close(t1.vmap(t1.jit(f))(xs), t2.vmap(t2.jit(g))(xs))
    _close(t1.grad(f)(np.float32(4.0)), t2.grad(g)(np.float32(4.0)))


@pytest.mark.parametrize("capture", ["fwd_residual", "bwd"])
def test_custom_vjp_inside_vmap_differentiated_outside(capture):
    """fwd returns the batched value as a residual (JAX supports this), or bwd
    closes over it (JAX raises UnexpectedTracerError; funcgrad computes the same
    derivative as the residual form)."""

    def make(which, capture):
        t, m, _ = _lib(which)

        def h(z):
            def f(x):
                @t.custom_vjp
                def g(y):
                    return m.sin(x * y)

                if capture == "bwd":
                    g.defvjp(lambda y: (g(y), y), lambda r, ct: (m.cos(x * r) * x * ct,))
                else:
                    g.defvjp(
                        lambda y: (g(y), (y, x * 1.0)),
                        lambda r, ct: (m.cos(r[1] * r[0]) * r[1] * ct,),
                    )
                return g(z)

            return t.vmap(f)(m.arange(1.0, 4.0, dtype="float32")).sum()

        return h

    z = np.float32(0.5)
    f, g = make("fg", capture), make("jax", "fwd_residual")
    _close(fg.grad(f)(z), jo.grad(g)(z))
    _close(fg.vjp(f, z)[1](np.float32(1.0)), jax.vjp(g, z)[1](np.float32(1.0)))
    zs = np.linspace(0.1, 0.5, 3, dtype=np.float32)
    _close(fg.vmap(fg.grad(f))(zs), jo.vmap(jo.grad(g))(zs))
    if capture == "bwd":
        with pytest.raises(jax.errors.UnexpectedTracerError):
            jo.grad(make("jax", "bwd"))(z)


# --------------------------------------------------------------------------- vjp runs bwd late


def _counted_custom_vjp(which, runs):
    t, m, _ = _lib(which)

    @t.custom_vjp
    def f(x, y):
        return m.sin(x) * y

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, ct):
        runs[which] += 1
        x, y = res
        return ct * m.cos(x) * y, ct * m.sin(x)

    f.defvjp(fwd, bwd)
    return f


def test_vjp_runs_bwd_only_when_applied():
    runs = {"fg": 0, "jax": 0}
    f, g = _counted_custom_vjp("fg", runs), _counted_custom_vjp("jax", runs)
    x, y = np.float32(0.7), np.float32(1.3)
    (of, fnf), (og, fng) = fg.vjp(f, x, y), jax.vjp(g, x, y)
    _close(of, og)
    assert runs == {"fg": 0, "jax": 0}
    _close(fnf(np.float32(1.0)), fng(np.float32(1.0)))
    assert runs == {"fg": 1, "jax": 1}
    _close(fnf(np.float32(2.0)), fng(np.float32(2.0)))
    assert runs == {"fg": 2, "jax": 2}
    # the returned function is applied under transforms too
    _close(fg.jit(fnf)(np.float32(3.0)), jax.jit(fng)(np.float32(3.0)))
    cs = np.linspace(1, 2, 3, dtype=np.float32)
    _close(fg.vmap(fnf)(cs), jo.vmap(fng)(cs))
    _close(
        fg.grad(lambda c: fnf(c)[0] ** 2)(np.float32(2.0)),
        jo.grad(lambda c: fng(c)[0] ** 2)(np.float32(2.0)),
    )
    # ... and inside a composite: vjp of a function of a custom_vjp, jacrev
    h = lambda x: fnp.tanh(f(x, x) * 2.0)
    k = lambda x: jnp.tanh(g(x, x) * 2.0)
    _close(fg.vjp(h, x)[1](np.float32(1.0)), jax.vjp(k, x)[1](np.float32(1.0)))
    xs = np.linspace(0.1, 0.9, 4, dtype=np.float32)
    _close(fg.jacrev(h)(xs), jo.jacrev(k)(xs))


def test_vjp_bwd_reads_values_and_errors_when_applied():
    """bwd with Python control flow on a residual (JAX runs it eagerly); a broken
    bwd raises when the vjp function is applied, not when vjp is called."""

    def make(which, broken=False):
        t, m, _ = _lib(which)

        @t.custom_vjp
        def f(x):
            return m.sin(x)

        def bwd(x, g):
            if broken:
                return (g, g)
            return (2 * g,) if x > 0 else (3 * g,)

        f.defvjp(lambda x: (f(x), x), bwd)
        return f

    for x in (2.0, -2.0):
        _close(fg.value_and_grad(make("fg"))(x), jo.value_and_grad(make("jax"))(x))
        _close(fg.vjp(make("fg"), x)[1](1.0), jax.vjp(make("jax"), x)[1](1.0))
    _, fn = fg.vjp(make("fg", broken=True), 1.0)
    _, gn = jax.vjp(make("jax", broken=True), 1.0)
    with pytest.raises(TypeError) as jerr:
        gn(1.0)
    with pytest.raises(jerr.type, match="length"):
        fn(1.0)


def test_vjp_of_vmap_called_twice():
    def make(which):
        t, _, _ = _lib(which)

        @t.custom_vjp
        def f(x):
            return x

        f.defvjp(lambda x: (x, None), lambda _, y_bar: (y_bar * 2.0,))
        return t.vmap(f)

    x = np.array([3.0, 4.0], np.float32)
    _, fn = fg.vjp(make("fg"), x)
    _, gn = jax.vjp(make("jax"), x)
    _close(fn(x), gn(x))
    _close(fn(x), gn(x))


# --------------------------------------------------------------------------- bwd outputs


def _bwd_output_cases(which):
    t, m, _ = _lib(which)

    @t.custom_vjp
    def f(x, y):
        return x * m.sin(y)

    f.defvjp(lambda x, y: (f(x, y), m.cos(y)), lambda cos, g: (None, 2 * cos * g))

    @t.custom_vjp
    def first(x):
        return x[0]

    first.defvjp(lambda x: (first(x), None), lambda _, g: ((g, (None, None)),))

    @t.custom_vjp
    def prod(x, y):
        return x * y

    prod.defvjp(lambda x, y: (prod(x, y), (x, y)), lambda r, g: [g * r[1], r[0] * g])

    @t.custom_vjp
    def with_int(i, x):
        return m.sin(x) * 2.0

    with_int.defvjp(lambda i, x: (with_int(i, x), m.cos(x)), lambda c, g: (None, 2 * c * g))

    xs = np.arange(3.0, dtype=np.float32)
    return {
        "none": lambda: t.grad(lambda x: f(x, x))(3.0),
        "none_vmap": lambda: t.grad(lambda x: t.vmap(f)(x, x).sum())(xs),
        "nones_in_subtree": lambda: t.grad(first)((1.0, (2.0, 3.0))),
        "list": lambda: t.grad(prod, (0, 1))(1.0, 2.0),
        "int_arg": lambda: t.grad(with_int, 1)(np.array([1, 2]), 3.0),
        "vjp_none": lambda: t.vjp(lambda x: f(x, x), 3.0)[1](1.0),
    }


@pytest.mark.parametrize("case", sorted(_bwd_output_cases("jax")))
def test_bwd_outputs_as_jax(case):
    _close(_bwd_output_cases("fg")[case](), _bwd_output_cases("jax")[case]())


@pytest.mark.parametrize("case", range(5))
def test_symbolic_zero_perturbed_and_cotangents(case):
    """JAX's symbolic-zero protocol for custom_vjp: which primals are perturbed and
    which output cotangents arrive as SymbolicZero, under jit, jacrev and vjp."""
    logs: dict = {"fg": [], "jax": []}

    def run(which):
        t, _, cd = _lib(which)

        @t.custom_vjp
        def f(x, y, z):
            return x, x

        def fwd(x, y, z):
            logs[which].append(("fwd", x.perturbed, y.perturbed, z.perturbed))
            return (x.value, x.value), None

        def bwd(_, g):
            logs[which].append(("bwd", *(isinstance(c, cd.SymbolicZero) for c in g)))
            x1, x2 = g
            return x1, x1, x2

        f.defvjp(fwd, bwd, symbolic_zeros=True)
        x, y, z = np.float32(4.0), np.float32(5.0), np.float32(6.0)
        h = t.jit(f)
        return [
            lambda: t.jacrev(h)(x, y, z),
            lambda: t.jacrev(lambda x: h(x, y, z))(x),
            lambda: t.vjp(lambda *xs: f(*xs)[0], x, y, z)[1](x),
            lambda: t.vjp(lambda *xs: f(*xs)[1], x, y, z)[1](x),
            lambda: t.vjp(lambda x: f(x, y, z)[1], x)[1](x),
        ][case]()

    _close(run("fg"), run("jax"))
    assert logs["fg"] == logs["jax"]


def test_keyword_arguments_resolved_as_jax():
    def make(which):
        t, m, _ = _lib(which)

        @t.custom_jvp
        def f(x, y, c=1.0):
            return c * (x + y)

        f.defjvp(lambda p, tans: (f(*p), p[2] * (tans[0] + tans[1]) + tans[2]))

        @t.custom_vjp
        def g(x, scale=2.0):
            return m.sin(x) * scale

        g.defvjp(
            lambda x, scale: (g(x, scale), (x, scale)),
            lambda r, ct: (m.cos(r[0]) * r[1] * ct, m.sin(r[0]) * ct),
        )

        @t.custom_jvp
        def kwonly(x, y, *, z=None):
            return m.sin(x) + y

        kwonly.defjvp(lambda p, tans: (kwonly(*p), m.cos(p[0]) * tans[0] + tans[1]))
        return f, g, kwonly, t

    (f1, g1, k1, t1), (f2, g2, k2, t2) = make("fg"), make("jax")
    _close(
        t1.jvp(lambda x: f1(x, 5.0), (1.0,), (1.0,)), t2.jvp(lambda x: f2(x, 5.0), (1.0,), (1.0,))
    )
    _close(
        t1.grad(lambda x: f1(x, 5.0, c=2.0) ** 2)(1.0),
        t2.grad(lambda x: f2(x, 5.0, c=2.0) ** 2)(1.0),
    )
    _close(t1.grad(g1)(0.3), t2.grad(g2)(0.3))
    _close(t1.grad(lambda x: g1(x, scale=3.0))(0.3), t2.grad(lambda x: g2(x, scale=3.0))(0.3))
    _close(t1.grad(k1)(0.3, 1.0), t2.grad(k2)(0.3, 1.0))
    for fn1, fn2 in ((k1, k2), (g1, g2)):
        for args, kw in (((0.5,), {}), ((0.5, 0.1), {"z": 1.0})):
            if fn1 is g1 and not kw:
                continue
            with pytest.raises(TypeError) as jerr:
                fn2(*args, **kw)
            with pytest.raises(TypeError) as ferr:
                fn1(*args, **kw)
            jmsg, fmsg = str(jerr.value).splitlines()[-1], str(ferr.value).splitlines()[-1]
            assert fmsg == jmsg


# --------------------------------------------------------------------------- JAX's scenarios


def _scenarios(which):
    t, m, cd = _lib(which)

    def nondiff_vmap_tracer():
        @functools.partial(t.custom_jvp, nondiff_argnums=(0,))
        def f(x, y):
            return x * y

        f.defjvp(lambda x, p, tn: (f(x, *p), 5 * tn[0]))
        g = t.vmap(f)
        return t.jvp(lambda y: g(m.array([2.0]), y), (m.array([3.0]),), (m.array([1.0]),))

    def nested_calls():
        def call(f, *args):
            f = t.custom_jvp(f)
            f.defjvp(lambda primals, tangents: (f(*primals), sum(tangents)))
            return f(*args)

        def fun(x):
            def bar(y):
                def baz(w):
                    q = call(lambda x: y, x)
                    q = q + call(lambda: y)
                    q = q + call(lambda y: w + y, y)
                    return call(lambda w: call(m.sin, x) * y, 1.0) + q

                return t.jit(baz)(x)

            return call(bar, x)

        return t.jit(fun)(3.0), fun(3.0), t.vmap(fun)(m.arange(3.0))

    def remat_custom_jvp():
        @t.custom_jvp
        def f(x):
            return m.sin(x)

        f.defjvp(lambda p, tn: (f(p[0]), 2 * m.cos(p[0]) * tn[0]))
        g = lambda x: f(f(x))
        return (
            t.grad(t.checkpoint(g))(2.0),
            t.grad(t.grad(t.checkpoint(g)))(2.0),
            t.grad(t.checkpoint(t.grad(g)))(2.0),
            t.grad(t.grad(t.grad(t.checkpoint(g))))(2.0),
        )

    def remat_custom_vjp():
        @t.custom_vjp
        def f(x):
            return m.sin(x)

        f.defvjp(lambda x: (f(x), m.cos(x)), lambda c, g: (2 * c * g,))

        @functools.partial(t.custom_vjp, nondiff_argnums=(0,))
        def h(n, x):
            return m.sin(x) * n

        h.defvjp(lambda n, x: (h(n, x), m.cos(x)), lambda n, c, g: (n * c * g,))
        return (
            t.grad(t.checkpoint(lambda x: f(f(x))))(2.0),
            t.grad(t.remat(lambda x: f(x) ** 2))(3.2),
            t.grad(t.checkpoint(lambda x: h(3, x)))(2.0),
        )

    def symbolic_zero_jvp():
        log = []

        @t.custom_jvp
        def f(x, y):
            return x * y, x + y

        def rule(p, tn):
            log.append(tuple(type(v) is cd.SymbolicZero for v in tn))
            (x, y), (tx, ty) = p, tn
            tx = m.zeros_like(x) if type(tx) is cd.SymbolicZero else tx
            ty = m.zeros_like(y) if type(ty) is cd.SymbolicZero else ty
            return f(x, y), (tx * y + x * ty, tx + ty)

        f.defjvp(rule, symbolic_zeros=True)
        out = [
            t.jvp(lambda x: f(x, 2.0), (3.0,), (1.0,)),
            t.jvp(f, (3.0, 2.0), (1.0, 1.0)),
            t.grad(lambda y: f(3.0, y)[0])(2.0),
            t.jit(t.grad(lambda x: f(x, 2.0)[1]))(3.0),
            t.vmap(t.grad(lambda x: f(x, 2.0)[0]))(m.arange(3.0)),
        ]
        return out, log

    def vjp_with_aux_and_jacrev():
        @t.custom_vjp
        def f(x):
            return m.sin(x)

        f.defvjp(lambda x: (f(x), x), lambda x, g: (m.cos(x) * g * 2,))
        out, fn, aux = t.vjp(lambda x: (f(x) * 2, x + 1), 1.0, has_aux=True)
        return out, fn(1.0), aux, t.jacrev(lambda x: f(x) * x)(m.arange(3.0))

    def custom_vjp_in_scan():
        @t.custom_vjp
        def f(x):
            return m.sin(x)

        f.defvjp(lambda x: (f(x), x), lambda x, g: (m.cos(x) * g * 2,))

        def loss(x):
            return t.lax.scan(lambda c, _: (f(c), None), x, None, length=3)[0]

        return t.grad(loss)(1.0), t.vjp(loss, 1.0)[1](1.0)

    def linear_self_call_under_jit():
        @t.custom_jvp
        def f(x):
            return 2.0 * x

        f.defjvp(lambda p, tn: (f(*p), f(*tn)))
        return (
            t.grad(t.jit(lambda x: f(f(x)) ** 2))(1.5),
            t.jit(t.grad(lambda x: f(x) ** 3))(1.5),
            t.jacrev(t.jacrev(lambda x: f(x) ** 3))(1.5),
        )

    return {
        f.__name__: f
        for f in (
            nondiff_vmap_tracer,
            nested_calls,
            remat_custom_jvp,
            remat_custom_vjp,
            symbolic_zero_jvp,
            vjp_with_aux_and_jacrev,
            custom_vjp_in_scan,
            linear_self_call_under_jit,
        )
    }


@pytest.mark.parametrize("name", sorted(_scenarios("jax")))
def test_jax_scenarios(name):
    _close(_scenarios("fg")[name](), _scenarios("jax")[name]())


def test_bwd_cotangent_shape_mismatch():
    def run(which):
        t, m, _ = _lib(which)

        @t.custom_vjp
        def foo(x, y):
            return x

        foo.defvjp(lambda x, y: (x, None), lambda _, g: (m.zeros(3), m.zeros(3)))
        return t.grad(lambda x, y: foo(x, y * y).sum(), 1)(m.ones(3), m.ones(4))

    with pytest.raises(ValueError, match=r"output\[1\].*float\d+\[3\].*float\d+\[4\]"):
        run("jax")
    with pytest.raises(ValueError, match=r"output\[1\].*float\d+\[3\].*float\d+\[4\]"):
        run("fg")


def test_pytree_rules_and_unused_outputs():
    """Rules over namedtuples and dicts; an output that receives no cotangent
    contributes nothing (a zero, +0.0, not a product with zero: JAX's sign)."""
    import collections

    point = collections.namedtuple("point", ["x", "y"])

    def make(which):
        t, m, _ = _lib(which)

        @t.custom_jvp
        def fj(pt):
            return {"a": pt.x**2, "b": (m.sin(pt.x), m.cos(pt.y))}

        @fj.defjvp
        def _(primals, tangents):
            (pt,), (pd,) = primals, tangents
            dot = {"a": 2 * pt.x * pd.x, "b": (m.cos(pt.x) * pd.x, -m.sin(pt.y) * pd.y)}
            return fj(pt), dot

        @t.custom_vjp
        def fv(pt):
            return {"a": pt.x**2, "b": (m.sin(pt.x), m.cos(pt.y))}

        def bwd(pt, g):
            a, (b0, b1) = g["a"], g["b"]
            return (point(2 * pt.x * a + m.cos(pt.x) * b0, -m.sin(pt.y) * b1),)

        fv.defvjp(lambda pt: (fv(pt), pt), bwd)
        loss = lambda f: lambda pt: f(pt)["a"] + f(pt)["b"][0]
        pt = point(1.0, 2.0)
        return fj(pt), fv(pt), t.grad(loss(fj))(pt), t.grad(loss(fv))(pt)

    got, want = make("fg"), make("jax")
    _close(got, want)
    signs = lambda tree: [bool(np.signbit(x)) for x in jax.tree_util.tree_leaves(tree)]
    assert signs(got[2:]) == signs(want[2:])


def test_outside_transforms_the_function_runs_as_is():
    """Called with no transform active, a custom function is its body (Python
    scalars in, Python scalars out where the body keeps them), rules untouched."""
    calls = {"fg": [], "jax": []}

    def make(which):
        t, _, _ = _lib(which)

        @t.custom_jvp
        def f(x):
            calls[which].append("f")
            return x**2

        @f.defjvp
        def _(p, tn):
            calls[which].append("jvp")
            return f(p[0]), 2 * p[0] * tn[0]

        @t.custom_vjp
        def g(x):
            calls[which].append("g")
            return x * 3

        g.defvjp(lambda x: (g(x), None), lambda _, ct: (3 * ct,))
        return f(3.0), g(2.0), t.jvp(f, (3.0,), (1.0,))

    got, want = make("fg"), make("jax")
    assert type(got[0]) is type(want[0]) is float and type(got[1]) is float
    _close(got, want)
    assert calls["fg"][:2] == calls["jax"][:2] == ["f", "g"]


def test_jvp_of_custom_vjp_error():
    def run(which):
        t, m, _ = _lib(which)

        @t.custom_vjp
        def f(x):
            return m.sin(x)

        f.defvjp(lambda x: (f(x), x), lambda x, g: (m.cos(x) * g,))
        with pytest.raises(TypeError) as err:
            t.jvp(f, (3.0,), (1.0,))
        return str(err.value).splitlines()[0]

    assert run("fg") == run("jax")


def test_custom_derivatives_helpers():
    x = np.ones((2, 3), np.float32)
    for which in ("fg", "jax"):
        cd = _lib(which)[2]
        z = cd.SymbolicZero.from_primal_value(x)
        assert (repr(z), z.shape, z.ndim, z.size, z.dtype) == (
            "SymbolicZero",
            (2, 3),
            2,
            6,
            x.dtype,
        )
        zs = cd.zero_from_primal({"a": x, "b": (x[0],)}, symbolic_zeros=True)
        assert all(type(v) is cd.SymbolicZero for v in jax.tree_util.tree_leaves(zs))
    _close(
        fg.custom_derivatives.zero_from_primal({"a": x, "b": 1.0}),
        jax.custom_derivatives.zero_from_primal({"a": x, "b": 1.0}),
    )

    def make(which):
        t, m, cd = _lib(which)

        @t.custom_vjp
        def f(x, y):
            return m.sin(x) * y[0]

        def fwd(x, y):
            x, y = cd.custom_vjp_primal_tree_values((x, y))
            return f(x, y), (x, y)

        f.defvjp(fwd, lambda r, g: (m.cos(r[0]) * r[1][0] * g, (None,)), symbolic_zeros=True)
        return f

    _close(fg.grad(make("fg"))(1.0, (2.0,)), jo.grad(make("jax"))(1.0, (2.0,)))


@pytest.mark.parametrize("rule", ["relu", "softplus", "weak_scale"])
def test_reverse_mode_transposes_the_rule_linearized_in_the_forward(rule):
    """The backward of a one-output ``custom_jvp`` function transposes its rule's tangent
    map, linearized in the forward (JAX's partial evaluation): it never runs the function
    again, and the gradient is JAX's."""

    def make(t, m):
        if rule == "relu":

            @t.custom_jvp
            def f(x):
                return m.where(x < 0, 0.0, x)

            f.defjvps(lambda g, ans, x: m.where(ans <= 0, 0.0, g))
        elif rule == "softplus":

            @t.custom_jvp
            def f(x):
                return m.logaddexp(x, 0.0)

            f.defjvps(lambda g, ans, x: g / (1.0 + m.exp(-x)))
        else:  # a rule whose tangent is wider than the output (a weakly typed factor)

            @t.custom_jvp
            def f(x):
                return x * 3

            f.defjvps(lambda g, ans, x: g * 3.0)
        return f

    f = make(fg, fnp)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    prog = fg.make_ir(f)(x)
    vp = fg.ad.vjp_program(prog)
    bwd_prims = {e.prim.name for e in vp.bwd.eqns}
    assert "custom_jvp_call" not in bwd_prims, vp.bwd
    assert [e.prim.name for e in vp.fwd.eqns].count("custom_jvp_call") == 1, vp.fwd
    got = fg.grad(lambda x: (f(x) * fnp.arange(12.0).reshape(3, 4)).sum())(x)
    g = make(jax, jnp)
    want = jax.grad(lambda x: (g(x) * jnp.arange(12.0).reshape(3, 4)).sum())(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert np.asarray(got).dtype == np.float32
    # and under jit, vmap of the gradient: the same values
    per_row = fg.jit(fg.vmap(fg.grad(lambda r: f(r).sum())))(x)
    want_rows = jax.vmap(jax.grad(lambda r: g(r).sum()))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(per_row), np.asarray(want_rows), rtol=1e-6)
