"""Optimizers meeting ``nn.Embedding(sparse=True)``'s sparse gradients as PyTorch 2.13's:
SGD (with momentum, Nesterov, maximize), Adagrad and SparseAdam step on them to PyTorch's
values; the others, and SGD/Adagrad with weight decay, refuse with PyTorch's message;
SparseAdam refuses a dense gradient."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch

# (PyTorch's sparse Adagrad warns once that its sparse invariant checks are off)
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")


def _train(lib, name, kwargs, steps=3):
    lib.manual_seed(0)
    emb = lib.nn.Embedding(7, 3, sparse=True)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(np.linspace(-1.0, 1.5, 21).reshape(7, 3)))
    opt = getattr(lib.optim, name)(emb.parameters(), **kwargs)
    batches = [[1, 3, 1], [4, 3], [0, 6, 6, 1]]
    for i in range(steps):
        opt.zero_grad()
        (emb(lib.tensor(batches[i % 3])) ** 2).sum().backward()
        opt.step()
    return npv(emb.weight)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("SGD", {"lr": 0.1}),
        ("SGD", {"lr": 0.1, "momentum": 0.9}),
        ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
        ("SGD", {"lr": 0.1, "maximize": True}),
        ("Adagrad", {"lr": 0.1}),
        ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.2}),
        ("SparseAdam", {"lr": 0.1}),
        ("SparseAdam", {"lr": 0.05, "betas": (0.8, 0.9), "maximize": True}),
    ],
)
def test_steps_on_sparse_gradients(real_torch, name, kwargs):
    ours = _train(torch, name, kwargs)
    ref = _train(real_torch, name, kwargs)
    np.testing.assert_allclose(ours, ref, rtol=2e-6, atol=2e-7)


def test_sparse_adam_leaves_untouched_rows_alone(real_torch):
    """A row no gradient names keeps its value and its moments (dense Adam would move it)."""
    for lib in (torch, real_torch):
        emb = lib.nn.Embedding(5, 2, sparse=True)
        before = npv(emb.weight).copy()
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
        for idx in ([1], [2]):
            opt.zero_grad()
            emb(lib.tensor(idx)).sum().backward()
            opt.step()
        after = npv(emb.weight)
        np.testing.assert_array_equal(after[[0, 3, 4]], before[[0, 3, 4]])
        assert not np.array_equal(after[1], before[1])
        assert opt.state[emb.weight]["step"] == 2


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("Adam", {}),
        ("AdamW", {}),
        ("RMSprop", {}),
        ("Adamax", {}),
        ("NAdam", {}),
        ("RAdam", {}),
        ("Adadelta", {}),
        ("ASGD", {}),
        ("Rprop", {}),
        ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
        ("Adagrad", {"weight_decay": 0.1}),
    ],
)
def test_refusals(real_torch, name, kwargs):
    msgs = []
    for lib in (torch, real_torch):
        emb = lib.nn.Embedding(5, 2, sparse=True)
        opt = getattr(lib.optim, name)(emb.parameters(), **kwargs)
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_sparse_adam_refuses_dense(real_torch):
    msgs = []
    for lib in (torch, real_torch):
        emb = lib.nn.Embedding(5, 2)
        opt = lib.optim.SparseAdam(emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
