"""``funcgrad.experimental.jet`` (Taylor mode) against JAX's ``jax.experimental.jet.jet``
(values and dtypes) and against nested forward-mode derivatives of JAX's version of the
same function (``jax.jacfwd`` along the input path: the series by definition).

Elementwise, reduction, linear-algebra, indexing and call primitives; control flow (which
JAX's ``jet`` lacks: the nested-``jacfwd`` oracle only); hypothesis-generated programs and
orders; ``jet`` under and over ``jit``/``vmap``/``grad``/``jvp``; the contract's edges
(zero series materialised, ``factorial_scaled=False``, integer values, errors).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import PRIMS, examples
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.experimental import jet as jax_jet

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import dtypes
from funcgrad.experimental import jet as fg_jet
from funcgrad.experimental.jet import jet, jet2

SETTINGS = settings(deadline=None)  # max_examples: the hypothesis profile (tests/conftest.py)


def taylor_oracle(fun, primals, series):
    """The primal and the ``k``-th derivatives (``k = 1..K``) of ``fun`` along the
    path ``x + sum_k t**k x_k / k!`` at ``t = 0``, by ``k`` nested ``jax.jacfwd``."""
    (order,) = {len(s) for s in series}

    def path(eps):
        return fun(
            *[
                (
                    x + sum(eps ** (k + 1) * s[k] / math.factorial(k + 1) for k in range(order))
                ).astype(jnp.asarray(x).dtype)  # (integer and bool inputs: not perturbed)
                for x, s in zip(primals, series)
            ]
        )

    def derivatives(eps):
        out, g = [], path
        for _ in range(order):
            g = jax.jacfwd(g)
            out.append(g(eps))
        return out

    # (one compilation for every order)
    terms = jax.jit(derivatives)(jnp.asarray(0.0, jnp.result_type(*primals)))
    # (per output leaf, the list of its terms: the structure jet returns)
    return fun(*primals), jax.tree_util.tree_map(lambda *ts: list(ts), *terms)


def check(fun, jfun, primals, series, tol=1e-9, jax_jet_too=True, nested=True):
    """``jet(fun)`` against the nested-``jacfwd`` oracle on ``jfun`` and (where JAX's jet
    has the rules) against ``jax.experimental.jet.jet(jfun)``: values and dtypes."""
    y, ys = jet(fun, primals, series)
    oracles = [taylor_oracle(jfun, primals, series)] if nested else []
    if jax_jet_too:
        oracles.append(jax_jet.jet(jfun, primals, series))
    for oy, oys in oracles:
        for a, b in zip(jax.tree_util.tree_leaves((y, ys)), jax.tree_util.tree_leaves((oy, oys))):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def draw(seed, shape, order, lo=-1.5, hi=1.5, n=1):
    rng = np.random.default_rng(seed)
    primals = tuple(rng.uniform(lo, hi, shape) for _ in range(n))
    series = tuple([rng.normal(size=shape) for _ in range(order)] for _ in range(n))
    return primals, series


# --------------------------------------------------------------------------- primitives

UNARY = [
    ("exp", fnp.exp, jnp.exp, (-1.5, 1.5)),
    ("log", fnp.log, jnp.log, (0.5, 3.0)),
    ("sin", fnp.sin, jnp.sin, (-2, 2)),
    ("cos", fnp.cos, jnp.cos, (-2, 2)),
    ("tanh", fnp.tanh, jnp.tanh, (-2, 2)),
    ("logistic", fg.lax.logistic, jax.lax.logistic, (-3, 3)),
    ("sqrt", fnp.sqrt, jnp.sqrt, (0.5, 3)),
    ("rsqrt", fg.lax.rsqrt, jax.lax.rsqrt, (0.5, 3)),
    ("log1p", fnp.log1p, jnp.log1p, (0, 3)),
    ("expm1", fnp.expm1, jnp.expm1, (-1, 1)),
    ("erf", fg.lax.erf, jax.lax.erf, (-1, 1)),
    ("abs", fnp.abs, jnp.abs, (0.2, 2)),
    ("integer_pow", lambda x: x**5, lambda x: x**5, (-2, 2)),
    ("pow", lambda x: x**2.5, lambda x: x**2.5, (0.5, 2)),
    ("cumsum", fnp.cumsum, jnp.cumsum, (-2, 2)),
    ("cumprod", fnp.cumprod, jnp.cumprod, (-2, 2)),
    ("reduce_max", lambda x: fnp.max(x, axis=0), lambda x: jnp.max(x, axis=0), (-2, 2)),
    ("slice_transpose", lambda x: x[1:].T, lambda x: x[1:].T, (-2, 2)),
]


@pytest.mark.parametrize("name,f,jf,dom", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, f, jf, dom):
    primals, series = draw(0, (3, 2), 3, *dom)
    check(f, jf, primals, series, tol=1e-8)


NOT_IN_JAX_JET = [
    # (JAX's jet has no rule for these; the nested-jacfwd oracle only)
    ("asinh", fnp.arcsinh, jnp.arcsinh, (-2, 2)),
    ("atan", fnp.arctan, jnp.arctan, (-2, 2)),
    ("tan", fnp.tan, jnp.tan, (-1, 1)),
    ("sort", fnp.sort, jnp.sort, (-2, 2)),
]


@pytest.mark.parametrize("name,f,jf,dom", NOT_IN_JAX_JET, ids=[u[0] for u in NOT_IN_JAX_JET])
def test_unary_generic_only(name, f, jf, dom):
    primals, series = draw(1, (4,), 4, *dom)
    check(f, jf, primals, series, tol=1e-8, jax_jet_too=False)


BINARY = [
    ("mul", lambda x, y: x * y, lambda x, y: x * y),
    ("div", lambda x, y: x / y, lambda x, y: x / y),
    ("pow", lambda x, y: x**y, lambda x, y: x**y),
    ("atan2", fg.lax.atan2, jax.lax.atan2),
    ("dot", lambda x, y: fnp.dot(x, y.T), lambda x, y: jnp.dot(x, y.T)),
    ("max", fnp.maximum, jnp.maximum),
]


@pytest.mark.parametrize("name,f,jf", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, f, jf):
    primals, series = draw(2, (2, 3), 3, 0.5, 2.0, n=2)
    check(f, jf, primals, series, tol=1e-8)


def test_dtypes_follow_the_primals():
    x = np.linspace(0.2, 1.0, 4, dtype=np.float32)
    s = [np.full(4, 0.5, np.float32)] * 3
    y, ys = jet(lambda x: fnp.sin(x) * fnp.exp(x), (x,), (s,))
    ey, eys = jax_jet.jet(lambda x: jnp.sin(x) * jnp.exp(x), (x,), (s,))
    assert [a.dtype for a in (y, *ys)] == [np.float32] * 4
    np.testing.assert_allclose(np.asarray(ys), np.asarray(eys), rtol=1e-5)
    c = np.array([0.3 + 0.2j, -0.5j], np.complex64)
    y, ys = jet(lambda z: fnp.exp(z) * z, (c,), ([c, c],))
    ey, eys = jax_jet.jet(lambda z: jnp.exp(z) * z, (c,), ([c, c],))
    assert ys[1].dtype == np.complex64
    np.testing.assert_allclose(y, ey, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.asarray(eys), rtol=1e-5)


# --------------------------------------------------------------------------- programs

OPS1 = [
    (fnp.sin, jnp.sin),
    (fnp.tanh, jnp.tanh),
    (lambda x: fnp.exp(x * 0.5), lambda x: jnp.exp(x * 0.5)),
    (lambda x: x * x, lambda x: x * x),
    (lambda x: fnp.log(1.5 + x * x), lambda x: jnp.log(1.5 + x * x)),
    (lambda x: fnp.cumsum(x, axis=0), lambda x: jnp.cumsum(x, axis=0)),
    (lambda x: x[::-1] - x, lambda x: x[::-1] - x),
]
OPS2 = [
    (lambda x, y: x * y, lambda x, y: x * y),
    (lambda x, y: x + 2.0 * y, lambda x, y: x + 2.0 * y),
    (lambda x, y: x / (2.0 + y * y), lambda x, y: x / (2.0 + y * y)),
    (lambda x, y: fnp.dot(x, y.T) @ x, lambda x, y: jnp.dot(x, y.T) @ x),
]


@SETTINGS
@given(
    ops=st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(0, 3)), max_size=5),
    order=st.integers(0, 5),
    seed=st.integers(0, 2**31),
)
def test_random_programs(ops, order, seed):
    """A random straight-line program of unary and binary steps, at a random order."""

    def build(o1, o2):
        def f(x, y):
            for binary, i, j in ops:
                x, y = (o2[j][0](x, y) if binary else o1[i][0](x)), x
            return x, fnp.sum(y) if o1 is F1 else jnp.sum(y)

        return f

    F1 = [(a,) for a, _ in OPS1]
    f = build(F1, [(a,) for a, _ in OPS2])
    jf = build([(b,) for _, b in OPS1], [(b,) for _, b in OPS2])
    primals, series = draw(seed, (2, 2), order, n=2)
    if order == 0:
        y, ys = jet(f, primals, series)
        ey = jf(*primals)
        assert ys == ([], [])
        for a, b in zip(y, ey):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9)
        return
    # (JAX's jet alone: a nested-jacfwd oracle compiles for seconds per drawn program)
    check(f, jf, primals, series, tol=1e-7, nested=False)


# --------------------------------------------------------------------------- control flow


def test_control_flow():
    primals, series = draw(3, (3,), 3)

    def loops(cf):
        def f(x):
            a = cf.cond(True, lambda y: y * y, lambda y: y, x)
            b = cf.scan(lambda c, z: (c * 0.5 + cf_sin(cf, z), c), x, a)[0]
            c = cf.fori_loop(0, 2, lambda i, c: c + cf_sin(cf, c) * 0.3, b)
            return cf.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] * c[1]), (0, c))[1]

        return f

    check(loops(fg.lax), loops(jax.lax), primals, series, tol=1e-8, jax_jet_too=False)


def cf_sin(cf, x):
    return fnp.sin(x) if cf is fg.lax else jnp.sin(x)


def test_custom_rules_and_jit():
    @fg.custom_jvp
    def f(x):
        return fnp.log1p(fnp.exp(x))

    f.defjvp(lambda p, t: (f(p[0]), fg.lax.logistic(p[0]) * t[0]))

    @fg.custom_vjp
    def g(x):
        return fnp.sin(x)

    g.defvjp(lambda x: (g(x), fnp.cos(x)), lambda r, c: (r * c,))

    def fun(x):
        return fg.jit(lambda y: f(y) * g(y))(x)

    primals, series = draw(4, (3,), 4)
    check(fun, lambda x: jnp.log1p(jnp.exp(x)) * jnp.sin(x), primals, series, tol=1e-8)
    prog = fg.make_ir(lambda x, s: jet(fun, (x,), ([s],)))(primals[0], series[0][0])
    assert "jit_call" in [e.prim.name for e in prog.eqns]  # the jit stays one call


# --------------------------------------------------------------------------- composition


def test_under_and_over_transforms():
    x, s = np.array([0.3, -0.8, 1.2]), [np.array([1.0, 0.5, -2.0]), np.array([0.2, 0.1, 0.3])]

    def fj(x):
        return jet(fnp.tanh, (x,), (s,))[1][1]

    def jj(x):
        return jax_jet.jet(jnp.tanh, (x,), (s,))[1][1]

    np.testing.assert_allclose(fg.jit(fj)(x), jj(x), rtol=1e-10)
    np.testing.assert_allclose(fg.vmap(fj)(np.stack([x, -x])), jax.vmap(jj)(np.stack([x, -x])))
    np.testing.assert_allclose(
        fg.grad(lambda x: fnp.sum(fj(x)))(x), jax.grad(lambda x: jnp.sum(jj(x)))(x)
    )
    np.testing.assert_allclose(fg.jvp(fj, (x,), (s[0],))[1], jax.jvp(jj, (x,), (s[0],))[1])

    # jet of grad, jvp and vmap
    primals, series = draw(5, (3,), 3)
    check(
        lambda x: fg.grad(lambda y: fnp.sum(fnp.sin(y) ** 3))(x),
        lambda x: jax.grad(lambda y: jnp.sum(jnp.sin(y) ** 3))(x),
        primals,
        series,
        jax_jet_too=False,
    )
    check(
        lambda x: fg.jvp(fnp.exp, (x,), (x,))[1],
        lambda x: jax.jvp(jnp.exp, (x,), (x,))[1],
        primals,
        series,
        jax_jet_too=False,
    )
    check(fg.vmap(lambda x: fnp.sin(x) * x), jax.vmap(lambda x: jnp.sin(x) * x), primals, series)
    # jet of jet
    inner = lambda j, sin: lambda x: j(sin, (x,), ([x, x],))[1][1]
    check(inner(jet, fnp.sin), inner(jax_jet.jet, jnp.sin), primals, series)


# --------------------------------------------------------------------------- the contract


def test_pytree_output_and_zero_series():
    x = np.array([1.0, 2.0])
    y, ys = jet(lambda x: {"a": x * x, "b": (fnp.full_like(x, 2.0), 3)}, (x,), ([x, x],))
    ey, eys = jax_jet.jet(lambda x: {"a": x * x, "b": (jnp.full_like(x, 2.0), 3)}, (x,), ([x, x],))
    assert jax.tree_util.tree_structure(ys) == jax.tree_util.tree_structure(eys)
    for a, b in zip(jax.tree_util.tree_leaves((y, ys)), jax.tree_util.tree_leaves((ey, eys))):
        np.testing.assert_allclose(a, b, rtol=1e-14)
        assert np.asarray(a).dtype == np.asarray(b).dtype
    assert ys["b"][0] is not fg_jet.zero_series and len(ys["b"][0]) == 2


def test_unscaled_terms_and_fact():
    primals, series = draw(6, (3,), 4)
    y, ys = jet2(fnp.sin, primals, series)
    ey, eys = jax_jet.jet(jnp.sin, primals, series, factorial_scaled=False)
    np.testing.assert_allclose(y, ey, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ys), np.asarray(eys), rtol=1e-10)
    y, ys = fg_jet._logistic_taylor(primals, series)
    ey, eys = jax_jet._logistic_taylor(primals, series)
    np.testing.assert_allclose(y, ey, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ys), np.asarray(eys), rtol=1e-10)
    for n in (0, 3, 4.5, np.float32(5)):
        a, b = fg_jet.fact(n), jax_jet.fact(n)
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_integer_and_bool_values():
    """Integer and bool inputs carry no series, as in ``jvp`` (the nested-jacfwd oracle
    differentiates through ``astype``: zero); JAX's jet would propagate an integer
    input's terms. Integer outputs get float zeros, as JAX's."""
    b = np.array([True, False, True])
    x = np.array([0.5, -1.0, 2.0])
    i = np.int32(3)
    series = ([b, b], [x, x], [np.int32(1)] * 2)
    check(
        lambda b, x, i: fnp.where(b, fnp.sin(x), x * i),
        lambda b, x, i: jnp.where(b, jnp.sin(x), x * i),
        (b, x, i),
        series,
        tol=1e-12,
        jax_jet_too=False,
    )
    y, ys = jet(lambda x: x > 0.0, (x,), ([x],))
    ey, eys = jax_jet.jet(lambda x: x > 0.0, (x,), ([x],))
    np.testing.assert_array_equal(y, ey)
    assert ys[0].dtype == eys[0].dtype == np.float64
    np.testing.assert_array_equal(ys[0], eys[0])


def test_errors():
    x = np.ones(3)
    with pytest.raises(ValueError, match="inconsistent lengths"):
        jet(fnp.sin, (x, x), ([x], [x, x]))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet(fnp.sin, ((x, x),), ([x],))
    with pytest.raises(ValueError, match="term 1 for argument 0 is not an array"):
        jet(fnp.sin, (x,), ([x, [x]],))
    with pytest.raises(ValueError, match="shape"):
        jet(fnp.sin, (x,), ([np.ones(2)],))
    with pytest.raises(ValueError, match="one series"):
        jet(fnp.sin, (x,), ([x], [x]))
    with pytest.raises(TypeError, match="callable"):
        jet(3, (x,), ([x],))


# --------------------------------------------------------------------------- registry

JET_RULES = [p for p in PRIMS if p.jet is not None and p.forward_differentiable]


def _smooth_example(prim):
    """The first smooth example of ``prim`` with floating operands, and those operands."""
    for ex in examples(prim):
        nums = [i for i, a in enumerate(ex.args) if dtypes.is_inexact(np.asarray(a).dtype)]
        if ex.diff_argnums is not None:
            nums = list(ex.diff_argnums)
        if ex.smooth and nums:
            return ex, nums
    return None, None


@pytest.mark.parametrize("prim", JET_RULES, ids=[p.name for p in JET_RULES])
def test_registry_rules_against_nested_jvp(prim):
    """Each primitive's own ``jet`` rule on its registry example, order 3, against three
    nested ``funcgrad.jvp`` of the path (the JVP rules: checked against finite
    differences in tests/test_registry.py)."""
    ex, nums = _smooth_example(prim)
    if ex is None:
        pytest.skip("no smooth example with floating operands")
    rng = np.random.default_rng(7)
    series = [[rng.normal(size=np.shape(ex.args[i])) for _ in range(3)] for i in nums]
    series = [
        [np.asarray(c, np.asarray(ex.args[i]).dtype) for c in s] for i, s in zip(nums, series)
    ]

    def at(*diff):
        args = list(ex.args)
        for i, d in zip(nums, diff):
            args[i] = d
        return prim.bind(*args, **ex.params)

    def path(t):
        return at(
            *[
                ex.args[i] + t * s[0] + t * t / 2 * s[1] + t**3 / 6 * s[2]
                for i, s in zip(nums, series)
            ]
        )

    def d(g):
        return lambda t: fg.jvp(g, (t,), (np.ones_like(t),))[1]

    t0 = np.zeros((), np.asarray(ex.args[nums[0]]).dtype)
    want = [d(path)(t0), d(d(path))(t0), d(d(d(path)))(t0)]
    _, got = jet(at, tuple(ex.args[i] for i in nums), tuple(series))
    if not prim.multiple_results:
        want, got = [want], [got]
    else:
        want = [list(w) for w in zip(*want)]
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
