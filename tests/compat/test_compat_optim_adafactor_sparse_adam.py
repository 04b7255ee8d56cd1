"""``optim.Adafactor`` and ``optim.SparseAdam`` against PyTorch 2.13: Adafactor's
parameters and state over several steps (matrices, a batch of matrices, vectors, a
scalar; weight decay, maximize, a given ``eps1``, the clipping threshold), its argument
checks; SparseAdam's checks and its refusal of dense gradients."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

SHAPES = [(4, 3), (2, 3, 5), (6,), ()]


def _run(lib, kwargs, dtype="float32", steps=5):
    rng = np.random.default_rng(0)
    params = [
        lib.nn.Parameter(lib.tensor(rng.normal(size=s), dtype=getattr(lib, dtype))) for s in SHAPES
    ]
    opt = lib.optim.Adafactor(params, **kwargs)
    for k in range(steps):
        opt.zero_grad()
        loss = sum(
            ((p - 0.1 * k) ** 2 * (i + 1)).sum() + p.sin().sum() for i, p in enumerate(params)
        )
        loss.backward()
        opt.step()
    state = [
        {
            key: np.asarray(v.numpy() if hasattr(v, "numpy") else v)
            for key, v in opt.state[p].items()
        }
        for p in params
    ]
    return [p.detach().numpy() for p in params], state


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"lr": 0.5, "weight_decay": 0.1},
        {"maximize": True, "beta2_decay": -0.5},
        {"eps": (1e-3, 1e-2), "d": 1.5},
        {"lr": 0.05, "foreach": False},
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adafactor_matches_pytorch(kwargs, dtype, real_torch):
    pt, st = _run(real_torch, kwargs, dtype)
    pc, sc = _run(ctorch, kwargs, dtype)
    tol = 2e-5 if dtype == "float32" else 1e-12
    for a, b in zip(pc, pt):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    for a, b in zip(sc, st):
        assert sorted(a) == sorted(b)
        for key in a:
            np.testing.assert_allclose(a[key], b[key], rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lr": -1.0},
        {"beta2_decay": 0.5},
        {"eps": (-1.0, 1e-3)},
        {"eps": (None, -1.0)},
        {"d": 0.5},
        {"weight_decay": -0.1},
    ],
)
def test_adafactor_argument_checks(kwargs, real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        with pytest.raises(ValueError) as e:
            lib.optim.Adafactor([lib.nn.Parameter(lib.ones(2))], **kwargs)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_adafactor_complex_refused(real_torch):
    for lib in (real_torch, ctorch):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))
        p.grad = lib.ones(2, dtype=lib.complex64)
        with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
            lib.optim.Adafactor([p]).step()


@pytest.mark.parametrize(
    "kwargs",
    [{"lr": 0.0}, {"eps": 0.0}, {"betas": (1.0, 0.9)}, {"betas": (0.9, -0.1)}],
)
def test_sparse_adam_argument_checks(kwargs, real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        with pytest.raises(ValueError) as e:
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))], **kwargs)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_sparse_adam_refuses_dense_gradients_and_complex(real_torch):
    for lib in (real_torch, ctorch):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SparseAdam([p], lr=0.1)
        assert opt.step() is None  # no gradient yet: nothing to do
        (p * 2).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            opt.step()
        with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 0\]\]"):
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))])
