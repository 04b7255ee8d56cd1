"""``torch.optim.swa_utils`` against PyTorch 2.13: ``SWALR``'s learning rates step by step,
``AveragedModel``'s averages (SWA, EMA, per-parameter and multi-tensor functions, buffers)
and ``update_bn``'s statistics, from the same weights and data."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _lrs(lib: Any, steps: int, change_at: int | None = None, **kw: Any) -> list[list[float]]:
    w = lib.nn.Parameter(lib.zeros(2))
    b = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=1.0)
    sched = lib.optim.swa_utils.SWALR(opt, **kw)
    out = [sched.get_last_lr()]
    for i in range(steps):
        opt.step()
        if change_at == i:
            opt.param_groups[0]["lr"] = 3.0
        sched.step()
        out.append(sched.get_last_lr())
    return out


@pytest.mark.parametrize(
    "kw",
    [
        {"swa_lr": 0.05},
        {"swa_lr": [0.05, 0.2], "anneal_epochs": 3, "anneal_strategy": "linear"},
        {"swa_lr": 0.1, "anneal_epochs": 0},
        {"swa_lr": 0.1, "anneal_epochs": 4, "anneal_strategy": "cos"},
    ],
)
@pytest.mark.parametrize("change_at", [None, 1])
def test_swalr_rates(kw: dict, change_at: int | None) -> None:
    ours = _lrs(ctorch, 8, change_at, **kw)
    ref = _lrs(torch, 8, change_at, **kw)
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-12)


@pytest.mark.parametrize(
    "kw",
    [
        {"swa_lr": 1.0, "anneal_strategy": "exponential"},
        {"swa_lr": 1.0, "anneal_epochs": -1},
        {"swa_lr": 1.0, "anneal_epochs": 1.7},
        {"swa_lr": [1.0, 0.1, 0.01]},
    ],
)
def test_swalr_errors(kw: dict) -> None:
    msgs = []
    for lib in (ctorch, torch):
        with pytest.raises(ValueError) as info:
            _lrs(lib, 0, **kw)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def _net(lib: Any, seed_values: list[np.ndarray]) -> Any:
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p, v in zip(net.parameters(), seed_values):
            p.copy_(lib.tensor(v))
    return net


def _averaged(lib: Any, how: str, use_buffers: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    shapes = [(4, 3), (4,), (4,), (4,), (2, 4), (2,)]
    net = _net(lib, [rng.standard_normal(s).astype(np.float32) for s in shapes])
    kw: dict[str, Any] = {"use_buffers": use_buffers}
    swa = lib.optim.swa_utils
    if how == "ema":
        kw["multi_avg_fn"] = swa.get_ema_multi_avg_fn(0.9)
    elif how == "ema_single":
        kw["avg_fn"] = swa.get_ema_avg_fn(0.8)
    elif how == "swa_single":
        kw["avg_fn"] = swa.get_swa_avg_fn()
    avg = swa.AveragedModel(net, **kw)
    data = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(4)]
    for x in data:
        net.train()
        net(lib.tensor(x))  # moves the batch norm's running statistics
        with lib.no_grad():
            for p in net.parameters():
                p.mul_(0.7).add_(0.1)
        avg.update_parameters(net)
    out = [p.detach().numpy() for p in avg.module.parameters()]
    out += [b.detach().numpy() for b in avg.module.buffers()]
    out.append(np.asarray(avg.n_averaged.item()))
    return out


@pytest.mark.parametrize("how", ["swa", "ema", "ema_single", "swa_single"])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model(how: str, use_buffers: bool) -> None:
    ours, ref = _averaged(ctorch, how, use_buffers), _averaged(torch, how, use_buffers)
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


def test_update_bn() -> None:
    rng = np.random.default_rng(3)
    shapes = [(4, 3), (4,), (4,), (4,), (2, 4), (2,)]
    values = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    batches = [rng.standard_normal((6, 3)).astype(np.float32) for _ in range(3)]
    stats = []
    for lib in (ctorch, torch):
        net = _net(lib, values)
        net.eval()
        loader = [(lib.tensor(x), lib.zeros(6)) for x in batches]
        lib.optim.swa_utils.update_bn(loader, net)
        bn = net[1]
        assert net.training is False and bn.momentum == 0.1
        stats.append(
            [bn.running_mean.numpy(), bn.running_var.numpy(), bn.num_batches_tracked.item()]
        )
    for a, b in zip(*stats):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
