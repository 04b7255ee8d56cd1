"""compat.torch.optim: SGD, Adam and AdamW against hand-computed PyTorch formulas.

Reference updates are written out in NumPy (float64) from PyTorch's
documented algorithms; where PyTorch is installed it also runs the same
trajectories as an oracle. Both execution paths are covered: the compiled
per-group program (default) and the per-tensor path (``fused=False``).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch
import compat.torch.nn as nn
import funcgrad as fg
from compat.torch import optim

PATHS = [None, False]  # fused=None: compiled group step where available; False: per tensor


def _params(*arrays):
    return [nn.Parameter(torch.tensor(np.asarray(a, dtype=np.float32))) for a in arrays]


def _set_grads(params, grads):
    for p, g in zip(params, grads):
        p.grad = None if g is None else torch.tensor(np.asarray(g, dtype=np.float32))


W0 = np.array([[0.5, -1.0], [2.0, 0.25]])
B0 = np.array([0.1, -0.3])
GRADS = [
    (np.array([[0.2, -0.1], [0.4, 0.3]]), np.array([1.0, -2.0])),
    (np.array([[-0.5, 0.1], [0.0, 0.6]]), np.array([0.5, 0.5])),
    (np.array([[0.3, 0.3], [-0.2, 0.1]]), np.array([-1.0, 0.25])),
]


# ---------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------


def _sgd_reference(
    lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False
):
    ps = [W0.copy(), B0.copy()]
    bufs = [None, None]
    for grads in GRADS:
        for i, g in enumerate(grads):
            g = -g if maximize else g.copy()
            g = g + weight_decay * ps[i]
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            ps[i] = ps[i] - lr * g
    return ps


SGD_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "weight_decay": 0.1},
    {"lr": 0.1, "momentum": 0.9, "nesterov": True},
    {"lr": 0.1, "momentum": 0.5, "maximize": True, "weight_decay": 0.01},
]


@pytest.mark.parametrize("fused", PATHS)
@pytest.mark.parametrize("config", SGD_CONFIGS)
def test_sgd_matches_formula(config, fused):
    params = _params(W0, B0)
    opt = optim.SGD(params, fused=fused, **config)
    for grads in GRADS:
        _set_grads(params, grads)
        opt.step()
    for p, expected in zip(params, _sgd_reference(**config)):
        np.testing.assert_allclose(npv(p, np.float64), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fused", PATHS)
def test_sgd_momentum_first_step_has_no_dampening(fused):
    (p,) = _params([1.0, 2.0])
    opt = optim.SGD([p], lr=0.5, momentum=0.9, dampening=0.5, fused=fused)
    _set_grads([p], [[1.0, -1.0]])
    opt.step()
    # First step: buf = g exactly (dampening not applied): p = p - lr * g.
    np.testing.assert_allclose(npv(p, np.float64), [0.5, 2.5])
    np.testing.assert_allclose(npv(opt.state[p]["momentum_buffer"], np.float64), [1.0, -1.0])
    _set_grads([p], [[1.0, 1.0]])
    opt.step()
    # Second step: buf = 0.9 * buf + 0.5 * g = [1.4, -0.4].
    np.testing.assert_allclose(
        npv(opt.state[p]["momentum_buffer"], np.float64), [1.4, -0.4], rtol=1e-6
    )
    np.testing.assert_allclose(npv(p, np.float64), [0.5 - 0.7, 2.5 + 0.2], rtol=1e-6)


def test_sgd_momentum_buffer_does_not_alias_grad():
    (p,) = _params([1.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9, fused=False)
    _set_grads([p], [[2.0]])
    opt.step()
    opt.zero_grad(set_to_none=False)  # zeroes the gradient in place
    np.testing.assert_allclose(npv(opt.state[p]["momentum_buffer"], np.float64), [2.0])


def test_sgd_defaults_and_validation():
    (p,) = _params([1.0])
    opt = optim.SGD([p])
    group = opt.param_groups[0]
    assert group["lr"] == 1e-3 and group["momentum"] == 0 and group["dampening"] == 0
    assert group["weight_decay"] == 0 and group["nesterov"] is False
    assert group["maximize"] is False
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match=r"Invalid momentum value: -0\.5"):
        optim.SGD([p], momentum=-0.5)
    with pytest.raises(
        ValueError, match="Nesterov momentum requires a momentum and zero dampening"
    ):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(
        ValueError, match="Nesterov momentum requires a momentum and zero dampening"
    ):
        optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)


def test_sgd_without_momentum_keeps_no_state():
    params = _params(W0, B0)
    opt = optim.SGD(params, lr=0.1)
    _set_grads(params, GRADS[0])
    opt.step()
    assert all(len(opt.state[p]) == 0 for p in params)


# ---------------------------------------------------------------------------
# Adam / AdamW
# ---------------------------------------------------------------------------


def _adam_reference(
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    maximize=False,
    decoupled=False,
    grads_seq=GRADS,
):
    b1, b2 = betas
    ps = [W0.copy(), B0.copy()]
    m = [np.zeros_like(p) for p in ps]
    v = [np.zeros_like(p) for p in ps]
    vmax = [np.zeros_like(p) for p in ps]
    steps = [0, 0]
    for grads in grads_seq:
        for i, g in enumerate(grads):
            if g is None:
                continue
            steps[i] += 1
            t = steps[i]
            g = -g if maximize else g.copy()
            if weight_decay:
                if decoupled:
                    ps[i] = ps[i] * (1 - lr * weight_decay)
                else:
                    g = g + weight_decay * ps[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            m_hat_scale = lr / (1 - b1**t)
            if amsgrad:
                vmax[i] = np.maximum(vmax[i], v[i])
                denom = np.sqrt(vmax[i]) / math.sqrt(1 - b2**t) + eps
            else:
                denom = np.sqrt(v[i]) / math.sqrt(1 - b2**t) + eps
            ps[i] = ps[i] - m_hat_scale * m[i] / denom
    return ps, m, v


ADAM_CONFIGS = [
    {},
    {"lr": 0.1},
    {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1},
    {"lr": 0.05, "amsgrad": True},
    {"lr": 0.01, "maximize": True, "weight_decay": 0.05, "amsgrad": True},
    {"lr": 0.02, "betas": (0.3, 0.9)},  # 1 - beta1 >= 0.5: PyTorch's other lerp formula
]


@pytest.mark.parametrize("fused", PATHS)
@pytest.mark.parametrize("config", ADAM_CONFIGS)
def test_adam_matches_formula(config, fused):
    params = _params(W0, B0)
    opt = optim.Adam(params, fused=fused, **config)
    for grads in GRADS:
        _set_grads(params, grads)
        opt.step()
    expected, m, v = _adam_reference(**config)
    for p, e in zip(params, expected):
        np.testing.assert_allclose(npv(p, np.float64), e, rtol=1e-5, atol=1e-6)
    for p, mi, vi in zip(params, m, v):
        state = opt.state[p]
        np.testing.assert_allclose(npv(state["exp_avg"], np.float64), mi, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(npv(state["exp_avg_sq"], np.float64), vi, rtol=1e-5, atol=1e-9)
        assert float(state["step"]) == len(GRADS)
        assert ("max_exp_avg_sq" in state) == bool(config.get("amsgrad"))


@pytest.mark.parametrize("fused", PATHS)
@pytest.mark.parametrize(
    "config",
    [
        {"lr": 0.1},
        {"lr": 0.05, "weight_decay": 0.5},
        {"lr": 0.05, "amsgrad": True, "weight_decay": 0.0},
    ],
)
def test_adamw_matches_formula(config, fused):
    params = _params(W0, B0)
    opt = optim.AdamW(params, fused=fused, **config)
    for grads in GRADS:
        _set_grads(params, grads)
        opt.step()
    wd = config.get("weight_decay", 1e-2)
    expected, _, _ = _adam_reference(**{**config, "weight_decay": wd}, decoupled=True)
    for p, e in zip(params, expected):
        np.testing.assert_allclose(npv(p, np.float64), e, rtol=1e-5, atol=1e-6)


def test_adam_first_step_moves_each_coordinate_by_lr():
    # Bias correction makes the first Adam step ±lr (up to eps) whatever the gradient scale.
    (p,) = _params([1.0, 1.0, 1.0])
    opt = optim.Adam([p], lr=0.01)
    _set_grads([p], [[1e-3, -5.0, 1e4]])
    opt.step()
    np.testing.assert_allclose(npv(p, np.float64), [0.99, 1.01, 0.99], rtol=1e-5)


def test_adam_and_adamw_defaults():
    (p,) = _params([1.0])
    g = optim.Adam([p]).param_groups[0]
    assert (g["lr"], g["betas"], g["eps"], g["weight_decay"], g["amsgrad"]) == (
        1e-3,
        (0.9, 0.999),
        1e-8,
        0,
        False,
    )
    assert g["decoupled_weight_decay"] is False
    gw = optim.AdamW([p]).param_groups[0]
    assert gw["weight_decay"] == 1e-2 and gw["decoupled_weight_decay"] is True
    with pytest.raises(ValueError, match=r"Invalid beta parameter at index 1: 1\.0"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
        optim.Adam([p], eps=-1)


@pytest.mark.parametrize("fused", PATHS)
def test_params_without_grad_are_skipped(fused):
    params = _params(W0, B0)
    opt = optim.Adam(params, lr=0.1, fused=fused)
    seq = [(GRADS[0][0], None), GRADS[1], (None, GRADS[2][1])]
    for grads in seq:
        _set_grads(params, grads)
        opt.step()
    expected, _, _ = _adam_reference(lr=0.1, grads_seq=seq)
    for p, e in zip(params, expected):
        np.testing.assert_allclose(npv(p, np.float64), e, rtol=1e-5, atol=1e-6)
    assert float(opt.state[params[0]]["step"]) == 2
    assert float(opt.state[params[1]]["step"]) == 2

    (q,) = _params([1.0])
    sgd = optim.SGD([q], lr=0.1, momentum=0.9, fused=fused)
    sgd.step()  # no grad at all: nothing happens, no state
    np.testing.assert_array_equal(npv(q, np.float64), [1.0])
    assert len(sgd.state[q]) == 0


@pytest.mark.parametrize("fused", [None, False])
def test_changing_lr_between_steps_takes_effect(fused):
    (p,) = _params([1.0])
    opt = optim.SGD([p], lr=0.1, fused=fused)
    _set_grads([p], [[1.0]])
    opt.step()
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    np.testing.assert_allclose(npv(p, np.float64), [1.0 - 0.1 - 0.5], rtol=1e-6)


def test_param_groups_with_their_own_hyperparameters():
    a, b = _params([1.0], [1.0])
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 1.0
    _set_grads([a, b], [[1.0], [1.0]])
    opt.step()
    np.testing.assert_allclose(npv(a, np.float64), [0.9], rtol=1e-6)
    np.testing.assert_allclose(npv(b, np.float64), [0.0], atol=1e-7)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_optimizer_construction_errors():
    (p,) = _params([1.0])
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([x * 2.0], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)


def test_zero_grad_set_to_none_and_zeros():
    params = _params(W0, B0)
    opt = optim.SGD(params, lr=0.1)
    _set_grads(params, GRADS[0])
    opt.zero_grad(set_to_none=False)
    for p in params:
        np.testing.assert_array_equal(npv(p.grad, np.float64), 0.0)
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_step_with_closure_returns_loss():
    (p,) = _params([3.0])
    opt = optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss.item()) == pytest.approx(9.0)
    np.testing.assert_allclose(npv(p, np.float64), [3.0 - 0.1 * 6.0], rtol=1e-6)


# ---------------------------------------------------------------------------
# state_dict
# ---------------------------------------------------------------------------


def test_state_dict_layout():
    params = _params(W0, B0)
    opt = optim.Adam(params, lr=0.1)
    _set_grads(params, GRADS[0])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sd["param_groups"][0]["params"] == [0, 1]
    assert sd["param_groups"][0]["lr"] == 0.1
    assert set(sd["state"]) == {0, 1}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert isinstance(sd["state"][0]["step"], torch.Tensor)
    assert float(sd["state"][0]["step"].item()) == 1.0
    assert isinstance(sd["state"][1]["exp_avg"].numpy(), np.ndarray)


@pytest.mark.parametrize("as_numpy", [False, True])
def test_state_dict_round_trip_resumes_identically(as_numpy):
    def make():
        params = _params(W0, B0)
        return params, optim.Adam(params, lr=0.05, amsgrad=True)

    params, opt = make()
    for grads in GRADS[:2]:
        _set_grads(params, grads)
        opt.step()
    sd = copy.deepcopy(opt.state_dict())  # as torch.save + torch.load would
    if as_numpy:
        sd = {
            "state": {k: {n: v.numpy() for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": sd["param_groups"],
        }
    params2, opt2 = make()
    for p2, p in zip(params2, params):
        with torch.no_grad():
            p2.copy_(p)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["params"][0] is params2[0]
    assert opt2.param_groups[0]["lr"] == 0.05
    for ps, o in ((params, opt), (params2, opt2)):
        _set_grads(ps, GRADS[2])
        o.step()
    for p, p2 in zip(params, params2):
        np.testing.assert_array_equal(npv(p, np.float64), npv(p2, np.float64))


def test_state_dict_shares_state_tensors_like_pytorch():
    (p,) = _params([1.0, 2.0])
    opt = optim.Adam([p], lr=0.1)
    _set_grads([p], [[1.0, 1.0]])
    opt.step()
    exp_avg = opt.state_dict()["state"][0]["exp_avg"]
    opt.step()
    # PyTorch updates state in place: an earlier state_dict sees the new moments.
    np.testing.assert_allclose(npv(exp_avg, np.float64), npv(opt.state[p]["exp_avg"], np.float64))
    np.testing.assert_allclose(npv(exp_avg, np.float64), [0.19, 0.19], rtol=1e-6)


def test_load_state_dict_group_mismatch_errors():
    params = _params(W0, B0)
    opt = optim.SGD(params, lr=0.1)
    sd = opt.state_dict()
    other = optim.SGD(_params(W0), lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        other.load_state_dict(sd)
    two = optim.SGD([{"params": _params(W0)}, {"params": _params(B0)}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        two.load_state_dict(sd)


# ---------------------------------------------------------------------------
# Paths agree; training works; PyTorch as oracle
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda ps, fused: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, fused=fused),
        lambda ps, fused: optim.Adam(ps, lr=0.05, amsgrad=True, weight_decay=0.1, fused=fused),
        lambda ps, fused: optim.AdamW(ps, lr=0.05, fused=fused),
    ],
)
def test_compiled_and_per_tensor_paths_agree(make):
    results = []
    for fused in PATHS:
        params = _params(W0, B0)
        opt = make(params, fused)
        for grads in GRADS:
            _set_grads(params, grads)
            opt.step()
        results.append([npv(p, np.float64) for p in params])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fused", PATHS)
def test_training_reduces_loss(fused):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 3)).astype(np.float32)
    x = torch.tensor(xs)
    y = torch.tensor((xs @ np.array([1.0, -2.0, 0.5], dtype=np.float32) + 0.3).astype(np.float32))
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=fused)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = nn.MSELoss()(model(x).reshape(-1), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    assert losses[-1] < 0.05 * losses[0]


ORACLE_CONFIGS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "betas": (0.5, 0.9), "amsgrad": True, "weight_decay": 0.3}),
]


@pytest.mark.parametrize("fused", PATHS)
@pytest.mark.parametrize(("name", "config"), ORACLE_CONFIGS)
def test_against_pytorch(real_torch, name, config, fused):
    """Same model, same data: compat and PyTorch follow the same trajectory for 10 steps."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=16)
    ours = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    theirs = real_torch.nn.Sequential(
        real_torch.nn.Linear(5, 8), real_torch.nn.Tanh(), real_torch.nn.Linear(8, 3)
    )
    theirs.load_state_dict(
        {k: real_torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()}
    )
    opt = getattr(optim, name)(ours.parameters(), fused=fused, **config)
    ref = getattr(real_torch.optim, name)(theirs.parameters(), **config)
    for _ in range(10):
        opt.zero_grad()
        nn.CrossEntropyLoss()(ours(torch.tensor(x)), torch.tensor(y)).backward()
        opt.step()
        ref.zero_grad()
        real_torch.nn.CrossEntropyLoss()(
            theirs(real_torch.from_numpy(x)), real_torch.from_numpy(y)
        ).backward()
        ref.step()
    for (key, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(
            npv(p, np.float64), q.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=key
        )
    # And the optimizer state carries over: PyTorch loads ours through NumPy.
    sd = opt.state_dict()
    ref.load_state_dict(
        {
            "state": {
                k: {n: real_torch.from_numpy(np.array(v.numpy())) for n, v in s.items()}
                for k, s in sd["state"].items()
            },
            "param_groups": sd["param_groups"],
        }
    )


# ---------------------------------------------------------------------------
# Compiled path: in-place updates and buffer donation never break other holders
# ---------------------------------------------------------------------------


def _compiled_access():
    from compat.torch.optim import _compiled

    access = _compiled.array_access()
    if access is None:
        pytest.skip("the compat core exposes no array access: per-tensor path only")
    return _compiled, access


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_copies_taken_before_a_step_keep_their_values(name):
    _compiled_access()
    params = _params(W0, B0)
    opt = (
        getattr(optim, name)(params, lr=0.1, momentum=0.9)
        if name == "SGD"
        else optim.Adam(params, lr=0.1)
    )
    for grads in GRADS[:2]:
        _set_grads(params, grads)
        opt.step()
    before = [npv(p, np.float64) for p in params]
    deep = [copy.deepcopy(p) for p in params]
    clones = [p.clone() for p in params]
    views = [np.asarray(p.detach().numpy()) for p in params]
    aliases = [p.detach() for p in params]
    saved_state = copy.deepcopy(opt.state_dict())
    state_before = {
        k: {n: npv(v, np.float64) for n, v in s.items()} for k, s in saved_state["state"].items()
    }
    _set_grads(params, GRADS[2])
    opt.step()
    for i, p in enumerate(params):
        assert not np.array_equal(npv(p, np.float64), before[i])
        np.testing.assert_array_equal(npv(deep[i], np.float64), before[i])
        np.testing.assert_array_equal(npv(clones[i], np.float64), before[i])
        np.testing.assert_array_equal(views[i], before[i])
        np.testing.assert_array_equal(
            npv(aliases[i], np.float64), npv(p, np.float64)
        )  # shares storage, like PyTorch
    for k, s in saved_state["state"].items():
        for n, v in s.items():
            np.testing.assert_array_equal(npv(v, np.float64), state_before[k][n])


@pytest.fixture
def compiled_tier():
    """The compiled tier mode, where the optimizer's jitted update donates its buffers
    (on the host tier nothing is donated)."""
    with fg.eager_tier("compiled"):
        yield


def test_exclusive_buffers_are_donated_shared_ones_are_not(compiled_tier):
    _compiled, access = _compiled_access()
    params = _params(W0, B0)
    opt = optim.Adam(params, lr=0.1)
    _set_grads(params, GRADS[0])
    opt.step()
    states = [opt.state[p]["exp_avg"] for p in params]
    assert _compiled._donated(access, [(0, params), (2, states)]) == (0, 2)
    keep = copy.deepcopy(params[1].detach())  # a plain-tensor deepcopy shares the array
    assert _compiled._donated(access, [(0, params), (2, states)]) == (2,)
    del keep
    assert _compiled._donated(access, [(0, params)]) == (0,)


def test_step_bumps_parameter_version():
    params = _params(W0, B0)
    opt = optim.SGD(params, lr=0.1)
    v0 = [p._version for p in params]
    _set_grads(params, GRADS[0])
    opt.step()
    assert all(p._version > v for p, v in zip(params, v0))


def test_stale_graph_after_step_raises_version_error():
    # As in PyTorch: a graph that saved a parameter cannot be backpropagated after step().
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))  # saves layer 2's weight
    opt = optim.SGD(model.parameters(), lr=0.1)
    out = (model(torch.ones(4, 3)) ** 2).sum()
    out.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
