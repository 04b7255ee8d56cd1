"""Known values under eager transforms: Python control flow on values works
outside ``jit`` as in JAX, is computed only when asked, and stays an error under
``jit`` and for values batched by ``vmap``. JAX is the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import interp


def _both(body):
    """(funcgrad version, JAX version) of ``body(np_module)``."""
    return body(fnp), body(jnp)


def _float(m):
    """How a program reads a Python float. funcgrad allows ``float(x)`` and
    ``np.asarray(x)`` on known values; JAX 0.10 raises for those two under its
    transforms (but allows ``.item()``, ``bool``, ``int``), so the JAX oracle
    reads with ``.item()``, which cuts the gradient the same way."""
    return float if m is fnp else (lambda v: v.item() if hasattr(v, "item") else float(v))


def _branchy(m):
    def f(x):
        if x > 0:
            return m.sin(x) * x
        return m.cos(x) - x

    return f


def _newton_sqrt(m):
    def f(a):
        y = a
        while _float(m)(m.abs(y * y - a)) > 1e-5:
            y = 0.5 * (y + a / y)
        return y

    return f


def _int_loop(m):
    def f(x, n):
        acc = x
        for _ in range(int(n)):
            acc = m.sin(acc) + x
        return acc

    return f


def _item_and_asarray(m):
    def f(x):
        if m is fnp:
            scale = x.item() if x.ndim == 0 else float(np.asarray(x).sum())
        else:
            scale = x.item() if x.ndim == 0 else x.sum().item()
        return m.sum(x**2) * scale

    return f


def _tolerance(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("x", [-1.3, 0.7, 2.0])
def test_if_on_value_under_every_eager_transform(x):
    f, g = _both(_branchy)
    _tolerance(fg.grad(f)(x), jo.grad(g)(x))
    v, d = fg.value_and_grad(f)(x)
    vj, dj = jo.value_and_grad(g)(x)
    _tolerance(v, vj)
    _tolerance(d, dj)
    out, fn = fg.vjp(f, x)
    outj, fnj = jax.vjp(g, x)
    _tolerance(out, outj)
    _tolerance(fn(1.0)[0], fnj(1.0)[0])
    _tolerance(fg.jvp(f, (x,), (1.0,))[1], jo.jvp(g, (x,), (1.0,))[1])
    out, lin = fg.linearize(f, x)
    _tolerance(lin(1.0), jax.linearize(g, x)[1](1.0))
    xa = np.float32(x)
    _tolerance(fg.jacfwd(f)(xa), jo.jacfwd(g)(xa))
    _tolerance(fg.jacrev(f)(xa), jo.jacrev(g)(xa))
    _tolerance(fg.hessian(f)(xa), jo.hessian(g)(xa))
    _tolerance(fg.grad(fg.grad(f))(x), jo.grad(jo.grad(g))(x))


@pytest.mark.parametrize("a", [2.0, 9.0])
def test_while_on_value_newton(a):
    f, g = _both(_newton_sqrt)
    _tolerance(fg.grad(f)(a), jo.grad(g)(a))
    _tolerance(fg.value_and_grad(f)(a)[0], np.sqrt(a))


def test_int_range_item_and_asarray():
    f, g = _both(_int_loop)
    _tolerance(fg.grad(f)(0.3, 3), jo.grad(g)(0.3, 3))
    # int() of a traced-but-known integer argument
    _tolerance(fg.grad(f)(0.3, np.int32(2)), jo.grad(g)(0.3, np.int32(2)))
    f, g = _both(_item_and_asarray)
    for x in (np.float32(1.5), np.arange(3, dtype=np.float32)):
        _tolerance(fg.grad(f)(x), jo.grad(g)(x))


def test_format_and_index_with_known_value():
    seen = []

    def f(x, i):
        seen.append(f"{x:.2f}")
        return fnp.sum(x * fnp.arange(3.0)[i])

    _tolerance(fg.grad(f)(1.0, 2), 2.0)
    assert seen == ["1.00"]


def test_custom_rules_and_calls_see_values():
    def make(m, custom_jvp):
        @custom_jvp
        def f(x):
            return m.sin(x) if x > 0 else x * 2.0

        @f.defjvp
        def f_jvp(p, t):
            (x,), (tx,) = p, t
            slope = m.cos(x) if _float(m)(x) > 0 else 2.0
            return f(x), slope * tx

        return f

    f, g = make(fnp, fg.custom_jvp), make(jnp, jax.custom_jvp)
    for x in (-1.0, 1.0):
        _tolerance(f(x), g(x))  # called outside any transform
        _tolerance(fg.grad(f)(x), jo.grad(g)(x))
        _tolerance(fg.jvp(f, (x,), (1.0,))[1], jo.jvp(g, (x,), (1.0,))[1])

    def makev(m, custom_vjp):
        @custom_vjp
        def h(x):
            return m.exp(x) if x < 1 else x

        def fwd(x):
            return h(x), (x, _float(m)(x) < 1)

        def bwd(res, ct):
            x, small = res
            return ((m.exp(x) if small else 1.0) * ct,)

        h.defvjp(fwd, bwd)
        return h

    f, g = makev(fnp, fg.custom_vjp), makev(jnp, jax.custom_vjp)
    for x in (0.5, 3.0):
        _tolerance(f(x), g(x))
        _tolerance(fg.grad(f)(x), jo.grad(g)(x))


def test_abstract_under_jit_and_batched_vmap():
    f = _branchy(fnp)
    with pytest.raises(fg.ConcretizationError, match="`jit`"):
        fg.jit(f)(1.0)
    with pytest.raises(fg.ConcretizationError, match="`jit`"):
        fg.jit(fg.grad(f))(1.0)
    with pytest.raises(fg.ConcretizationError, match="`vmap`"):
        fg.vmap(fg.grad(f))(np.ones(3, np.float32))
    with pytest.raises(fg.ConcretizationError, match="`make_ir`"):
        fg.make_ir(fg.grad(f))(1.0)
    # loop bodies are traced abstractly, as in JAX
    with pytest.raises(fg.ConcretizationError):
        fg.grad(lambda x: fg.fori_loop(0, 2, lambda i, c: c * float(c), x))(1.0)
    # an unmapped vmap argument keeps its value; a closed-over known value in a body too
    out = fg.vmap(lambda x, n: x * int(n), in_axes=(0, None))(np.ones(3, np.float32), 3)
    _tolerance(out, 3.0 * np.ones(3))
    g = fg.grad(lambda x: fg.fori_loop(0, 2, lambda i, c: c * (2.0 if x > 0 else 3.0), x))
    _tolerance(g(1.0), 4.0)


def test_function_that_never_asks_runs_no_slice():
    def f(x):
        return fnp.sum(fnp.sin(x) * fnp.cos(x))

    x = np.linspace(0, 1, 5, dtype=np.float32)
    before = interp.slice_evaluations()
    fg.grad(f)(x)
    fg.value_and_grad(f)(x)
    fg.jvp(f, (x,), (x,))
    fg.vjp(f, x)[1](np.float32(1))
    fg.jacrev(f)(x)
    assert interp.slice_evaluations() == before
    fg.grad(_branchy(fnp))(1.0)
    assert interp.slice_evaluations() == before + 1


def test_each_equation_runs_at_most_once_per_trace():
    def f(x):
        y = fnp.sin(x)
        a = y > 0  # asks for y (one slice: sin, gt)
        b = y > 0.5  # y is memoised: only the new comparison runs
        return y * (2.0 if a else 1.0) * (3.0 if b else 1.0)

    before = interp.slice_evaluations()
    _tolerance(fg.grad(f)(1.0), 6 * np.cos(1.0))
    assert interp.slice_evaluations() == before + 2


def test_compiled_cache_correct_when_values_take_different_branches():
    """Each branch is its own program structure: alternate branches well past the
    point where the eager program cache compiles, and compare with JAX."""
    f, g = _both(_branchy)
    gf, gj = fg.grad(f), jo.grad(g)
    for x in [1.0, -1.0] * 4 + [0.5, -0.5, 3.0, -3.0]:
        _tolerance(gf(x), gj(x))

    def scaled(m):
        return lambda x: m.sum(x) * _float(m)(m.max(x))  # the read value becomes a literal

    f, g = scaled(fnp), scaled(jnp)
    for k in range(1, 5):
        x = np.full(3, k, np.float32)
        _tolerance(fg.grad(f)(x), jo.grad(g)(x))


# --------------------------------------------------------------------------- generated programs

_UNARY = {
    "sin": (fnp.sin, jnp.sin),
    "cos": (fnp.cos, jnp.cos),
    "tanh": (fnp.tanh, jnp.tanh),
    "sq": (lambda x: x * x, lambda x: x * x),
    "neg": (lambda x: -x, lambda x: -x),
    "exp": (lambda x: fnp.exp(0.3 * x), lambda x: jnp.exp(0.3 * x)),
}

_step = st.tuples(
    st.sampled_from(sorted(_UNARY)),  # op when the condition holds
    st.sampled_from(sorted(_UNARY)),  # op otherwise
    st.floats(-1.0, 1.0),  # threshold
    st.sampled_from(["if", "while", "float"]),
)


def _program(steps, which):
    read = _float(fnp if which == 0 else jnp)

    def f(x):
        y = x
        for a, b, t, kind in steps:
            opa, opb = _UNARY[a][which], _UNARY[b][which]
            if kind == "if":
                y = opa(y) if (y.sum() > t) else opb(y)
            elif kind == "while":
                n = 0
                while read(y.sum()) > t and n < 3:
                    y = opa(y) * 0.5
                    n += 1
            else:
                y = opb(y) * read(y.sum() > t) + y
        return (y * y).sum()

    return f


@settings(max_examples=15, deadline=None)
@given(
    steps=st.lists(_step, min_size=1, max_size=4),
    x=st.lists(st.floats(-1.5, 1.5), min_size=2, max_size=2),
)
def test_generated_python_control_flow_matches_jax(steps, x):
    xs = np.asarray(x, np.float32)
    f, g = _program(steps, 0), _program(steps, 1)
    _tolerance(fg.grad(f)(xs), jo.grad(g)(xs))
    t = np.ones_like(xs)
    _tolerance(fg.jvp(f, (xs,), (t,))[1], jo.jvp(g, (xs,), (t,))[1])
    _tolerance(fg.vjp(f, xs)[1](np.float32(1.0))[0], jax.vjp(g, xs)[1](np.float32(1.0))[0])


# --------------------------------------------------------------------------- JAX's error types


def test_error_types_and_messages_follow_jax():
    """The behaviours JAX's api_test checks for concreteness, on funcgrad."""

    def sign(x):
        return x if x > 0 else -x

    assert fg.grad(sign)(1.0) == 1.0 and fg.grad(sign)(-1.0) == -1.0
    with pytest.raises(fg.errors.TracerBoolConversionError, match=r"with shape bool\[\]\. "):
        fg.jit(sign)(1.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(sign)(1.0)  # the oracle raises the same kind of error

    table = [1, 2, 3]
    with pytest.raises(TypeError, match=r"The __index__\(\) method was called on traced array"):
        fg.jit(lambda n: table[n])(0)
    assert fg.jit(lambda n: table[n], static_argnums=0)(1) == 2

    def ranged(x, n):
        for i in range(n):
            x = x + i
        return x

    with pytest.raises(fg.errors.TracerIntegerConversionError):
        fg.jit(ranged)(0, 5)
    assert fg.jit(ranged, static_argnums=1)(0, 5) == 10

    # item(): works eagerly and under eager grad, not under jit
    x = fnp.asarray(1.0)
    assert fg.grad(lambda x: x * x.item())(x) == 1.0
    with pytest.raises(fg.errors.ConcretizationTypeError, match="Abstract tracer value"):
        fg.jit(lambda x: x.item())(x)
    with pytest.raises(fg.errors.TracerArrayConversionError):
        fg.jit(lambda x: np.asarray(x))(x)
    assert fg.errors.UnexpectedTracerError is fg.LeakedTracerError


def test_checkpoint_concreteness_error_points_at_user_code():
    @fg.checkpoint
    def f(x):
        if x > 0:  # checkpoint traces abstractly, as jax.remat does
            return x
        return fnp.sin(x)

    with pytest.raises(fg.errors.TracerBoolConversionError, match=r"test_known_values\.py"):
        f(3.0)


def test_leaked_tracer_passed_to_jit():
    box = []
    fg.jit(lambda x: box.append(x) or x)(1.0)
    with pytest.raises(fg.errors.UnexpectedTracerError):
        fg.jit(lambda x: x * 2)(box[0])
    assert fg.jit(lambda x: x * 2)(2.0) == 4.0


def test_tracer_printed_inside_jit_as_jax_prints_it():
    seen = []
    fg.jit(lambda x: seen.append(repr(x)) or x)(2.0)
    jax.jit(lambda x: seen.append(repr(x)) or x)(2.0)
    fg.jit(lambda x: seen.append(str(x)) or x)(np.ones((2, 3), np.int32))
    jax.jit(lambda x: seen.append(str(x)) or x)(np.ones((2, 3), np.int32))
    assert seen[0] == seen[1] and seen[2] == seen[3]
