"""Custom rules at their edges, as JAX has them: the errors JAX raises (a rule closing
over a value being differentiated, tracers as ``custom_vjp`` nondiff arguments,
malformed JVP rules, ``closure_convert`` called with another structure), ``None``
cotangents for parts of pytrees, ``float0`` tangents of integer inputs, ``jacrev``'s
``allow_int`` and the wrappers' function attributes. Each case runs on JAX and on
funcgrad: the same exception type and message pattern, or the same values."""

from __future__ import annotations

import copy
import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _lib(which):
    return (fg, fnp) if which == "fg" else (jax, jnp)


def _close(a, b):
    jax.tree_util.tree_map(
        lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6), a, b
    )


def _same_error(run, exc, pattern=None):
    """``run(which)`` raises ``exc`` (matching ``pattern``) on JAX and on funcgrad; an
    ``exc`` given by name is each library's ``errors.<name>``."""
    for which in ("jax", "fg"):
        e = getattr(_lib(which)[0].errors, exc) if isinstance(exc, str) else exc
        with pytest.raises(e, match=pattern):
            run(which)


def test_custom_jvp_rule_closing_over_a_differentiated_value():
    def run(which, transform):
        t, _ = _lib(which)

        def f(x):
            @t.custom_jvp
            def g(y):
                return x + y

            g.defjvp(lambda p, tn: (g(x), 2 * p[0]))
            return g(1.0)

        if transform == "jvp":
            return t.jvp(f, (3.0,), (1.0,))
        return t.grad(f)(3.0)

    for transform in ("jvp", "grad"):
        _same_error(lambda w: run(w, transform), "UnexpectedTracerError")
    with pytest.raises(fg.errors.UnexpectedTracerError, match="closes over a value that is being"):
        run("fg", "jvp")


def test_nondiff_argument_hiding_a_jvp_tracer():
    def run(which):
        t, _ = _lib(which)

        def f(x):
            @functools.partial(t.custom_jvp, nondiff_argnums=(0,))
            def g(h, x):
                return h(x)

            g.defjvp(lambda h, p, tn: (g(h, p[0]), 2.0 * tn[0]))
            return g(lambda y: x + y, x)

        return t.jvp(f, (2.0,), (1.0,))

    _same_error(run, "UnexpectedTracerError")


def test_closing_over_values_that_are_not_differentiated_still_works():
    """A vmap's batched value and a stop_gradient'ed value are not differentiated by the
    transform applying the rule: no error, JAX's values."""

    def run(which):
        t, m = _lib(which)

        def outer(x):
            c = t.lax.stop_gradient(x * x)

            @t.custom_vjp
            def f(y):
                return c * y

            f.defvjp(lambda y: (f(y), m.cos(y)), lambda cos_y, g: (cos_y * g * c,))
            return t.grad(f)(3.0) + t.grad(lambda y: f(y) * x)(2.0)

        return t.vmap(outer)(m.arange(3.0)), t.grad(outer)(1.5)

    _close(run("fg"), run("jax"))


def test_tracer_in_a_custom_vjp_nondiff_argument():
    def run(which, transform):
        t, m = _lib(which)

        @functools.partial(t.custom_vjp, nondiff_argnums=(0,))
        def f(x, y):
            return x * y

        f.defvjp(lambda x, y: (f(x, y), m.cos(y)), lambda x, cos_y, g: (cos_y * g,))
        g = t.jit(lambda x, y: f(x, y))
        return g(2, 3.0) if transform == "jit" else t.grad(g, 1)(2.0, 3.0)

    for transform in ("jit", "grad"):
        _same_error(lambda w: run(w, transform), "UnexpectedTracerError", "custom_vjp")


def _bad_jvp_rule(which, kind):
    t, m = _lib(which)

    @t.custom_jvp
    def f(x):
        return (x**2,) if kind == "tree" else x**2

    def foo_jvp(primals, tangents):
        (x,), (tn,) = primals, tangents
        if kind == "pair":
            return tn
        if kind == "tree":
            return f(x), [2 * x * tn, x]
        return f(x), m.reshape(tn, (1,))

    f.defjvp(foo_jvp)
    f(2.0)  # calling it is fine
    return t.jvp(f, (np.float32(2.0),), (np.float32(1.0),))


@pytest.mark.parametrize(
    "kind,pattern",
    [
        (
            "pair",
            "Custom JVP rule foo_jvp for function f must produce a pair (list or tuple of length "
            "two) representing primal and tangent outputs, but got 1.0",
        ),
        (
            "tree",
            "Custom JVP rule foo_jvp for function f must produce primal and tangent outputs "
            "with equal container (pytree) structures, but got PyTreeDef((*,)) and "
            "PyTreeDef([*, *]) respectively.",
        ),
        (
            "aval",
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
            "and dtypes. Expected float32[] (tangent type of float32[]) but got float32[1].",
        ),
    ],
)
def test_malformed_jvp_rules(kind, pattern):
    _same_error(lambda w: _bad_jvp_rule(w, kind), TypeError, re.escape(pattern))


def test_closure_convert_structure_mismatch():
    def run(which, bad):
        t, _ = _lib(which)
        _, vjp = t.vjp(lambda x, z: z * x, 2.0, 3.0)
        pure, aux = t.closure_convert(vjp, 2.0)
        return pure(2.0, aux) if bad else pure(2.0, *aux)

    _close(run("fg", False), run("jax", False))
    _same_error(
        lambda w: run(w, True),
        TypeError,
        "The inputs to the closure produced by closure_convert must have the same Pytree",
    )


def test_bwd_none_for_parts_of_a_pytree_argument():
    def run(which):
        t, _ = _lib(which)

        @t.custom_vjp
        def f(x):
            return x[0] * x[1][0]

        f.defvjp(lambda x: (f(x), x), lambda x, g: ((g * x[1][0], (None, None)),))
        return t.grad(f)((1.5, (2.0, None)))

    _close(run("fg"), run("jax"))


def test_bwd_array_for_a_pytree_node_serves_each_leaf():
    def run(which):
        t, _ = _lib(which)

        @t.custom_vjp
        def f(box, y):
            return box["a"] * box["b"] * y

        f.defvjp(lambda box, y: (f(box, y), (box, y)), lambda r, g: (r[1] * g, 2.0 * g))
        return t.grad(f, argnums=(0, 1))({"a": 3.0, "b": 4.0}, 5.0)

    _close(run("fg"), run("jax"))


def test_float0_tangents_of_integer_inputs_through_custom_rules():
    def run(which, style):
        t, m = _lib(which)
        scalar_float0 = m.zeros((), dtype=jax.dtypes.float0)
        assert scalar_float0.dtype == jax.dtypes.float0 and scalar_float0.shape == ()

        @t.custom_jvp
        def f(x, y):
            return x, y

        f.defjvp(lambda p, tn: (p, (2.0 * tn[0], t.custom_derivatives.zero_from_primal(p[1]))))
        g = f
        if style == "scan":
            g = lambda x, y: t.lax.scan(lambda c, _: (f(*c), None), (x, y), None, length=1)[0]
        return t.jvp(g, (np.float32(2.0), 3), (np.float32(1.0), scalar_float0))

    for style in ("direct", "scan"):
        (fp, ft), (jp, jt) = run("fg", style), run("jax", style)
        _close(fp, jp)
        _close(ft[0], jt[0])
        assert np.asarray(ft[1]).dtype == np.asarray(jt[1]).dtype == jax.dtypes.float0


def test_float0_cotangent_from_a_custom_vjp_bwd():
    def run(which):
        t, m = _lib(which)

        @t.custom_vjp
        def f(x):
            return x

        f.defvjp(
            lambda x: (x, (2.0, x)),
            lambda r, g: ((2.0 * g[0], m.zeros((), dtype=jax.dtypes.float0)),),
        )

        def foo(x, y):
            out, _ = t.lax.scan(lambda c, _: (f(c), None), (x, y), None, length=1)
            return out[0]

        return t.grad(foo, allow_int=True, argnums=(0, 1))(2.0, 3)

    (fx, fy), (jx, jy) = run("fg"), run("jax")
    _close(fx, jx)
    assert np.asarray(fy).dtype == np.asarray(jy).dtype == jax.dtypes.float0


def test_jacrev_allow_int():
    def run(which):
        t, _ = _lib(which)
        f = lambda x, i, j: (x * 2.0, x * i)
        args = (np.float32(3.0), np.array(7, np.int32), np.array([1, 2], np.int32))
        return t.jacrev(f, argnums=(0, 1, 2), allow_int=True)(*args)

    got, want = run("fg"), run("jax")
    _close(got, want)
    assert [np.asarray(x).dtype for x in jax.tree_util.tree_leaves(got)] == [
        np.asarray(x).dtype for x in jax.tree_util.tree_leaves(want)
    ]
    with pytest.raises(TypeError, match="allow_int"):
        fg.jacrev(lambda i: i * 2.0)(np.array(3, np.int32))


def test_wrappers_keep_the_wrapped_function_attributes():
    def fun(x, y):
        """Doc of fun."""
        return x * y

    for deco in (fg.custom_jvp, fg.custom_vjp, fg.custom_batching.custom_vmap):
        w = deco(fun)
        assert (w.__name__, w.__doc__, w.__wrapped__) == ("fun", "Doc of fun.", fun)
        c = copy.deepcopy(w)
        assert c.__name__ == "fun" and c.fun is fun
    part = fg.custom_jvp(functools.partial(fun, 2.0))
    part.defjvp(lambda p, tn: (part(*p), 0.1 * tn[0]))
    want = jax.custom_jvp(functools.partial(fun, 2.0))
    want.defjvp(lambda p, tn: (want(*p), 0.1 * tn[0]))
    _close(fg.grad(lambda a: part(*a))((1.0,)), jax.grad(lambda a: want(*a))((1.0,)))


def test_closure_converted_function_as_a_nondiff_argument():
    """closure_convert hoists the differentiated values the closure reads, so a custom_vjp
    taking the converted function as a nondiff argument sees them as inputs (no error)."""

    def run(which):
        t, m = _lib(which)

        @functools.partial(t.custom_vjp, nondiff_argnums=(0,))
        def cos_after(fn, x, *args):
            return m.cos(fn(x, *args))

        def fwd(fn, x, *args):
            return cos_after(fn, x, *args), (x, args)

        def rev(fn, res, g):
            x, args = res
            return (17.0 * x, *[42.0 * a for a in args])

        cos_after.defvjp(fwd, rev)

        def solve(c, x):
            converted, aux = t.closure_convert(lambda x: m.sum((x - c) ** 2.0), x)
            return cos_after(converted, x, *aux)

        c, x = 2.0 * m.ones(2), m.ones(2)
        return solve(c, x), t.grad(solve, argnums=(0, 1))(c, x)

    _close(run("fg"), run("jax"))


def test_symbolic_zero_returned_by_a_rule_stays_symbolic_under_vmap():
    seen = {"fg": [], "jax": []}

    def run(which):
        t, m = _lib(which)

        @t.custom_jvp
        def f(x, y):
            return y

        def f_jvp(primals, tangents):
            seen[which].append(type(tangents[1]) is t.custom_derivatives.SymbolicZero)
            return primals[1], tangents[1]

        f.defjvp(f_jvp, symbolic_zeros=True)
        g = lambda x: f(x, f(x, 1.0))
        return t.jvp(t.vmap(g), (m.ones(3),), (m.ones(3),))

    _close(run("fg"), run("jax"))
    assert seen["fg"] == seen["jax"] == [True, True]


@pytest.fixture
def custom_vjp3():
    """JAX's opt-in ``jax_custom_vjp3`` (funcgrad reads JAX's setting), restored after."""
    old = fg.config.read("jax_custom_vjp3")
    fg.config.update("jax_custom_vjp3", True)
    yield
    fg.config.update("jax_custom_vjp3", old)


def test_custom_vjp3_refuses_a_function_closing_over_a_tracer(custom_vjp3):
    def run(which):
        t, m = _lib(which)

        def outer(x):
            @t.custom_vjp
            def f(y):
                return x * y

            f.defvjp(lambda y: (f(y), m.cos(y)), lambda cos_y, g: (cos_y * g,))
            return f(3.0)

        return t.vmap(outer)(np.arange(3.0, dtype=np.float32))

    _same_error(run, "UnexpectedTracerError", "can't close over")


def test_custom_vjp3_still_takes_explicit_arguments(custom_vjp3):
    def run(which):
        t, m = _lib(which)

        @t.custom_vjp
        def f(x, y):
            return x * y

        f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda r, g: (r[1] * g, r[0] * g))
        return t.vmap(t.grad(f, argnums=(0, 1)))(m.arange(3.0), m.ones(3))

    _close(run("fg"), run("jax"))


def test_operations_on_float0_arrays_are_errors_as_in_jax():
    def run(which, how):
        t, m = _lib(which)
        a = t.grad(lambda x: x + 0.0, allow_int=True)(1)
        assert a.dtype == jax.dtypes.float0
        return a + m.zeros(()) if how == "numpy" else t.lax.add(a, m.zeros(()))

    for how in ("numpy", "lax"):
        _same_error(lambda w: run(w, how), TypeError, "float0s do not support any operations")


def test_closure_convert_keeps_integer_tracers_closed_over():
    """Only values that may carry a derivative are hoisted (JAX's "maybe perturbed")."""

    def run(which):
        t, _ = _lib(which)

        @t.jit
        def f(i, x):
            g, aux = t.closure_convert(lambda y: y * i * x, 2.0)
            return len(aux), g(3.0, *aux)

        n, val = f(np.int32(4), np.float32(0.5))
        return n, val

    (fn, fv), (jn, jv) = run("fg"), run("jax")
    assert fn == jn == 1
    _close(fv, jv)


def test_symbolic_zero_cotangents_reach_a_vmapped_bwd():
    seen = {"fg": [], "jax": []}

    def run(which):
        t, m = _lib(which)

        @t.custom_vjp
        def f(x, y):
            return x * y, x + y

        def fwd(x, y):
            return f(x.value, y.value), (x.value, y.value)

        def bwd(res, g):
            seen[which].append([type(c) is t.custom_derivatives.SymbolicZero for c in g])
            x, y = res
            g0 = m.zeros_like(x) if type(g[0]) is t.custom_derivatives.SymbolicZero else g[0]
            return g0 * y, g0 * x

        f.defvjp(fwd, bwd, symbolic_zeros=True)
        loss = lambda x, y: m.sum(t.vmap(f)(x, y)[0])  # the second output is unused
        return t.grad(loss, argnums=(0, 1))(m.arange(3.0), m.ones(3))

    _close(run("fg"), run("jax"))
    assert seen["fg"][-1] == seen["jax"][-1] == [False, True]


def _structure_error(which: str, kind: str, shape: tuple) -> str:
    """The message of a rule whose primal output is a pair where the function returns one
    array (``lucidrains/flash-attention-jax`` issue 7: seen inside a ``scan``)."""
    lib, np_ = _lib(which)

    def scan_apply(f, x):
        return lib.lax.scan(lambda c, _: (f(c), None), x, None, length=1)[0]

    if kind == "jvp":
        f = lib.custom_jvp(lambda x: x)
        f_jvp = lambda primals, tangents: ((primals[0],) * 2, (tangents[0],) * 2)
        f_jvp.__name__ = "f_jvp"
        f.defjvp(f_jvp)
        run = lambda x: lib.jvp(lambda y: scan_apply(f, y), (x,), (x,))
    else:
        f = lib.custom_vjp(lambda x: x)
        f_fwd = lambda x: ((x, {"a": x}), None)
        f_fwd.__name__ = "f_fwd"
        f.defvjp(f_fwd, lambda _, g: (g,))
        run = lambda x: lib.grad(lambda y: scan_apply(f, y).sum())(x)
    with pytest.raises(TypeError) as info:
        run(np_.ones(shape, np_.float32))
    return str(info.value)


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_rule_output_structure_mismatch_in_jax_words(kind: str, shape: tuple) -> None:
    ours = _structure_error("fg", kind, shape).replace("<lambda>", "f")
    assert ours == _structure_error("jax", kind, shape).replace("<lambda>", "f")


def _swapping_bwd(which: str, shapes: tuple) -> object:
    """``grad`` through a ``custom_vjp`` with symbolic zeros whose ``bwd`` returns the
    cotangents of its first two arguments swapped (zeros of another shape, when the two
    shapes differ)."""
    lib, np_ = _lib(which)
    f = lib.custom_vjp(lambda x, y, z: (x, y, z))
    f.defvjp(
        lambda x, y, z: ((x.value, y.value, z.value), None),
        lambda _, gs: (gs[1], gs[0], gs[2]),
        symbolic_zeros=True,
    )
    args = [np_.ones(s, np_.float32) for s in shapes]
    return lib.grad(lambda *a: f(*a)[2].sum(), (0, 1, 2))(*args)


def test_symbolic_zero_of_another_shape_from_bwd() -> None:
    pattern = re.escape(
        "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not match "
        "the corresponding input tangent shape/dtype: at output[0] the SymbolicZero had "
        "shape/dtype float32[2] while the corresponding input had shape/dtype float32[1]. "
        "Consider just returning a None here instead of a SymbolicZero object."
    )
    _same_error(lambda which: _swapping_bwd(which, (1, 2, 3)), ValueError, pattern)
    # zeros of the right type are fine
    _close(_swapping_bwd("fg", (1, 1, 3)), _swapping_bwd("jax", (1, 1, 3)))


def test_bwd_shape_check_follows_jax_disable_bwd_checks() -> None:
    def run(which: str) -> object:
        lib, np_ = _lib(which)
        foo = lib.custom_vjp(lambda x, y: x)
        foo.defvjp(lambda x, y: (x, None), lambda _, g: (np_.zeros(3), np_.zeros(3)))
        return lib.grad(lambda x, y: foo(x, y).sum(), (0, 1))(np_.ones(3), np_.ones(4))

    _same_error(run, ValueError, "at output\\[1\\] the bwd rule produced an output of type")
    jax.config.update("jax_disable_bwd_checks", True)
    try:
        ours, theirs = run("fg"), run("jax")
    finally:
        jax.config.update("jax_disable_bwd_checks", False)
    _close(ours, theirs)  # the cotangent as bwd gave it: zeros of shape (3,) for y
    assert ours[1].shape == theirs[1].shape == (3,)


def _types_error(which: str, kind: str, vjp3: bool = False) -> str:
    """The message of a rule whose primal output has the function's structure but another
    shape (``zeros((3,))`` for a scalar), inside a ``scan`` (``jax_custom_vjp3`` set before
    the function is made, as JAX reads it then)."""
    lib, np_ = _lib(which)
    jax.config.update("jax_custom_vjp3", vjp3)

    def scan_apply(f, x):
        return lib.lax.scan(lambda c, _: (f(c), None), x, None, length=1)[0]

    if kind == "jvp":
        f = lib.custom_jvp(lambda x: x)
        f_jvp2 = lambda primals, tangents: (np_.zeros((3,), np_.float32), tangents[0])
        f_jvp2.__name__ = "f_jvp2"
        f.defjvp(f_jvp2)
        run = lambda x: lib.jvp(lambda y: scan_apply(f, y), (x,), (x,))
    else:
        f = lib.custom_vjp(lambda x: x)
        f_fwd2 = lambda x: (np_.zeros((3,), np_.float32), None)
        f_fwd2.__name__ = "f_fwd2"
        f.defvjp(f_fwd2, lambda _, g: (g,))
        run = lambda x: lib.grad(lambda y: scan_apply(f, y))(x)
    try:
        with pytest.raises(TypeError) as info:
            run(np_.float32(1.0))
    finally:
        jax.config.update("jax_custom_vjp3", False)
    return str(info.value).split("\n  (in your code")[0]


@pytest.mark.parametrize("kind,vjp3", [("jvp", False), ("vjp", False), ("vjp", True)])
def test_rule_output_shape_mismatch_in_jax_words(kind: str, vjp3: bool) -> None:
    ours = _types_error("fg", kind, vjp3).replace("<lambda>", "f")
    assert ours == _types_error("jax", kind, vjp3).replace("<lambda>", "f")
