"""``optim.Muon`` against PyTorch 2.13: parameters and momentum buffers over several
steps (wide and tall matrices, nesterov on and off, both learning-rate adjustments,
weight decay), the orthogonalised update against SVD's ``U V^T``, and the checks."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

SHAPES = [(4, 7), (9, 3), (5, 5)]


def _run(lib, kwargs, steps=4):
    rng = np.random.default_rng(1)
    params = [lib.nn.Parameter(lib.tensor(rng.normal(size=s), dtype=lib.float32)) for s in SHAPES]
    targets = [lib.tensor(rng.normal(size=s), dtype=lib.float32) for s in SHAPES]
    opt = lib.optim.Muon(params, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        sum(((p - t) ** 2).sum() for p, t in zip(params, targets)).backward()
        opt.step()
    bufs = [opt.state[p]["momentum_buffer"].numpy() for p in params]
    return [p.detach().numpy() for p in params], bufs


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lr": 0.02},
        {"lr": 0.05, "nesterov": False, "weight_decay": 0.0},
        {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw", "momentum": 0.9},
        {"lr": 0.02, "adjust_lr_fn": "original", "ns_steps": 3},
    ],
)
def test_muon_matches_pytorch(kwargs, real_torch):
    (pt, bt), (pc, bc) = _run(real_torch, kwargs), _run(ctorch, kwargs)
    # the update is computed in bfloat16 (as PyTorch's), whose rounding in five
    # Newton-Schulz iterations differs by a few bfloat16 ulps between the libraries
    # (entries of the update within ~0.04): parameters, and the buffers of gradients at
    # them, agree to that
    atol = 0.05 * kwargs["lr"] * 3
    for a, b in zip(pc + bc, pt + bt):
        np.testing.assert_allclose(a, b, rtol=0, atol=atol * 4)
    (pt1, bt1), (pc1, bc1) = _run(real_torch, kwargs, 1), _run(ctorch, kwargs, 1)
    for a, b in zip(bc1, bt1):  # one step: the same gradient
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for a, b in zip(pc1, pt1):
        np.testing.assert_allclose(a, b, rtol=0, atol=atol)


def test_update_is_near_orthogonal():
    g = np.random.default_rng(2).normal(size=(6, 10))
    p = ctorch.nn.Parameter(ctorch.zeros(6, 10))
    p.grad = ctorch.tensor(g, dtype=ctorch.float32)
    ctorch.optim.Muon([p], lr=1.0, weight_decay=0.0, momentum=0.0, nesterov=False).step()
    u = -p.detach().numpy()  # lr * sqrt(max(1, 6/10)) = 1
    s = np.linalg.svd(u, compute_uv=False)
    assert np.all((s > 0.5) & (s < 1.3))  # the quintic's band around 1, not SVD's exact 1
    uu, _, vt = np.linalg.svd(g, full_matrices=False)
    assert np.sum(u * (uu @ vt)) / (np.linalg.norm(u) * np.linalg.norm(uu @ vt)) > 0.97


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {"lr": -1.0}),
        ((), {"momentum": -0.1}),
        ((), {"weight_decay": -0.1}),
        ((), {"adjust_lr_fn": "sqrt"}),
        ((3,), {}),
    ],
)
def test_muon_checks(args, kwargs, real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        shape = args or (2, 2)
        with pytest.raises(ValueError) as e:
            lib.optim.Muon([lib.nn.Parameter(lib.ones(*shape))], **kwargs)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
