"""``funcgrad.lax.ragged_dot_general`` against JAX 0.10.2: values in its three modes
(ragged free, contracted and batch dimension; 1-d and per-batch group sizes), eagerly and
under ``jit``; gradients where JAX has them (the free-dimension mode); ``vmap`` over every
operand; the shape errors in JAX's words. (The registry tests check the primitive's
rules: JVP against finite differences, VJP against the JVP, batching, the host rule.)"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg

JR, FR = jax.lax.RaggedDotDimensionNumbers, fg.lax.RaggedDotDimensionNumbers

CASES = {
    "free": ((6, 3), (3, 3, 4), [2, 0, 3], (((1,), (1,)), ((), ())), [0], [0]),
    "free_group_dim_last": ((5, 3), (3, 4, 2), [4, 1], (((1,), (0,)), ((), ())), [0], [2]),
    "contracted": ((4, 5), (5, 3), [2, 3], (((1,), (0,)), ((), ())), [1], []),
    "contracted_batched": (
        (2, 5, 3),
        (2, 3, 4),
        [[1, 2], [3, 0]],
        (((2,), (1,)), ((0,), (0,))),
        [2],
        [],
    ),
    "free_batched": (
        (2, 4, 3),
        (2, 3, 5, 2),
        [[1, 3], [4, 0]],
        (((2,), (1,)), ((0,), (0,))),
        [1],
        [3],
    ),
    "batch": ((2, 4, 3), (2, 3, 5), [1, 1], (((2,), (1,)), ((0,), (0,))), [0], []),
}


def _args(case, seed=0):
    ls, rs, gs, dims, lr, rg = CASES[case]
    rng = np.random.default_rng(seed)
    lhs = rng.standard_normal(ls).astype(np.float32)
    rhs = rng.standard_normal(rs).astype(np.float32)
    return lhs, rhs, np.asarray(gs, np.int32), (dims, lr, rg)


@pytest.mark.parametrize("case", CASES)
def test_values(case):
    lhs, rhs, gs, d = _args(case)
    want = jax.lax.ragged_dot_general(lhs, rhs, gs, JR(*d))
    ours = fg.lax.ragged_dot_general(lhs, rhs, gs, FR(*d))
    jitted = fg.jit(lambda a, b, g: fg.lax.ragged_dot_general(a, b, g, FR(*d)))(lhs, rhs, gs)
    for got in (ours, jitted):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["free", "free_group_dim_last", "free_batched", "batch"])
def test_gradients(case):
    lhs, rhs, gs, d = _args(case)

    def loss(lib, R):
        return lambda a, b: (lib.lax.ragged_dot_general(a, b, gs, R(*d)) ** 2).sum()

    if case == "batch":  # (JAX's rule lacks this mode: the plain dot it equals)
        dot = lambda a, b: (jax.lax.dot_general(a, b, d[0]) ** 2).sum()
        want = jax.grad(dot, (0, 1))(lhs, rhs)
    else:
        want = jax.grad(loss(jax, JR), (0, 1))(lhs, rhs)
    got = fg.grad(loss(fg, FR), (0, 1))(lhs, rhs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["free", "contracted", "free_batched"])
@pytest.mark.parametrize(
    "in_axes", [(0, 0, 0), (0, None, None), (None, 0, 0), (0, 0, None), (None, None, 0)]
)
def test_vmap(case, in_axes):
    lhs, rhs, gs, d = _args(case)
    n = 3
    stack = lambda x, ax, k: x if ax is None else np.stack([x + k * i for i in range(n)])
    args = [stack(lhs, in_axes[0], 0.5), stack(rhs, in_axes[1], -0.25), stack(gs, in_axes[2], 0)]
    if in_axes[2] is not None:  # group sizes that differ per example, same total
        args[2] = np.stack([np.roll(gs, i) for i in range(n)])
    # JAX's vmap of it maps axis 0 of every operand only: JAX's values example by example
    pick = lambda x, ax, i: x if ax is None else x[i]
    want = np.stack(
        [
            jax.lax.ragged_dot_general(*(pick(a, ax, i) for a, ax in zip(args, in_axes)), JR(*d))
            for i in range(n)
        ]
    )
    got = fg.vmap(lambda a, b, g: fg.lax.ragged_dot_general(a, b, g, FR(*d)), in_axes)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


ERRORS = [
    ((11, 5), (3, 5, 7), (3,), (((1,), (1,)), ((), ())), [0, 1], [0]),
    ((11, 5), (3, 5, 7), (3,), (((1,), (1,)), ((), ())), [2], [0]),
    ((19, 17, 11, 5), (3, 19, 5, 7), (19, 11, 3), (((3,), (2,)), ((0,), (1,))), [2], [0]),
    ((11, 5), (3, 5, 7), (2,), (((1,), (1,)), ((), ())), [0], [0]),
    ((19, 11, 5), (19, 5, 7), (19, 3), (((2,), (1,)), ((0,), (0,))), [1], [0]),
    ((2, 11, 5), (3, 2, 5, 7), (3,), (((2,), (2,)), ((0,), (1,))), [0], [0]),
    ((11, 5), (5, 7), (3,), (((1,), (0,)), ((), ())), [0], []),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_shape_errors(i):
    ls, rs, gss, dims, lr, rg = ERRORS[i]
    msgs = []
    for lib, R in ((jax, JR), (fg, FR)):
        with pytest.raises(TypeError) as info:
            lib.lax.ragged_dot_general(
                np.ones(ls, np.float32),
                np.ones(rs, np.float32),
                np.ones(gss, np.int32),
                R(dims, lr, rg),
            )
        msgs.append(str(info.value).split("\n")[0])
    assert msgs[1].endswith(msgs[0])


def test_result_shapes():
    for ls, rs, gss, dims, lr, rg, want in [
        ((11, 5), (3, 5, 7), (3,), (((1,), (1,)), ((), ())), [0], [0], (11, 7)),
        ((11, 5), (5, 7), (3,), (((1,), (0,)), ((), ())), [1], [], (3, 11, 7)),
        ((2, 11, 5), (2, 5, 7), (2, 3), (((2,), (1,)), ((0,), (0,))), [2], [], (3, 2, 11, 7)),
    ]:
        args = np.ones(ls, np.float32), np.ones(rs, np.float32), np.ones(gss, np.int32)
        assert fg.lax.ragged_dot_general(*args, FR(dims, lr, rg)).shape == want
        assert jax.lax.ragged_dot_general(*args, JR(dims, lr, rg)).shape == want
