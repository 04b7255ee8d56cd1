"""The pullback ``vjp`` returns, as JAX 0.10's ``VJP``: ``args_res`` (the primal inputs
the backward pass reads, droppable and restorable), ``opaque_residuals``, a pytree
that passes through ``jit``, and JAX's errors for a wrong cotangent or call. JAX is the
oracle for every value and message."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp


def _lib(which):
    return (fg, fnp) if which == "fg" else (jax, jnp)


def _close(a, b):
    jax.tree_util.tree_map(
        lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y), 1e-5, 1e-6), a, b
    )


def test_args_res_dropped_and_restored():
    def run(which):
        t, _ = _lib(which)
        primals = [np.float32(2.0), np.float32(3.0)]
        y, f_vjp = t.vjp(lambda x, y: x * y, *primals)
        if which == "fg":  # both are read by the backward pass (JAX may save copies)
            assert [np.asarray(a) for a in f_vjp.args_res] == primals
        f_vjp.args_res = [None, None]
        f_vjp.args_res = primals
        return y, f_vjp(np.float32(1.0))

    _close(run("fg"), run("jax"))


def test_args_res_item_restored_and_pytree_arguments():
    def run(which):
        t, m = _lib(which)

        def f2(x, w):
            return 2.0 * ((1.0 * x) @ w)

        x, w = m.ones((3, 4)), m.arange(16.0).reshape(4, 4) / 10
        y, f_vjp = t.vjp(f2, x, w)
        f_vjp.args_res[1] = None
        f_vjp.args_res[1] = w
        _, g_vjp = t.vjp(lambda d: [d["hi"] * d["bye"]], {"hi": 2.0, "bye": 3.0})
        g_vjp.args_res = [None]
        g_vjp.args_res = [{"hi": 2.0, "bye": 3.0}]
        return f_vjp(m.ones_like(y)), g_vjp([1.0])

    _close(run("fg"), run("jax"))


def test_pullback_passes_through_jit():
    def run(which):
        t, _ = _lib(which)

        @t.jit
        def g():
            y, f_vjp = t.vjp(lambda x, y: x * y, 2.0, 3.0)
            f_vjp.args_res = [None, None]
            return y, f_vjp

        @t.jit
        def h(f_vjp):
            f_vjp.args_res = [2.0, 3.0]
            return f_vjp(1.0)

        y, f_vjp = g()
        return y, h(f_vjp)

    _close(run("fg"), run("jax"))


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 4), st.sampled_from(["sin", "mul", "matmul"]))
def test_residuals_reassemble_after_flattening(n, op):
    """Flattening the pullback and rebuilding it from its leaves (what jit does) gives
    JAX's cotangents; the primal leaves it keeps are exactly the inputs it reads."""
    x = np.linspace(0.1, 1.0, n * n, dtype=np.float32).reshape(n, n)
    fns = {
        "sin": lambda t, m: lambda a, b: m.sin(a) * 2.0,
        "mul": lambda t, m: lambda a, b: a * b,
        "matmul": lambda t, m: lambda a, b: m.tanh(a @ b),
    }
    _, f_vjp = fg.vjp(fns[op](fg, fnp), x, x + 1)
    leaves, tree = jax.tree_util.tree_flatten(f_vjp)
    rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
    want_out, j_vjp = jax.vjp(fns[op](jax, jnp), x, x + 1)
    ct = np.ones_like(np.asarray(want_out))
    _close(rebuilt(ct), j_vjp(ct))
    if op == "sin":  # b is not read by the backward pass
        assert repr(f_vjp.args_res[1]) == "NotNeeded()"
        assert not jax.tree_util.tree_leaves(f_vjp.args_res[1])


def _pullback_errors(which):
    t, m = _lib(which)
    _, pb = t.vjp(lambda x, y: x * y, np.float32(3), np.float32(4))
    yield ValueError, "unexpected tree structure", lambda: pb((np.float32(7), np.float32(1)))
    yield ValueError, "unexpected JAX type", lambda: pb(np.float16(42))
    _, pb2 = t.vjp(m.matmul, np.ones((2, 5), np.float32), np.ones((5, 3), np.float32))
    yield (
        ValueError,
        r"unexpected JAX type \(e.g. shape/dtype\) for argument to VJP function: got "
        r"float32\[2,4\], but expected float32\[2,3\]",
        lambda: pb2(np.ones((2, 4), np.float32)),
    )

    def foo(x):
        return (x, x)

    _, pb3 = t.vjp(foo, 1.0)
    yield TypeError, "applied to foo was called with 2 arguments", lambda: pb3(1.0, 1.0)


def test_pullback_errors_match_jax():
    for (fe, fm, fcall), (je, jm, jcall) in zip(
        _pullback_errors("fg"), _pullback_errors("jax"), strict=True
    ):
        with pytest.raises(je, match=jm):
            jcall()
        with pytest.raises(fe, match=fm):
            fcall()


def test_missing_residual_is_a_clear_error():
    _, f_vjp = fg.vjp(lambda x, y: x * y, 2.0, 3.0)
    f_vjp.args_res = [None, None]
    with pytest.raises(ValueError, match="needed by the backward pass"):
        f_vjp(1.0)
