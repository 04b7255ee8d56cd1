"""``chunk_size`` of ``vmap``/``jacrev``/``jacfwd``: results equal JAX's unchunked
transforms, the chunks run as one ``scan``, and XLA's memory analysis of the compiled
program shows the temporaries shrinking with the chunk size."""

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp


def _close(a, b, tol=1e-6):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


@given(
    size=st.integers(1, 9),
    k=st.integers(1, 11),
    axis=st.integers(0, 1),
    out_axis=st.integers(0, 2),
)
def test_vmap_chunks_equal_jax(size, k, axis, out_axis):
    rng = np.random.default_rng(size * 100 + k)
    shape = (size, 3) if axis == 0 else (3, size)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((3, 2))

    def f(np_, x, w, s):
        return {"y": np_.sin(x) @ w * s, "n": (np_.cos(w) * s).sum()}

    got = fg.vmap(
        lambda x, w, s: f(fnp, x, w, s),
        in_axes=(axis, None, None),
        out_axes={"y": out_axis % 2, "n": None},
        chunk_size=k,
    )(x, w, 2.0)
    want = jo.vmap(
        lambda x, w, s: f(jnp, x, w, s),
        in_axes=(axis, None, None),
        out_axes={"y": out_axis % 2, "n": None},
    )(x, w, 2.0)
    _close(got, want)
    # an unbatched output forced to a batch axis is broadcast, as unchunked
    got0 = fg.vmap(lambda x: (x.sum(), 1.0 * w), chunk_size=k)(x if axis == 0 else x.T)
    assert got0[1].shape == (size, 3, 2)
    _close(got0[0], (x if axis == 0 else x.T).sum(1))


@settings(max_examples=3)  # each example compiles 4 chunked loops and 4 JAX Jacobians
@given(n=st.integers(1, 7), m=st.integers(1, 6), k=st.integers(1, 8))
def test_jacobians_chunked_equal_jax(n, m, k):
    rng = np.random.default_rng(n * 64 + m * 8 + k)
    x = rng.standard_normal(n)
    y = rng.standard_normal((2, n))
    a = rng.standard_normal((m, n))

    def f(np_, x, y):
        return np_.tanh(a @ x) * (y.sum() + 1.0), {"s": np_.sin(y * x)}

    for ours, theirs in ((fg.jacrev, jax.jacrev), (fg.jacfwd, jax.jacfwd)):
        got = ours(lambda x, y: f(fnp, x, y), argnums=(0, 1), chunk_size=k)(x, y)
        # the JAX oracles compiled whole (eagerly they would compile every primitive)
        _close(got, jax.jit(theirs(lambda x, y: f(jnp, x, y), argnums=(0, 1)))(x, y))
        got, aux = ours(lambda x: (f(fnp, x, y)[0], x.sum()), has_aux=True, chunk_size=k)(x)
        want, waux = jax.jit(theirs(lambda x: (f(jnp, x, y)[0], x.sum()), has_aux=True))(x)
        _close((got, aux), (want, waux))


def test_chunked_vmap_is_one_scan():
    x = np.ones((10, 3))
    prog = fg.jit(fg.vmap(lambda v: fnp.sin(v) * 2.0, chunk_size=4)).trace(x).jaxpr
    names = [e.prim.name for e in prog.eqns]
    assert names.count("scan") == 1  # the 2 full chunks: one loop, not a Python loop
    scan = next(e for e in prog.eqns if e.prim.name == "scan")
    assert scan.params["length"] == 2
    assert [v.aval.shape for v in scan.outvars] == [(2, 4, 3)]
    # the remainder (10 % 4 = 2 examples): one batched call on the tail
    assert any(e.prim.name == "concatenate" for e in prog.eqns)
    # no chunking when the chunk holds everything
    prog = fg.jit(fg.vmap(lambda v: fnp.sin(v), chunk_size=10)).trace(x).jaxpr
    assert "scan" not in [e.prim.name for e in prog.eqns]


def test_chunked_vmap_eager_jit_and_grad():
    x = np.linspace(0.0, 1.0, 12).reshape(6, 2)

    def loss(x):
        return fg.vmap(lambda v: fnp.sum(fnp.sin(v) ** 2), chunk_size=4)(x).sum()

    want = jo.grad(lambda x: jnp.sum(jnp.sin(x) ** 2))(x)
    _close(fg.grad(loss)(x), want)
    _close(fg.jit(fg.grad(loss))(x), want)
    # nothing mapped, the size from axis_size: the chunks still add up
    got = fg.vmap(lambda w: w * 2.0, in_axes=None, axis_size=5, chunk_size=2)(x[0])
    _close(got, np.broadcast_to(x[0] * 2.0, (5, 2)))
    # nested: chunked vmap inside a chunked vmap
    got = fg.vmap(fg.vmap(lambda v: v * 3.0, chunk_size=1), chunk_size=5)(x)
    _close(got, x * 3.0)


@pytest.mark.parametrize("bad", [0, -2])
def test_chunk_size_value_errors(bad):
    for make in (
        lambda: fg.vmap(fnp.sin, chunk_size=bad),
        lambda: fg.jacrev(fnp.sin, chunk_size=bad),
        lambda: fg.jacfwd(fnp.sin, chunk_size=bad),
    ):
        with pytest.raises(ValueError, match="chunk_size must be None or a positive int"):
            make()


@pytest.mark.parametrize("bad", [2.0, "2", True])
def test_chunk_size_type_errors(bad):
    for t in (fg.vmap, fg.jacrev, fg.jacfwd):
        with pytest.raises(TypeError, match=f"{t.__name__}: chunk_size must be None or"):
            t(fnp.sin, chunk_size=bad)
    assert fg.vmap(fnp.sin, chunk_size=np.int64(2))(np.ones(3)).shape == (3,)


def _temp_bytes(fn, *args):
    """XLA's temporaries of the compiled program of ``fg.jit(fn)`` (funcgrad's AOT API)."""
    return fg.jit(fn).lower(*args).compile().memory_analysis().temp_size_in_bytes


def test_peak_memory_falls_with_chunk_size():
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 4096)).astype(np.float32)
    w2 = rng.standard_normal((4096, 8)).astype(np.float32)

    def f(x):
        return fnp.tanh(x @ w1) @ w2

    x = rng.standard_normal((64, 16)).astype(np.float32)
    vm = [_temp_bytes(fg.vmap(f, chunk_size=k), x) for k in (None, 32, 8)]
    assert vm[0] > vm[1] > vm[2]
    assert vm[2] * 4 < vm[0]  # (64, 4096) hidden activations -> (8, 4096)
    for jac in (fg.jacrev, fg.jacfwd):
        mem = [_temp_bytes(jac(f, chunk_size=k), x[0]) for k in (None, 4, 1)]
        assert mem[0] > mem[1] > mem[2], (jac.__name__, mem)


def test_chunked_jacobians_never_hold_the_whole_basis():
    """jacrev of R^4 -> R^4096 (jacfwd of R^4096 -> R^4): unchunked, the 4096 x 4096
    identity is a temporary; chunked, each chunk's rows are made in the loop."""
    w = np.random.default_rng(1).standard_normal((4, 4096)).astype(np.float32)
    eye_bytes = 4096 * 4096 * 4
    x = np.ones(4, np.float32)
    v = np.ones(4096, np.float32)
    jr = fg.jacrev(lambda x: fnp.sin(x @ w), chunk_size=64)
    jf = fg.jacfwd(lambda v: fnp.sin(w @ v), chunk_size=64)
    assert _temp_bytes(fg.jacrev(lambda x: fnp.sin(x @ w)), x) >= eye_bytes
    assert _temp_bytes(jr, x) < eye_bytes // 16
    assert _temp_bytes(jf, v) < eye_bytes // 16
    _close(jr(x), jo.jacrev(lambda x: jnp.sin(x @ w))(x), 1e-5)
    _close(jf(v), jo.jacfwd(lambda v: jnp.sin(w @ v))(v), 1e-5)
