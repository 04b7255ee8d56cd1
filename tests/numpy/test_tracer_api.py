"""The array API of tracers (API.md: .shape, .dtype, .T, .sum(), .reshape(), x[i], .astype,
.at[...]) under jit and grad, sorting, and the ``fnp.ndarray`` type."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fnp_testutil import F32, I32, assert_same, check, rand, seeds
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.nn as fnn
import funcgrad.numpy as fnp

X = rand(np.random.default_rng(0), (3, 4), F32)


def model(x):
    """Uses every method API.md lists, plus a few more."""
    assert x.shape == (3, 4) and x.ndim == 2 and x.size == 12 and len(x) == 3
    assert x.dtype == np.float32
    h = x.T @ x  # (4, 4)
    h = h.reshape(2, 8).reshape((16,)).reshape(4, -1)
    y = h.sum(axis=0) + x[1] * 2 - x[-1, ::-1]
    y = y.at[0].set(y[1]).at[1:3].add(1.0).at[np.array([3])].multiply(2.0)
    z = fnp.tanh(y).astype(np.float32) + x.mean() - x.max(axis=1).sum()
    return (z**2).sum() + fnn.logsumexp(x) + x.astype(np.int32).astype(np.float32).sum() * 0


def test_methods_under_jit_and_grad() -> None:
    jm = jax.jit(model)
    assert_same(fg.jit(model)(X), jm(X))
    assert_same(fg.grad(model)(X), jax.grad(model)(X))
    assert_same(fg.jit(fg.grad(model))(X), jax.grad(model)(X))
    v, _ = fg.value_and_grad(model)(X)
    assert_same(v, jm(X))


def test_vmap_of_methods() -> None:
    def row(r):
        return (r.reshape(2, 2).T * r[0]).sum() + r.at[1].set(0.0).max()

    assert_same(fg.vmap(row)(X), jax.vmap(row)(X))
    assert_same(fg.jit(fg.vmap(fg.grad(row)))(X), jax.vmap(jax.grad(row))(X))


def test_grad_through_indexing_and_shape_ops() -> None:
    idx = np.array([2, 0, 2])

    def f(x):
        a = x[idx][:, ::-1]  # gather (with a repeated index) + reversed slice
        b = fnp.take_along_axis(x, np.argsort(np.asarray(X), axis=1), axis=1)
        c = fnp.concatenate([fnp.pad(x, 1)[1:-1, 1:-1], fnp.roll(x, 1, axis=0)], axis=1)
        d = fnp.einsum("ij,kj->ik", x, fnp.flip(x, 0)) + fnp.tril(x @ x.T)
        return (
            (a**2).sum() + (b * c[:, :4]).sum() + fnp.linalg.norm(d) + fnp.where(x > 0, x, 0).sum()
        )

    assert_same(fg.grad(f)(X), jax.grad(f)(X), scale=10.0)


def test_at_get_and_static_methods() -> None:
    def f(x):
        return x.at[1].get() + x.at[:, 0].get().sum()

    assert_same(fg.jit(f)(X), f(jnp.asarray(X)))


def test_ndarray_isinstance() -> None:
    seen = {}

    def f(x):
        seen["tracer"] = isinstance(x, fnp.ndarray)
        return x

    fg.jit(f)(X)
    assert seen["tracer"]
    assert isinstance(fnp.ones(2), fnp.ndarray) and not isinstance([1], fnp.ndarray)
    assert fnp.ndim(X) == 2 and fnp.shape(X) == (3, 4) and fnp.size(X) == 12 and fnp.size(X, 1) == 4
    assert fnp.isscalar(1.0) and not fnp.isscalar(X)


@given(
    seed=seeds,
    axis=st.sampled_from([-1, 0, None]),
    descending=st.booleans(),
    kind=st.sampled_from([F32, I32]),
)
def test_sort_argsort(seed: int, axis, descending: bool, kind) -> None:
    rng = np.random.default_rng(seed)
    x = rand(rng, (3, 4), kind, -2, 2)  # integer values: ties, to check stability
    check(
        lambda a: fnp.sort(a, axis=axis, descending=descending),
        lambda a: jnp.sort(a, axis=axis, descending=descending),
        x,
    )
    check(
        lambda a: fnp.argsort(a, axis=axis, descending=descending),
        lambda a: jnp.argsort(a, axis=axis, descending=descending),
        x,
    )


def test_sort_grad_and_methods() -> None:
    def f(x):
        return (
            (fnp.sort(x, axis=0) * np.arange(4.0)).sum() + x.sort().sum() + x.argsort(axis=0).sum()
        )

    assert_same(fg.grad(f)(X), jax.grad(f)(X))
    check(fnp.msort, lambda a: jnp.sort(a, axis=0), X)
    with pytest.raises(ValueError, match="sort"):
        fnp.sort(2.0)


_VIEW_DTYPES = ["bool", "int8", "uint8", "int16", "float16", "bfloat16", "int32", "uint32",
                "float32", "complex64"]  # fmt: skip


@pytest.mark.parametrize("src", _VIEW_DTYPES)
@pytest.mark.parametrize("dst", _VIEW_DTYPES)
def test_view_as_other_dtypes(src: str, dst: str) -> None:
    """``x.view(dtype)`` on traced arrays: the bits of jax.Array's view, the last axis
    resized by the width ratio (compared bytewise: XLA may flush denormal floats)."""
    rng = np.random.default_rng(0)
    if src == "bool":
        x = rng.integers(0, 2, (2, 8)).astype(bool)
    else:
        x = rng.integers(0, 100, (2, 8)).astype(src)
    want = jnp.asarray(x).view(dst)
    got = fg.jit(lambda a: a.view(dst))(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    # bytes other than 0/1 viewed as bool are implementation-defined: JAX's result then
    ref = np.asarray(want) if dst == "bool" else np.asarray(x).view(dst)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), ref.view(np.uint8))


def test_byteswap_and_tobytes() -> None:
    x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    for dt in ("int32", "float32", "int16", "uint8", "bool"):
        a = x.astype(dt)
        assert_same(fg.jit(lambda v: v.byteswap())(a), jnp.asarray(a).byteswap())
    # tobytes needs the value: known under eager grad, a concretization error under jit
    seen = []
    fg.grad(lambda v: (seen.append(v.tobytes()), v.sum())[1])(x.astype(np.float32))
    assert seen == [x.astype(np.float32).tobytes()]
    with pytest.raises(fg.errors.ConcretizationTypeError, match=r"The tobytes\(\) method"):
        fg.jit(lambda v: v.tobytes())(x)
