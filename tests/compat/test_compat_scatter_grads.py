"""Gradients of writes at repeated places, compared with real PyTorch: ``scatter``/
``scatter_``, ``index_put``/``index_put_``, ``put`` and ``x[idx] = v`` give every
written value its place's gradient (``grad.gather``), the overwritten writes included,
where funcgrad's ``.at[].set`` (like JAX) gives it to the winning write only; and
``scatter`` with ``reduce=`` has no derivative, as in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch
from tests.compat.torch_oracle import npv

_IDX = [[0, 0, 1, 1], [2, 2, 2, 0]]


def _grads(lib, f, x0, v0):
    """The gradients of ``x`` and ``v`` of ``sum(f(x, v) * w)`` with distinct weights."""
    x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
    v = lib.tensor(v0, dtype=lib.float64, requires_grad=True)
    y = f(lib, x, v)
    w = lib.arange(1, y.numel() + 1, dtype=lib.float64).reshape(y.shape)
    (y * w).sum().backward()
    return npv(x.grad), npv(v.grad)


def _scatter(lib, x, v):
    return x.scatter(1, lib.tensor(_IDX), v)


def _scatter_inplace(lib, x, v):
    y = x.clone()
    y.scatter_(1, lib.tensor(_IDX), v)
    return y


def _index_put(lib, x, v):
    return x.index_put((lib.tensor([0, 1, 0]), lib.tensor([2, 1, 2])), v[0, :3])


def _index_put_inplace(lib, x, v):
    y = x.clone()
    y.index_put_((lib.tensor([1, 1]),), v[:, :3])
    return y


def _put(lib, x, v):
    return x.put(lib.tensor([4, 0, 4, 4]), v[1])


def _setitem_rows(lib, x, v):
    y = x.clone()
    y[lib.tensor([0, 1, 0])] = v[0, :3]  # a broadcast value
    return y


def _setitem_phases(lib, x, v):
    y = x.clone()
    y[1, lib.tensor([2, 0, 2, 2])] = v[1]  # an integer, then an index array
    return y


def _setitem_pairs(lib, x, v):
    y = x.clone()
    y[lib.tensor([1, 1, 0]), lib.tensor([0, 0, 2])] = v[0, :3]
    return y


@pytest.mark.parametrize(
    "f",
    [
        _scatter,
        _scatter_inplace,
        _index_put,
        _index_put_inplace,
        _put,
        _setitem_rows,
        _setitem_phases,
        _setitem_pairs,
    ],
)
def test_repeated_writes_share_gradient(real_torch, f):
    x0 = np.arange(6.0).reshape(2, 3) / 7
    v0 = np.arange(1.0, 9.0).reshape(2, 4)
    got = _grads(ctorch, f, x0, v0)
    want = _grads(real_torch, f, x0, v0)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_scatter_forward_value_unchanged(real_torch):
    """Without repeated places the written values are PyTorch's."""
    x0 = np.zeros((2, 3))
    v0 = np.arange(1.0, 7.0).reshape(2, 3)
    idx = [[2, 0, 1], [1, 2, 0]]
    got = ctorch.tensor(x0).scatter(1, ctorch.tensor(idx), ctorch.tensor(v0))
    want = real_torch.tensor(x0).scatter(1, real_torch.tensor(idx), real_torch.tensor(v0))
    np.testing.assert_array_equal(npv(got), npv(want))


@pytest.mark.filterwarnings("ignore:The reduce argument")
@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("scalar", [False, True])
def test_scatter_reduce_arg_has_no_derivative(real_torch, reduce, scalar):
    for lib in (ctorch, real_torch):
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        src = 2.0 if scalar else lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        y = x.scatter(1, lib.tensor([[0, 0], [1, 2]]), src, reduce=reduce)
        assert y.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            y.sum().backward()


def _fw_scatter(lib, x, v):
    return x.scatter(0, lib.tensor([0, 0, 2]), v)


def _fw_setitem(lib, x, v):
    y = x.clone()
    y[lib.tensor([0, 0, 2])] = v
    return y


# (real PyTorch's make_dual calls a scripted function: torch.jit.script's deprecation)
@pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")
@pytest.mark.parametrize("f", [_fw_scatter, _fw_setitem])
def test_forward_mode_keeps_winning_tangent(real_torch, f):
    """Forward mode keeps PyTorch's formula (the winning write's tangent, consistent
    with the value) where reverse mode uses the gathered gradient."""
    outs = []
    for lib in (ctorch, real_torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64))
            v = fw.make_dual(
                lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64),
                lib.tensor([10.0, 20.0, 30.0], dtype=lib.float64),
            )
            p, t = fw.unpack_dual(f(lib, x, v))
            outs.append((npv(p).tolist(), npv(t).tolist()))
    # the winning write is the last one in both (PyTorch does not promise an order)
    assert outs[0] == outs[1]
