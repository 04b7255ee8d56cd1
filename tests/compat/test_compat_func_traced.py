"""``torch.func`` as funcgrad's transforms, against real ``torch.func``.

Per-sample gradients of an ``nn.Module`` (the torch.func showcase), ``chunk_size``,
nested ``vmap`` with ``jacrev``/``jvp``/``hessian`` inside, gradients flowing out of a
``vmap`` into captured parameters, in-place ops inside, data-dependent operations
(an error inside ``vmap``, fine inside ``grad``), and that ``vmap`` calls the
function once (it is one batched program, not a loop), as PyTorch's does.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import assert_close_tree

import compat.torch as ctorch

G = np.random.default_rng(3)
X = G.standard_normal((5, 4)).astype(np.float32)
LABELS = G.integers(0, 3, 5)


TOL = 1e-5  # the default tolerance of this file's comparisons


def both(real_torch, fn):
    return fn(real_torch), fn(ctorch)


def _model(lib):
    g = np.random.default_rng(7)
    m = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 3))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(g.standard_normal(tuple(p.shape)), dtype=lib.float32))
    return m


def test_per_sample_gradients(real_torch):
    """``vmap(grad(loss))`` over ``functional_call``: one gradient per example."""

    def f(lib):
        model = _model(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))

        x, y = lib.tensor(X), lib.tensor(LABELS)
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        gv = lib.func.vmap(lib.func.grad_and_value(loss), in_dims=(None, 0, 0))(params, x, y)
        return grads, gv

    a, b = both(real_torch, f)
    assert_close_tree(b, a, TOL)


@pytest.mark.parametrize("chunk_size", [1, 2, 5, 9])
def test_chunk_size_and_call_count(real_torch, chunk_size):
    def f(lib):
        calls = []

        def fn(x, w):
            calls.append(1)
            return lib.softmax(x[1:3] * w[1:3], -1), (x @ w).sum()

        w = lib.tensor(X[0] + 1)
        out = lib.func.vmap(fn, in_dims=(1, None), out_dims=(1, 0), chunk_size=chunk_size)(
            lib.tensor(X.T.copy()), w
        )
        return out, len(calls)

    a, b = both(real_torch, f)
    assert_close_tree(b[0], a[0], TOL)
    assert a[1] == -(-5 // chunk_size)  # PyTorch calls fn once per chunk (a Python loop)
    assert b[1] == 1  # compat traces fn once: the chunks are one compiled loop


@pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")  # real torch
def test_nested_vmap_and_jacobians(real_torch):
    def f(lib):
        x = lib.tensor(X[:3, :3].astype(np.float64))

        def h(v):
            return (v.sin() * v).sum() + v[0] * v[1] ** 2

        inner = lib.func.vmap(lambda a, b: a * b + a.exp(), in_dims=(0, None))
        nested = lib.func.vmap(inner, in_dims=(0, None))(lib.stack([x, x * 2]), x[0])
        jac = lib.func.vmap(lib.func.jacrev(lambda v: v.tanh() * v[2]))(x)
        jf = lib.func.vmap(lib.func.jacfwd(lambda v: v.cos().cumsum(0)))(x)
        hess = lib.func.vmap(lib.func.hessian(h))(x)
        jv = lib.func.vmap(lambda v, t: lib.func.jvp(h, (v,), (t,)))(x, x.flip(0))
        return nested, jac, jf, hess, jv

    a, b = both(real_torch, f)
    assert_close_tree(b, a, 1e-10)


def test_backward_through_vmap_reaches_captured_parameters(real_torch):
    """Tensors requiring grad that the vmapped function reads (a module's parameters,
    an input) get their gradients from ``backward`` outside."""

    def f(lib):
        model = _model(lib)
        x = lib.tensor(X, requires_grad=True)
        out = lib.func.vmap(lambda v: lib.softmax(model(v), -1)[1:].sum() * v.mean())(x)
        (out * lib.arange(5.0)).sum().backward()
        g2 = lib.func.grad(lambda v: (v * model[0].bias[:4]).sum())(x[0])
        g2.sum().backward()
        return out, x.grad, model[0].weight.grad, model[0].bias.grad, model[2].bias.grad

    a, b = both(real_torch, f)
    assert_close_tree(b, a, TOL)


def test_inplace_inside_vmap_and_values_in_grad(real_torch):
    def f(lib):
        x = lib.tensor(X)

        def g(v):
            y = v.clone()
            y.mul_(2).add_(1)
            y[0] = 0.0
            return y.relu_()

        inplace = lib.func.vmap(g)(x)
        # outside vmap the values are known: Python control flow on them works in grad
        scale = lib.func.grad(lambda v: v.sum() * (2.0 if v.sum().item() > 0 else 3.0))(x[0])
        return inplace, scale

    a, b = both(real_torch, f)
    assert_close_tree(b, a, TOL)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, v: v.sum().item(),
        lambda lib, v: v * 2 if v.sum() > 0 else v,
        lambda lib, v: lib.nonzero(v),
        lambda lib, v: v[v > 0].sum(),
        lambda lib, v: lib.masked_select(v, v > 0),
    ],
    ids=["item", "bool", "nonzero", "bool_mask", "masked_select"],
)
def test_data_dependent_ops_raise_inside_vmap(lib, fn):
    with pytest.raises(RuntimeError):
        lib.func.vmap(lambda v: fn(lib, v))(lib.tensor(X))


def test_data_dependent_error_names_the_op():
    with pytest.raises(RuntimeError, match=r"`nonzero`.*torch\.func\.vmap"):
        ctorch.func.vmap(ctorch.nonzero)(ctorch.tensor(X))


def test_randomness_modes(lib):
    same = lib.func.vmap(lambda x: lib.rand(3) + x, randomness="same", chunk_size=2)(
        lib.zeros(4, 3)
    )
    diff = lib.func.vmap(lambda x: lib.randn(3) + x, randomness="different")(lib.zeros(4, 3))
    d = diff.numpy()
    assert np.allclose(same.numpy(), same.numpy()[0])
    assert not np.allclose(d, d[0]) and len({tuple(r) for r in d.round(6)}) == 4
    with pytest.raises(RuntimeError):
        lib.func.vmap(lambda x: lib.nn.functional.dropout(x, 0.5) + x)(lib.ones(2, 3))


OPS = {
    "index": lambda L, v: v[1, 2:4] + v[-1][::2].sum(),
    "index_tensor": lambda L, v: v[L.tensor([0, 2])] * 2,
    "softmax": lambda L, v: L.softmax(v, -1),
    "matmul": lambda L, v: v @ v.T,
    "layer_norm": lambda L, v: L.nn.functional.layer_norm(v, (5,)),
    "cat_stack": lambda L, v: L.cat([v, v * 2], 0).sum(0) + L.stack([v, v]).mean(0)[0],
    "views": lambda L, v: v.view(20).reshape(5, 4).transpose(0, 1).contiguous().flatten(),
    "where": lambda L, v: L.where(v > 0, v, L.zeros_like(v)),
    "sort": lambda L, v: L.sort(v, dim=-1).values,
    "gather": lambda L, v: L.gather(v, 1, L.tensor([[0], [1], [2], [3]])),
    "setitem": lambda L, v: (lambda y: (y.__setitem__((0, slice(1, 3)), 7.0), y)[1])(v.clone()),
    "new_tensor": lambda L, v: v + L.tensor([1.0, 2, 3, 4, 5]),
    "embedding": lambda L, v: L.nn.functional.embedding(L.tensor([0, 3]), v),
}


@pytest.mark.parametrize("with_grad", [False, True], ids=["vmap", "vmap_grad"])
def test_common_ops_under_vmap(real_torch, with_grad):
    """Indexing, views, softmax, matmul, creation inside: ``vmap`` and ``vmap(grad)``."""
    x = G.standard_normal((3, 4, 5)).astype(np.float32)

    def f(lib):
        out = []
        for op in OPS.values():
            if with_grad:
                fn = lib.func.grad(lambda v, op=op: (op(lib, v) ** 2).sum())
            else:
                fn = lambda v, op=op: op(lib, v)
            out.append(lib.func.vmap(fn)(lib.tensor(x)))
        out.append(
            lib.func.vmap(lambda v: lib.nn.functional.one_hot(v.argmax(-1), 5))(lib.tensor(x))
        )
        return out

    a, b = both(real_torch, f)
    assert_close_tree(b, a, 1e-4)
