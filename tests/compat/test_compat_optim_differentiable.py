"""``differentiable=True`` optimizers against real PyTorch 2.13: the step is recorded for
autograd, so ``torch.autograd.grad`` of a function of the stepped parameters and state
reaches the starting parameters, the gradients' inputs and a Tensor learning rate (SGD,
Adam, AdamW, NAdam keep it as a Tensor), through one and two steps; the values equal
PyTorch's to float32 rounding. (Between two steps the state tensors are replaced by
copies: PyTorch's in-place kernels otherwise modify what its first step saved, and its
backward raises; compat's step computes from copies and does not.) Also PyTorch's errors: a leaf parameter that requires grad
cannot be stepped in place, ``fused=True`` refuses ``differentiable``, Adam's ``step`` must
not require grad.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

RNG = np.random.default_rng(11)
W0 = RNG.uniform(0.2, 1.0, 6).astype(np.float32)
C0 = RNG.uniform(0.5, 2.0, 6).astype(np.float32)
T0 = RNG.standard_normal(6).astype(np.float32)
R0 = RNG.standard_normal(6).astype(np.float32)

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.2, "maximize": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "amsgrad": True, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.05, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.05, "maximize": True}),
    ("Adadelta", {"lr": 0.9, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.1, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 1}),
    ("Rprop", {"lr": 0.05}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]
#: the optimizers whose kernels keep a Tensor learning rate that requires grad
TENSOR_LR = {"SGD", "Adam", "AdamW", "NAdam"}


def _run(lib, name, kw, steps):
    """Values and gradients (w.r.t. the start, the gradients' scale and a Tensor lr) of
    ``sum(p * r) + sum(state tensors)`` after ``steps`` recorded steps."""
    w0 = lib.tensor(W0, requires_grad=True)
    c = lib.tensor(C0, requires_grad=True)
    t, r = lib.tensor(T0), lib.tensor(R0)
    kw = dict(kw)
    inputs = [w0, c]
    if name in TENSOR_LR:
        kw["lr"] = lib.tensor(kw["lr"], requires_grad=True)
        inputs.append(kw["lr"])
    p = w0.clone()
    opt = getattr(lib.optim, name)([p], differentiable=True, **kw)
    for _ in range(steps):
        # PyTorch's in-place kernels modify tensors its previous step saved (backward then
        # raises): both sides step on copies of the state, the same function
        for k, v in opt.state[p].items():
            if isinstance(v, lib.Tensor):
                opt.state[p][k] = v.clone()
        p.grad = c * (p - t) * (p - t)  # the gradient of a curved loss, recorded
        opt.step()
    state = [v for v in opt.state[p].values() if isinstance(v, lib.Tensor) and v.requires_grad]
    out = (p * r).sum() + sum(v.sum() for v in state)
    grads = lib.autograd.grad(out, inputs, allow_unused=True)
    return [npv(p)] + [npv(v) for v in state], [None if g is None else npv(g) for g in grads]


@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_grad_through_steps_matches_torch(real_torch, name, kw, steps):
    got_vals, got_grads = _run(ctorch, name, kw, steps)
    want_vals, want_grads = _run(real_torch, name, kw, steps)
    assert len(got_vals) == len(want_vals)
    for a, b in zip(got_vals, want_vals):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    for a, b in zip(got_grads, want_grads):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5)


def test_float64_state_inputs_match_torch(real_torch):
    """Upstream's set-up: state tensors given (cloned, requiring grad), float64; NAdam's
    ``mu_product`` requires grad and is updated in place."""
    results = []
    for lib in (ctorch, real_torch):
        p0 = lib.tensor(W0.astype(np.float64), requires_grad=True)
        g = lib.tensor(C0.astype(np.float64), requires_grad=True)
        m0 = lib.tensor(T0.astype(np.float64) * 0.1, requires_grad=True)
        v0 = lib.tensor(np.abs(R0).astype(np.float64), requires_grad=True)
        mu0 = lib.tensor(0.9, dtype=lib.float64, requires_grad=True)
        p = p0.clone()
        p.grad = g
        opt = lib.optim.NAdam([p], lr=0.9, differentiable=True)
        opt.state[p].update(
            {"step": lib.tensor(10.0, dtype=lib.float64), "exp_avg": m0.clone(),
             "exp_avg_sq": v0.clone(), "mu_product": mu0.clone()}
        )  # fmt: skip
        opt.step()
        outs = [p, opt.state[p]["exp_avg"], opt.state[p]["exp_avg_sq"], opt.state[p]["mu_product"]]
        total = sum((o * (k + 1)).sum() for k, o in enumerate(outs))
        grads = lib.autograd.grad(total, [p0, g, m0, v0, mu0])
        results.append([npv(o) for o in outs] + [npv(x) for x in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Rprop"])
def test_leaf_parameter_refused_as_torch(real_torch, name):
    for lib in (ctorch, real_torch):
        w = lib.tensor(W0, requires_grad=True)
        w.grad = lib.tensor(C0)
        opt = getattr(lib.optim, name)([w], lr=0.1, differentiable=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            opt.step()


def test_errors_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        for name in ("SGD", "Adam", "AdamW", "Adagrad"):
            with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
                getattr(lib.optim, name)([lib.zeros(2)], differentiable=True, fused=True)
        p = lib.tensor(W0, requires_grad=True).clone()
        p.grad = lib.tensor(C0)
        opt = lib.optim.Adam([p], differentiable=True)
        opt.state[p]["step"] = lib.tensor(1.0, requires_grad=True)
        opt.state[p]["exp_avg"] = lib.zeros(6)
        opt.state[p]["exp_avg_sq"] = lib.zeros(6)
        with pytest.raises(RuntimeError, match="`requires_grad` is not supported for `step`"):
            opt.step()


def test_not_differentiable_step_is_not_recorded():
    """Without the flag the step runs under no_grad: a leaf parameter is updated in place
    and stays a leaf."""
    p = ctorch.tensor(W0, requires_grad=True)
    p.grad = ctorch.tensor(C0, requires_grad=True) * 2
    ctorch.optim.Adam([p], lr=0.1).step()
    assert p.is_leaf and p.grad_fn is None
