"""``custom_batching.custom_vmap`` and ``sequential_vmap`` as JAX has them: the rule
under ``vmap`` (mixed ``in_axes``, pytrees, ``jit``), the function elsewhere, the JVP
of the rule under ``vmap`` of ``jvp`` (``jacfwd``, tangents or primals batched alone),
composition with ``custom_vjp``, and JAX's errors. JAX's ``custom_vmap`` is the oracle:
each case is built once for each library and both runs are compared, rule calls
(``axis_size``, ``in_batched``) included."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp


def _lib(which: str):
    return (fg, fnp) if which == "fg" else (jax, jnp)


def _close(a, b, rtol=1e-5):
    jax.tree_util.tree_map(
        lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol),
        a,
        b,
    )


def _sin_cos(which: str, log: list | None = None):
    """``sin`` whose batching rule computes ``cos`` (so the rule's use is visible)."""
    t, m = _lib(which)

    @t.custom_batching.custom_vmap
    def f(x):
        return m.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, xs):
        if log is not None:
            log.append((type(axis_size), axis_size, type(in_batched), list(in_batched)))
        return m.cos(xs), in_batched[0]

    return f


def _both(run: Callable[[str], object]) -> None:
    _close(run("fg"), run("jax"))


def test_rule_under_vmap_function_elsewhere():
    logs = {"fg": [], "jax": []}

    def run(which):
        t, m = _lib(which)
        f = _sin_cos(which, logs[which])
        xs = m.arange(3.0)
        return f(m.float32(1.0)), t.vmap(f)(xs), t.jit(t.vmap(f))(xs), t.vmap(t.jit(f))(xs)

    _both(run)
    assert logs["fg"] == logs["jax"] and logs["fg"][0] == (int, 3, list, [True])


@pytest.mark.parametrize("in_axes", [(0, None), (1, None), (None, 0), (0, 0), (None, 1)])
def test_mixed_batching_in_batched_and_axis_size(in_axes):
    logs = {"fg": [], "jax": []}

    def run(which):
        t, m = _lib(which)

        @t.custom_batching.custom_vmap
        def dot(u, v):
            assert u.ndim == 1 and v.ndim == 1
            return u @ v

        @dot.def_vmap
        def rule(axis_size, in_batched, u, v):
            logs[which].append((axis_size, list(in_batched), u.shape, v.shape))
            ub, vb = in_batched
            out = m.sum(u * v, axis=1) if ub and vb else (u @ v if ub else v @ u)
            return out + 1.0, ub or vb  # + 1: the rule, not the function, ran

        shapes = {0: (4, 3), 1: (3, 4), None: (3,)}
        u = m.arange(12.0)[: int(np.prod(shapes[in_axes[0]]))].reshape(shapes[in_axes[0]])
        v = m.ones(shapes[in_axes[1]]) * 0.5
        return t.vmap(dot, in_axes=in_axes)(u, v)

    _both(run)
    assert logs["fg"] == logs["jax"]


def test_pytree_arguments_and_outputs_with_nones():
    logs = {"fg": [], "jax": []}

    def run(which):
        t, m = _lib(which)

        @t.custom_batching.custom_vmap
        def f(tree):
            return jax.tree_util.tree_map(m.sin, tree)

        @f.def_vmap
        def rule(axis_size, in_batched, tree):
            logs[which].append((axis_size, in_batched))
            return jax.tree_util.tree_map(m.cos, tree), in_batched[0]

        xs = m.arange(3.0)
        tree = (xs, [xs + 1, None], {"a": xs + 3}, None)
        one = jax.tree_util.tree_map(lambda x: x[0], tree)
        return f(one), t.vmap(f)(tree)

    _both(run)
    assert logs["fg"] == logs["jax"]


def test_multiple_outputs_and_kwargs():
    def run(which):
        t, m = _lib(which)

        @t.custom_batching.custom_vmap
        def f(x, y):
            return m.sin(x) * y, m.cos(x)

        @f.def_vmap
        def rule(axis_size, in_batched, xs, ys):
            return (m.cos(xs) * ys, m.sin(xs)), (True, in_batched[0])

        xs, ys = m.arange(3.0), m.linspace(1.0, 2.0, 3)
        return t.vmap(f)(xs, y=ys), t.vmap(lambda x: f(x=x, y=2.0))(xs)

    _both(run)


def test_jvp_of_the_function_and_vmap_of_jvp_uses_the_rule():
    logs = {"fg": [], "jax": []}

    def run(which):
        t, m = _lib(which)
        f = _sin_cos(which, logs[which])
        f_jvp = lambda x, tx: t.jvp(f, (x,), (tx,))
        xs, txs = m.arange(3.0), m.arange(3.0) * 2.0
        return (
            f_jvp(m.float32(1.0), m.float32(2.0)),
            t.vmap(f_jvp)(xs, txs),
            t.jvp(t.vmap(f), (xs,), (txs,)),
        )

    _both(run)
    assert logs["fg"] == logs["jax"]


def test_extra_batched_tangents_and_primals_jacfwd():
    logs = {"fg": [], "jax": []}

    def run(which):
        t, m = _lib(which)
        f = _sin_cos(which, logs[which])
        f_jvp = lambda x, tx: t.jvp(f, (x,), (tx,))
        txs = 2.0 + m.arange(3.0, dtype=m.float32)
        x = m.float32(1.0)
        return (
            t.vmap(f_jvp, in_axes=(None, 0), out_axes=(None, 0))(x, txs),
            t.vmap(f_jvp, in_axes=(0, None))(txs, x),
            t.jacfwd(f)(m.arange(3.0) + 0.72),
        )

    _both(run)
    assert logs["fg"] == logs["jax"]
    assert [entry[3] for entry in logs["fg"]] == [[False], [False], [False]]


def test_linear_rule_keeps_an_unbatched_tangent_unbatched():
    def run(which, linear):
        t, m = _lib(which)

        @t.custom_batching.custom_vmap
        def f(x):
            return 7.0 * x if linear else m.sin(x)

        @f.def_vmap
        def rule(axis_size, in_batched, xs):
            return (11.0 * xs if linear else m.cos(xs)), in_batched[0]

        g = lambda x, tx: t.jvp(f, (x,), (tx,))
        return t.vmap(g, in_axes=(0, None), out_axes=(0, None))(
            m.arange(3.0, dtype=m.float32), m.float32(4.0)
        )

    _close(run("fg", True), run("jax", True))
    for which in ("fg", "jax"):
        with pytest.raises(ValueError, match="at vmap out_axes"):
            run(which, False)


def test_primal_outputs_depending_on_tangents_stay_batched():
    """A rule whose own custom_jvp breaks the dataflow rule (primal outputs read
    tangents): tangents batched alone make the primal outputs batched."""

    def run(which, out_axes):
        t, m = _lib(which)

        @t.custom_jvp
        def bad(x):
            return m.cos(x)

        bad.defjvp(lambda p, tn: (m.cos(p[0] * tn[0]), tn[0]))

        @t.custom_batching.custom_vmap
        def f(x):
            return m.sin(x)

        f.def_vmap(lambda n, b, xs: (bad(xs), b[0]))
        g = lambda x, tx: t.jvp(f, (x,), (tx,))
        return t.vmap(g, in_axes=(None, 0), out_axes=out_axes)(
            m.float32(1.0), 2.0 + m.arange(3.0, dtype=m.float32)
        )

    _close(run("fg", 0), run("jax", 0))
    for which in ("fg", "jax"):
        with pytest.raises(ValueError, match="at vmap out_axes"):
            run(which, (None, 0))


def test_reverse_mode_is_an_error_as_in_jax():
    for which in ("fg", "jax"):
        t, _ = _lib(which)
        f = _sin_cos(which)
        with pytest.raises(ValueError, match="Linearization failed to produce known values"):
            t.grad(f)(0.5)


def test_compose_with_custom_vjp():
    def run(which):
        t, m = _lib(which)

        @t.custom_vjp
        @t.custom_batching.custom_vmap
        def f(x, y):
            return m.sin(x) * y

        @f.def_vmap  # reaches the inner custom_vmap through custom_vjp
        def rule(axis_size, in_batched, xs, ys):
            return m.cos(xs) * ys, True

        f.defvjp(
            lambda x, y: (f(x, y), (m.cos(x), m.sin(x), y)),
            lambda res, g: (res[0] * g * res[2], res[1] * g),
        )
        xs, ys = m.linspace(0.0, 1.0, 5), m.linspace(-0.1, 0.1, 5)
        return t.vmap(f)(xs, ys), t.grad(f, argnums=(0, 1))(xs[1], ys[1]), t.vmap(t.grad(f))(xs, ys)

    _both(run)


def test_sequential_vmap_rules_of_a_custom_vjp():
    def run(which):
        t, m = _lib(which)

        @t.custom_batching.sequential_vmap
        def fwd(x, y):
            assert x.ndim == 0
            return m.sin(x) * y, (x, y)

        @t.custom_batching.sequential_vmap
        def bwd(res, ct):
            x, y = res
            return x * ct, y * ct

        fun = t.custom_vjp(lambda *a: fwd(*a)[0])
        fun.defvjp(fwd, bwd)
        xs = m.linspace(0.0, 1.0, 5)
        out, f_vjp = t.vjp(t.vmap(t.jit(fun), in_axes=(0, None)), xs, m.float32(0.5))
        return out, f_vjp(out)

    _both(run)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.integers(0, 1)), min_size=1, max_size=3).filter(
        lambda axes: any(a is not None for a in axes)
    ),
    st.integers(1, 4),
)
def test_sequential_vmap_values_match_jax(in_axes, size):
    calls = {"fg": 0, "jax": 0}

    def run(which):
        t, m = _lib(which)

        @t.custom_batching.sequential_vmap
        def f(*args):
            calls[which] += 1
            assert all(a.ndim == 1 for a in args)  # one example at a time
            return sum(m.sin(a) * (i + 1) for i, a in enumerate(args)), args[0] * 2.0

        rng = np.random.default_rng(len(in_axes) * 10 + size)
        args = [
            rng.normal(size=(2,) if a is None else ((size, 2) if a == 0 else (2, size))).astype(
                np.float32
            )
            for a in in_axes
        ]
        return t.vmap(f, in_axes=tuple(in_axes))(*args)

    _both(run)


def test_wrappers_forward_their_def_methods():
    for wraps in itertools.permutations([fg.custom_jvp, fg.custom_batching.custom_vmap]):
        f = lambda x: x + 1.0
        for wrap in wraps:
            f = wrap(f)
        assert callable(f.defjvp) and callable(f.def_vmap)
    for wraps in itertools.permutations([fg.custom_vjp, fg.custom_batching.custom_vmap]):
        f = lambda x: x + 1.0
        for wrap in wraps:
            f = wrap(f)
        assert callable(f.defvjp) and callable(f.def_vmap)
    g = fg.custom_batching.custom_vmap(lambda x: x)
    with pytest.raises(AttributeError):
        g.not_an_attribute  # noqa: B018


def _errors(which):
    t, m = _lib(which)
    xs = m.arange(3.0)

    @t.custom_batching.custom_vmap
    def f(x):
        return m.sin(x)

    yield AttributeError, "No batching rule defined for custom_vmap function f", lambda: f(0.5)

    def rule_abc(axis_size, in_batched, xs):
        return [m.sin(xs), m.cos(xs)], in_batched

    f.def_vmap(rule_abc)
    yield (
        ValueError,
        r"structure of output value and output batching specification returned by custom "
        r"vmap rule \(rule_abc\) do not match",
        lambda: t.vmap(f)(xs),
    )

    def rule_abc2(axis_size, in_batched, xs):
        return [m.sin(xs)], in_batched

    f.def_vmap(rule_abc2)
    yield (
        ValueError,
        r"structure of output returned by custom vmap rule \(rule_abc2\) does not match that "
        r"of original custom-vmapped function",
        lambda: t.vmap(f)(xs),
    )

    @t.custom_batching.custom_vmap
    def g(x, y, *, z=None):
        return m.sin(x) * y

    g.def_vmap(lambda *a: None)
    yield (
        TypeError,
        r"The input arguments to the custom_vmap-decorated function g(.*)\n"
        r"missing a required argument: 'y'",
        lambda: g(0.5),
    )
    yield (
        TypeError,
        r"custom_vmap-decorated function g(.*)\nThe following keyword arguments could not "
        r"be resolved to positions: z",
        lambda: g(0.5, 0.1, z=1.0),
    )


def test_errors_match_jax():
    for (fe, fm, fcall), (je, jm, jcall) in zip(_errors("fg"), _errors("jax"), strict=True):
        assert (fe, fm) == (je, jm)
        with pytest.raises(je, match=jm):
            jcall()
        with pytest.raises(fe, match=fm):
            fcall()


def test_rule_with_wrong_output_shape_is_a_clear_error():
    f = fg.custom_batching.custom_vmap(fnp.sin)
    f.def_vmap(lambda n, b, xs: (xs[:2], True))
    with pytest.raises(ValueError, match=r"custom vmap rule \(<lambda>\): output 0 has shape"):
        fg.vmap(f)(fnp.arange(3.0))


def test_function_closing_over_a_batched_value_is_an_error():
    def outer(x):
        f = fg.custom_batching.custom_vmap(lambda y: y * x)
        f.def_vmap(lambda n, b, ys: (ys * 2.0, True))
        return f(fnp.arange(2.0))

    with pytest.raises(fg.errors.UnexpectedTracerError, match="closes over a value"):
        fg.vmap(outer)(fnp.arange(3.0))


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None)])
def test_sequential_vmap_is_lax_map(in_axes):
    """vmap of a sequential_vmap function is the program of lax.map over the batched
    arguments (JAX's definition), printed the same: the rule is shown by its name."""
    f = fg.custom_batching.sequential_vmap(lambda x, y: x + y)
    xs = fnp.arange(3.0, dtype=fnp.float32)
    y = xs if in_axes[1] == 0 else fnp.float32(4.0)
    if in_axes[1] == 0:
        ref = lambda xs, ys: fg.lax.map(lambda a: f(*a), (xs, ys))
    else:
        ref = lambda xs, y: fg.lax.map(lambda x: f(x, y), xs)
    got = fg.make_ir(fg.vmap(f, in_axes=in_axes))(xs, y)
    assert str(got) == str(fg.make_ir(ref)(xs, y))
    assert "sequential_vmap.<locals>.rule" in str(got)
    _close(fg.vmap(f, in_axes=in_axes)(xs, y), jax.vmap(lambda a, b: a + b, in_axes)(xs, y))


@pytest.mark.parametrize(
    "in_axes", [(0, 0, 0), (None, 0, 0), (0, 0, None), (0, None, None), (None, None, 0)]
)
def test_jvp_of_rule_with_integer_and_mixed_batching(in_axes):
    """vmap of jvp where an integer operand (no tangent) is batched, or batched pairs
    meet lone batched primals or tangents: the rule sees one batch axis and the values
    are the function's (oracle: JAX on the function without a custom rule; JAX's own
    custom_vmap returns two batch axes in the mixed cases)."""
    log = []
    f = fg.custom_batching.custom_vmap(lambda x, n: fnp.sin(x) * n)

    @f.def_vmap
    def rule(size, b, xs, ns):
        log.append(list(b))
        if not any(b):  # (inside the map over lone batched primals or tangents)
            return fnp.sin(xs) * ns, False
        xs = xs if b[0] else fnp.broadcast_to(xs, (size, *xs.shape))
        ns = ns if b[1] else fnp.broadcast_to(ns, (size, *ns.shape))
        return fnp.sin(xs) * ns, True

    def g(t, fun):
        return lambda x, n, tx: t.jvp(lambda x: fun(x, n), (x,), (tx,))

    xs, ns = np.linspace(0.1, 1.0, 3).astype(np.float32), np.arange(1, 4, dtype=np.int32)
    full = {0: (xs, ns, xs * 2), None: (np.float32(0.3), np.int32(2), np.float32(1.5))}
    args = [full[a][i] for i, a in enumerate(in_axes)]
    got = fg.vmap(g(fg, f), in_axes=in_axes)(*args)
    want = jax.vmap(g(jax, lambda x, n: jnp.sin(x) * n), in_axes=in_axes)(*args)
    _close(got, want)
    if in_axes[:2] == (0, 0):
        assert log[-1] == [True, True]


def test_calls_of_one_function_are_one_program_structure():
    """Two calls of one custom_vmap function (and of its JVP) trace to programs with
    equal structural keys, so the compile cache serves the second; another rule gives
    another key."""
    f = fg.custom_batching.custom_vmap(fnp.sin)
    f.def_vmap(lambda n, b, xs: (fnp.cos(xs), b[0]))
    g = fg.custom_batching.custom_vmap(fnp.sin)
    g.def_vmap(lambda n, b, xs: (fnp.cos(xs) + 1.0, b[0]))

    def key(fun):
        return fg.make_ir(lambda x, t: fg.jvp(fun, (x,), (t,)))(1.0, 1.0).key()

    assert key(f) == key(f) != key(g)
    xs = fnp.arange(3.0, dtype=fnp.float32)
    _close(fg.vmap(g)(xs), np.cos(np.arange(3.0)) + 1.0)


def test_jvp_that_makes_constants():
    """A JVP whose rules create arrays (here a custom_jvp rule inside) runs eagerly,
    under jit and under vmap, with JAX's values."""

    def run(which):
        t, m = _lib(which)

        @t.custom_jvp
        def g(x):
            return m.sin(x)

        scale = np.array([2.0, 3.0, 4.0], np.float32)
        g.defjvp(lambda p, tn: (g(p[0]), tn[0] * m.asarray(scale)))
        f = t.custom_batching.custom_vmap(lambda x: g(x))
        f.def_vmap(lambda n, b, xs: (g(xs), b[0]))
        x, xs = np.ones(3, np.float32), np.ones((2, 3), np.float32)
        j = lambda x, tx: t.jvp(f, (x,), (tx,))
        return j(x, x), t.jit(j)(x, x), t.vmap(j)(xs, xs), t.vmap(j, (None, 0))(x, xs)

    _close(run("fg"), run("jax"))
