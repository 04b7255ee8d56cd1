"""``lax.reduce`` / ``lax.reduce_window`` with computations that are not recognised
monoids (the ``reduce_general`` / ``reduce_window_general`` primitives), against JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax

RNG = np.random.default_rng(35)
A = RNG.uniform(-1.0, 1.0, (3, 4, 5))
IA = RNG.integers(-5, 6, (3, 4, 5)).astype(np.int32)
V = np.array([[3.0, 1.0, 7.0, 7.0, 2.0], [0.5, 4.0, 4.0, -1.0, 4.0]])
IDX = np.broadcast_to(np.arange(5, dtype=np.int32), V.shape).copy()


def lin(a, b):  # not associative: XLA's order decides, as in JAX
    return a + 2 * b


def mul(a, b):  # a lambda that is a product (not recognised: traced as a program)
    return a * b + 0 * a


def shifted(a, b):  # (1 + a)(1 + b) - 1: associative, identity 0
    return a * b + a + b


def argmax_pair(np_):
    def comp(a, b):
        pick = (a[0] > b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
        return (np_.where(pick, a[0], b[0]), np_.where(pick, a[1], b[1]))

    return comp


def _close(got, want, rtol=1e-12, atol=1e-12):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


@pytest.mark.parametrize("comp", [lin, mul, shifted], ids=["lin", "mul", "shifted"])
@pytest.mark.parametrize("dims", [(0,), (2,), (0, 2), (0, 1, 2), ()])
def test_reduce_values(comp, dims):
    init = 1.0 if comp is mul else 0.0
    want = jlax.reduce(A, init, comp, dims)
    _close(flax.reduce(A, init, comp, dims), want)
    _close(fg.jit(lambda x: flax.reduce(x, init, comp, dims))(A), want)


def test_reduce_integer_and_pairs():
    comp = lambda a, b: a * 3 + b
    I0 = np.int32(0)  # (a Python int is int64 here, x64 on: a mismatch, as in JAX)
    _close(flax.reduce(IA, I0, comp, (1,)), jlax.reduce(IA, I0, comp, (1,)))
    _close(flax.reduce(IA, np.int32(1), comp, (0, 2)), jlax.reduce(IA, np.int32(1), comp, (0, 2)))
    init = (-np.inf, np.int32(0))
    got = flax.reduce((V, IDX), init, argmax_pair(fnp), (1,))
    _close(got, jlax.reduce((V, IDX), init, argmax_pair(jnp), (1,)))
    np.testing.assert_array_equal(got[1], [2, 1])
    # a dict pytree, the output structure from the computation
    comp2 = lambda a, b: {"s": a["s"] + 2 * b["s"], "p": a["p"] * b["p"]}
    ops, inits = {"s": A, "p": A}, {"s": 0.0, "p": 1.0}
    _close(flax.reduce(ops, inits, comp2, (1,)), jlax.reduce(ops, inits, comp2, (1,)))


def test_reduce_closure_and_empty():
    c = np.float64(0.5)
    comp = lambda a, b: a + c * b
    _close(flax.reduce(A, 0.0, comp, (1,)), jlax.reduce(A, 0.0, comp, (1,)))
    empty = np.zeros((0, 3))
    _close(flax.reduce(empty, 2.0, lin, (0,)), jlax.reduce(empty, 2.0, lin, (0,)))


def test_reduce_vmap():
    f = lambda x: flax.reduce(x, 0.0, lin, (1,))
    got = fg.vmap(f)(A)
    _close(got, jax.vmap(lambda x: jlax.reduce(x, 0.0, lin, (1,)))(A))
    _close(got, np.stack([np.asarray(f(a)) for a in A]))
    g = lambda v, i: flax.reduce((v, i), (-np.inf, np.int32(0)), argmax_pair(fnp), (0,))
    got = fg.vmap(g, in_axes=(1, 1))(V, IDX)
    want = jax.vmap(
        lambda v, i: jlax.reduce((v, i), (-np.inf, np.int32(0)), argmax_pair(jnp), (0,)),
        in_axes=(1, 1),
    )(V, IDX)
    _close(got, want)
    with pytest.raises(NotImplementedError):
        fg.vmap(lambda i: flax.reduce(A, i, lin, (0,)))(np.zeros(2))


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2)])
def test_reduce_derivatives(dims):
    def f(lax_):
        return lambda x: lax_.reduce(x, 0.0, lin, dims)

    x = np.arange(1.0, 7.0)
    if dims == (0,):
        want = [1, 2, 2, 2, 4, 4]  # JAX's (its tree order)
        np.testing.assert_allclose(fg.grad(f(flax))(x), want)
        np.testing.assert_allclose(jax.grad(f(jlax))(x), want)
    t = RNG.uniform(-1, 1, A.shape)
    _close(fg.jvp(f(flax), (A,), (t,)), jax.jvp(f(jlax), (A,), (t,)))
    ct = RNG.uniform(-1, 1, np.delete(A.shape, dims))
    got = fg.vjp(f(flax), A)[1](ct)
    _close(got, jax.vjp(f(jlax), A)[1](ct))
    loss = lambda lax_, np_: lambda x: np_.sum(lax_.reduce(x, 0.0, shifted, dims) ** 2)
    _close(fg.grad(loss(flax, fnp))(A / 3), jax.grad(loss(jlax, jnp))(A / 3))
    _close(fg.jit(fg.grad(loss(flax, fnp)))(A / 3), jax.grad(loss(jlax, jnp))(A / 3))
    hf = fg.hessian(lambda x: flax.reduce(x, 0.0, shifted, (0,)))(x / 10)
    hj = jax.hessian(lambda x: jlax.reduce(x, 0.0, shifted, (0,)))(x / 10)
    _close(hf, hj)


def test_reduce_derivative_of_pair_value():
    # JAX's own grad fails here (an int index operand); the value's derivative goes to
    # the chosen entry, as finite differences say
    g = fg.grad(
        lambda v: fnp.sum(flax.reduce((v, IDX), (-np.inf, np.int32(0)), argmax_pair(fnp), (1,))[0])
    )(V)
    want = np.zeros_like(V)
    want[0, 2] = want[1, 1] = 1.0
    _close(g, want)


def test_reduce_errors():
    for init in (0, np.int32(0)):  # dtype mismatch
        with pytest.raises(TypeError):
            jlax.reduce(A, init, lin, (0,))
        with pytest.raises(TypeError, match="reduce"):
            flax.reduce(A, init, lin, (0,))
    with pytest.raises(ValueError):
        jlax.reduce(A, np.zeros(2), lin, (0,))
    with pytest.raises(ValueError, match="reduce"):
        flax.reduce(A, np.zeros(2), lin, (0,))
    pair = lambda a, b: (a[0] + 2 * b[0], a[1] + 2 * b[1])
    with pytest.raises(ValueError):
        jlax.reduce((A, A), (0.0,), pair, (0,))
    with pytest.raises(ValueError, match="reduce"):
        flax.reduce((A, A), (0.0,), pair, (0,))
    with pytest.raises(ValueError):  # returns two values for one operand
        jlax.reduce(A, 0.0, lambda a, b: (a + b, a), (0,))
    with pytest.raises(ValueError, match="reduce"):
        flax.reduce(A, 0.0, lambda a, b: (a + b, a), (0,))
    with pytest.raises(ValueError):  # returns another dtype
        jlax.reduce(A, 0.0, lambda a, b: (a + b).astype(jnp.int32), (0,))
    with pytest.raises(ValueError, match="reduce"):
        flax.reduce(A, 0.0, lambda a, b: (a + b).astype(fnp.int32), (0,))
    with pytest.raises(ValueError):  # operands of different shapes
        jlax.reduce((A, A[:1]), (0.0, 0.0), pair, (0,))
    with pytest.raises(ValueError, match="reduce"):
        flax.reduce((A, A[:1]), (0.0, 0.0), pair, (0,))
    with pytest.raises(IndexError):
        jlax.reduce(A, 0.0, lin, (3,))
    with pytest.raises(IndexError, match="reduce"):
        flax.reduce(A, 0.0, lin, (3,))
    for dims in ((-1,), (0, 0)):
        with pytest.raises(ValueError):
            jlax.reduce(A, 0.0, lin, dims)
        with pytest.raises(ValueError, match="reduce"):
            flax.reduce(A, 0.0, lin, dims)
    # a derivative through the initial value: JAX refuses it in both modes
    for transform in (jax.grad, fg.grad):
        mod = jlax if transform is jax.grad else flax
        with pytest.raises(NotImplementedError):
            transform(lambda i, mod=mod: mod.reduce(A, i, lin, (0, 1, 2)))(0.0)
    with pytest.raises(NotImplementedError):
        fg.jvp(lambda i: flax.reduce(A, i, lin, (0, 1, 2)), (0.0,), (1.0,))


WINDOWS = [
    ((2, 2, 2), (1, 1, 1), "VALID", None, None),
    ((1, 2, 3), (1, 2, 1), "SAME", None, None),
    ((2, 1, 2), (2, 1, 1), ((1, 0), (0, 1), (2, 1)), None, None),
    ((1, 2, 2), (1, 1, 2), ((0, 0), (1, 1), (0, 1)), (1, 2, 1), (1, 1, 2)),
]


@pytest.mark.parametrize("comp", [lin, mul, shifted], ids=["lin", "mul", "shifted"])
@pytest.mark.parametrize("w", range(len(WINDOWS)))
def test_reduce_window_values(comp, w):
    win, strides, pad, bdil, wdil = WINDOWS[w]
    init = 1.0 if comp is mul else 0.0

    def f(lax_):
        return lambda x: lax_.reduce_window(x, init, comp, win, strides, pad, bdil, wdil)

    want = f(jlax)(A)
    _close(f(flax)(A), want)
    _close(fg.jit(f(flax))(A), want)
    t = RNG.uniform(-1, 1, A.shape)
    _close(fg.jvp(f(flax), (A,), (t,)), jax.jvp(f(jlax), (A,), (t,)))
    B = np.stack([A, A[::-1] * 2])
    got = fg.vmap(f(flax))(B)
    _close(got, jax.vmap(f(jlax))(B))
    _close(got, np.stack([np.asarray(f(flax)(b)) for b in B]))


def test_reduce_window_pairs_and_integers():
    comp = lambda a, b: a * 3 + b
    _close(
        flax.reduce_window(IA, np.int32(0), comp, (2, 2, 1), (1, 1, 1), "SAME"),
        jlax.reduce_window(IA, np.int32(0), comp, (2, 2, 1), (1, 1, 1), "SAME"),
    )
    init = (-np.inf, np.int32(0))
    args = ((1, 2), (1, 1), "VALID")
    got = flax.reduce_window((V, IDX), init, argmax_pair(fnp), *args)
    _close(got, jlax.reduce_window((V, IDX), init, argmax_pair(jnp), *args))
    pair = lambda a, b: (a[0] + b[0], a[1] * b[1])
    _close(
        flax.reduce_window((A, A), (0.0, 1.0), pair, (2, 1, 2), (1, 1, 1), "VALID"),
        jlax.reduce_window((A, A), (0.0, 1.0), pair, (2, 1, 2), (1, 1, 1), "VALID"),
    )
    # forward mode through the pair: the value's tangent is the chosen entry's (JAX's own
    # jvp fails here, on the int index operand)
    t = RNG.uniform(-1, 1, V.shape)
    f = lambda v: flax.reduce_window((v, IDX), init, argmax_pair(fnp), *args)[0]
    out, tout = fg.jvp(f, (V,), (t,))
    _close(out, got[0])
    _close(tout, np.take_along_axis(t, np.asarray(got[1]), 1))


def test_reduce_window_errors():
    args = ((2, 2, 2), (1, 1, 1), "VALID")
    with pytest.raises(ValueError, match="Linearization failed"):
        jax.grad(lambda x: jlax.reduce_window(x, 0.0, lin, *args).sum())(A)
    with pytest.raises(ValueError, match="reverse-mode"):
        fg.grad(lambda x: fnp.sum(flax.reduce_window(x, 0.0, lin, *args)))(A)
    with pytest.raises(TypeError):
        jax.jvp(lambda i: jlax.reduce_window(A, i, lin, *args), (0.0,), (1.0,))
    with pytest.raises(TypeError, match="init_value_tangent"):
        fg.jvp(lambda i: flax.reduce_window(A, i, lin, *args), (0.0,), (1.0,))
    with pytest.raises(NotImplementedError):
        jax.vmap(lambda i: jlax.reduce_window(A, i, lin, *args))(np.zeros(2))
    with pytest.raises(NotImplementedError):
        fg.vmap(lambda i: flax.reduce_window(A, i, lin, *args))(np.zeros(2))
    pair = lambda a, b: (a[0] + b[0], a[1] + b[1])
    for mod in (jlax, flax):
        with pytest.raises(ValueError):  # operands and init_values of other structures
            mod.reduce_window((A, A), (0.0,), pair, *args)
    bad = [
        (A, 0, lin, *args),  # init dtype
        (A, np.zeros(2), lin, *args),  # init shape
        (A, 0.0, lin, (2, 2), (1, 1, 1), "VALID"),  # window rank
        (A, 0.0, lin, (0, 1, 1), (1, 1, 1), "VALID"),  # empty window
    ]
    for a in bad:
        with pytest.raises(TypeError):
            jlax.reduce_window(*a)
        with pytest.raises(TypeError, match="reduce_window"):
            flax.reduce_window(*a)
