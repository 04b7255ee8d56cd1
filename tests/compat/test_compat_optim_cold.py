"""Adam/AdamW's first step runs on NumPy without tracing (``compat/torch/optim/_cold.py``):
checked against real PyTorch 2.13 step by step, through the switch to the fused program
at the second step, for the static configurations and dtypes the cold path covers."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch
from compat.torch.optim import _cold, _compiled
from funcgrad.core import compile_cache

RNG = np.random.default_rng(11)
SHAPES = [(5, 4), (4,), (5, 4), ()]  # two parameters of one shape, a 0-d one

CASES = [
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "betas": (0.3, 0.9), "maximize": True}),  # lerp's other formula
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True, "maximize": True}),
]


def _run(lib, name, kw, dtype, steps, on_step=None):
    params = [lib.nn.Parameter(lib.tensor(RNG_P[i].astype(dtype))) for i in range(len(SHAPES))]
    opt = getattr(lib.optim, name)(params, **kw)
    out = []
    for k in range(steps):
        for i, p in enumerate(params):
            p.grad = lib.tensor(RNG_G[k][i].astype(dtype))
        opt.step()
        if on_step is not None:
            on_step(k)
        snap = [p.detach().numpy().copy() for p in params]
        for p in params:
            st = opt.state[p]
            snap += [st["exp_avg"].numpy().copy(), st["exp_avg_sq"].numpy().copy()]
            if kw.get("amsgrad"):
                snap.append(st["max_exp_avg_sq"].numpy().copy())
        out.append(snap)
    return out


RNG_P = [RNG.standard_normal(s) for s in SHAPES]
RNG_G = [[RNG.standard_normal(s) * 10.0 ** RNG.integers(-3, 2) for s in SHAPES] for _ in range(3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kw"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_first_step_on_numpy_matches_torch(real_torch, name, kw, dtype):
    counts = []

    def record(k):
        counts.append(_compiled.trace_counts["adam_step"])

    before = _compiled.trace_counts["adam_step"]
    got = _run(ctorch, name, kw, dtype, 3, on_step=record)
    want = _run(real_torch, name, kw, dtype, 3)
    assert counts[0] == before  # the first step traced no program
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-15}
    if dtype == np.float64 and kw.get("betas", (0.9,))[0] < 0.5:
        # lerp's high-weight formula takes 1 - (1 - beta1) rounded through float32 for every
        # dtype (``_functional.adam_scalars``), the traced program as much as the NumPy step
        tol = {"rtol": 1e-6, "atol": 1e-9}
    for k, (g, w) in enumerate(zip(got, want)):
        for j, (a, b) in enumerate(zip(g, w)):
            assert a.dtype == b.dtype == dtype
            np.testing.assert_allclose(a, b, **tol, err_msg=f"step {k + 1}, array {j}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kw"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_numpy_first_step_equals_the_traced_program(monkeypatch, name, kw, dtype):
    """The NumPy step gives the traced program's values bit for bit (host tier)."""
    cold = _run(ctorch, name, kw, dtype, 2)
    monkeypatch.setattr(_cold, "COLD_STEPS", 0.0)
    before = _compiled.trace_counts["adam_step"]
    traced = _run(ctorch, name, kw, dtype, 2)
    assert _compiled.trace_counts["adam_step"] >= before  # (the program may be cached)
    for k in range(2):
        for j, (a, b) in enumerate(zip(cold[k], traced[k])):
            np.testing.assert_array_equal(a, b, err_msg=f"step {k + 1}, array {j}")


def test_per_tensor_and_traced_steps_agree_with_the_numpy_first_step():
    """``fused=False`` (per-tensor eager ops) gives the NumPy first step's values exactly."""
    a = _run(ctorch, "AdamW", {"lr": 0.05, "amsgrad": True}, np.float32, 1)
    b = _run(ctorch, "AdamW", {"lr": 0.05, "amsgrad": True, "fused": False}, np.float32, 1)
    for x, y in zip(a[0], b[0]):
        np.testing.assert_array_equal(x, y)


def test_first_step_under_compiled_tier_traces(monkeypatch):
    """Where arrays are not host values (the compiled tier mode), the fused program runs."""
    monkeypatch.setattr(compile_cache.POLICY, "tier", "compiled")
    before = _compiled.trace_counts["adam_step"]
    _compiled._adam_program.cache_clear()
    _run(ctorch, "Adam", {"lr": 0.05}, np.float32, 1)
    assert _compiled.trace_counts["adam_step"] == before + 1


RULE_CASES = [
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.2},
    ),
    ("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "betas": (0.3, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.6, 0.95), "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 2, "lambd": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.07), "maximize": True}),
]


def _run_rule(name, kw, dtype, steps):
    params = [ctorch.nn.Parameter(ctorch.tensor(p.astype(dtype))) for p in RNG_P]
    opt = getattr(ctorch.optim, name)(params, **kw)
    out = []
    for k in range(steps):
        for i, p in enumerate(params):
            p.grad = ctorch.tensor(RNG_G[k][i].astype(dtype))
        opt.step()
        snap = [p.detach().numpy().copy() for p in params]
        for p in params:
            snap += [
                v.numpy().copy() for v in opt.state[p].values() if isinstance(v, ctorch.Tensor)
            ]
        out.append(snap)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kw"), RULE_CASES, ids=[n for n, _ in RULE_CASES])
def test_rule_first_step_on_numpy_equals_the_traced_program(monkeypatch, name, kw, dtype):
    """The other elementwise optimizers' NumPy first step, bit for bit against the traced
    program (test_compat_optim_vs_torch checks the same steps against PyTorch)."""
    key = name.lower() + "_step"
    before = _compiled.trace_counts[key]
    cold = _run_rule(name, kw, dtype, 1)
    assert _compiled.trace_counts[key] == before  # nothing traced
    cold += _run_rule(name, kw, dtype, 2)[1:]
    monkeypatch.setattr(_cold, "COLD_STEPS", 0.0)
    traced = _run_rule(name, kw, dtype, 2)
    for k in range(2):
        assert len(cold[k]) == len(traced[k])
        for j, (a, b) in enumerate(zip(cold[k], traced[k])):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b, err_msg=f"step {k + 1}, array {j}")
