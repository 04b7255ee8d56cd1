"""``chunk_size`` of ``torch.func.vmap``/``jacrev`` on compat (funcgrad's chunked
transforms: one compiled loop) against real ``torch.func``; ``jacfwd`` has no
``chunk_size`` in either; ``autograd.grad(is_grads_batched=True)`` is one pass."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

G = np.random.default_rng(18)
A = G.standard_normal((7, 5)).astype(np.float32)
W = G.standard_normal((5, 3)).astype(np.float32)


def _same(a, b, tol=1e-5):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y, tol)
        return
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(npv(a), npv(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("chunk_size", [None, 1, 3, 7, 10])
def test_vmap_chunk_size(real_torch, chunk_size):
    def run(lib):
        def fn(x, w, scale):
            return {"y": (x @ w).tanh() * scale, "n": x.norm()}

        x, w = lib.tensor(A.T.copy()), lib.tensor(W)
        return lib.func.vmap(
            fn, in_dims=(1, None, None), out_dims={"y": 1, "n": 0}, chunk_size=chunk_size
        )(x, w, 2.0)

    a, b = run(real_torch), run(ctorch)
    assert sorted(a) == sorted(b)
    _same([b["y"], b["n"]], [a["y"], a["n"]])


@pytest.mark.parametrize("chunk_size", [1, 2, 4, 15, 16])
def test_jacrev_chunk_size(real_torch, chunk_size):
    def run(lib):
        w = lib.tensor(W)

        def fn(x, v):
            h = (x @ w).sin()
            return h * v.sum(), (x * v[:1]).exp().sum()

        x, v = lib.tensor(A[0]), lib.tensor(A[1, :3])
        jac = lib.func.jacrev(fn, argnums=(0, 1), chunk_size=chunk_size)(x, v)
        jaux, aux = lib.func.jacrev(
            lambda x: (fn(x, v)[0], x.sum()), has_aux=True, chunk_size=chunk_size
        )(x)
        return [list(jac[0]), list(jac[1]), jaux, aux]

    _same(run(ctorch), run(real_torch))


def test_chunk_size_errors(lib):
    x = lib.ones(4)
    for bad in (0, -1):
        with pytest.raises(ValueError, match=r"vmap: chunk_size should be None or greater than 0"):
            lib.func.vmap(lib.sin, chunk_size=bad)
        with pytest.raises(ValueError, match=r"jacrev: `chunk_size` should be greater than 0"):
            lib.func.jacrev(lib.sin, chunk_size=bad)
    # a non-int chunk size fails when called, with TypeError (PyTorch's from slicing)
    with pytest.raises(TypeError):
        lib.func.vmap(lib.sin, chunk_size=2.5)(x)
    with pytest.raises(TypeError):
        lib.func.jacrev(lib.sin, chunk_size=2.5)(x)
    with pytest.raises(TypeError, match="chunk_size"):
        lib.func.jacfwd(lib.sin, chunk_size=2)


def test_chunked_vmap_of_grad_and_randomness(lib):
    def loss(x):
        return (x.sin() ** 2).sum()

    x = lib.tensor(A)
    g = lib.func.vmap(lib.func.grad(loss), chunk_size=3)(x)
    np.testing.assert_allclose(npv(g), 2 * np.sin(A) * np.cos(A), rtol=1e-5, atol=1e-6)
    lib.manual_seed(0)
    same = lib.func.vmap(lambda r: lib.rand(2) + r, randomness="same", chunk_size=3)(
        lib.zeros(7, 2)
    )
    assert np.allclose(npv(same), npv(same)[0])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        lib.func.vmap(lambda r: lib.rand(2) + r, chunk_size=3)(lib.zeros(7, 2))


def test_is_grads_batched_is_one_pass(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.sin() * 2
    calls = []
    y.register_hook(lambda g: calls.append(1))
    z = y.sum() * y
    (g,) = lib.autograd.grad(z, x, lib.eye(3), is_grads_batched=True)
    assert len(calls) == 1  # the backward ran once, batched over the 3 cotangents
    v = np.array([1.0, 2.0, 3.0], np.float32)
    s = np.sin(v) * 2
    want = np.eye(3) * s.sum() * 2 * np.cos(v) + np.outer(s, 2 * np.cos(v))
    np.testing.assert_allclose(npv(g), want, rtol=1e-5, atol=1e-5)
