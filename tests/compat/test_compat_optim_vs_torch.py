"""compat.torch.optim's optimizers against real PyTorch 2.13 (test_compat_optim.py checks
SGD/Adam/AdamW against their formulas): Adadelta, Adagrad, RMSprop, Adamax, NAdam, RAdam,
ASGD, Rprop, Adam/AdamW with amsgrad, L-BFGS.

The same small problem (two float32 parameters, a curved elementwise loss)
runs for a few steps on compat and on real torch from identical starting
values; parameters and every state tensor must agree (``rtol=1e-5``), and
``state_dict()`` must have PyTorch's keys and group layout. State dicts
travel both ways through NumPy and training continues identically. L-BFGS
runs with and without the strong-Wolfe line search. Argument checks raise
PyTorch's exception type with its message.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch
from compat.torch.optim import _compiled

RNG = np.random.default_rng(7)
P0 = [RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
TARGET = [RNG.standard_normal(p.shape).astype(np.float32) for p in P0]
COEF = [RNG.uniform(0.5, 2.0, p.shape).astype(np.float32) for p in P0]

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.2},
    ),
    ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"alpha": 0.3, "centered": True, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "betas": (0.3, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01, "betas": (0.4, 0.99)}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.95), "weight_decay": 0.1}),
    (
        "RAdam",
        {"lr": 0.05, "betas": (0.6, 0.95), "weight_decay": 0.1, "decoupled_weight_decay": True},
    ),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.1, "t0": 2, "lambd": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.07), "maximize": True}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.05, "amsgrad": True, "maximize": True}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]
# RAdam rectifies its step only once rho_t > 5: from step 6 (beta2 = 0.999) or 7 (0.95).
STEPS = {"RAdam": 8}


def _params(lib):
    return [lib.nn.Parameter(lib.tensor(p.copy())) for p in P0]


def _loss(lib, params):
    total = None
    for p, t, c in zip(params, TARGET, COEF):
        term = (lib.tensor(c) * (p - lib.tensor(t)) ** 2).sum() + 0.1 * (p**4).sum()
        total = term if total is None else total + term
    return total


def _train(lib, opt, params, steps):
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, params).backward()
        opt.step()


def _run(lib, name, kw, steps=5):
    params = _params(lib)
    opt = getattr(lib.optim, name)(params, **kw)
    _train(lib, opt, params, steps)
    return params, opt


def _assert_close(a, b, what):
    np.testing.assert_allclose(npv(a), npv(b), rtol=1e-5, atol=1e-6, err_msg=what)


def _assert_same_state(sd_compat, sd_torch):
    assert sd_compat["param_groups"] == sd_torch["param_groups"]
    assert set(sd_compat["state"]) == set(sd_torch["state"])
    for index, st_torch in sd_torch["state"].items():
        st_compat = sd_compat["state"][index]
        assert set(st_compat) == set(st_torch), index
        for key, value in st_torch.items():
            if isinstance(value, list):
                assert len(st_compat[key]) == len(value), key
                for u, v in zip(st_compat[key], value):
                    assert (u is None) == (v is None), key
                    if v is not None:
                        _assert_close(u, v, f"state[{index}][{key!r}]")
            else:
                _assert_close(st_compat[key], value, f"state[{index}][{key!r}]")
                if hasattr(value, "dtype"):
                    assert str(st_compat[key].dtype) == str(value.dtype), key


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_trajectory_and_state_match_torch(name, kw, real_torch):
    rt = real_torch
    cparams, copt = _run(ctorch, name, kw, steps=STEPS.get(name, 5))
    tparams, topt = _run(rt, name, kw, steps=STEPS.get(name, 5))
    for i, (a, b) in enumerate(zip(cparams, tparams)):
        _assert_close(a, b, f"param {i}")
    _assert_same_state(copt.state_dict(), topt.state_dict())


# One configuration per rule on the per-tensor path (no array access from the core).
EAGER = [CASES[i] for i in (1, 3, 5, 8, 11, 14, 16, 18)]


@pytest.mark.parametrize(("name", "kw"), EAGER, ids=[c[0] for c in EAGER])
def test_per_tensor_path_matches_torch(name, kw, monkeypatch, real_torch):
    rt = real_torch
    monkeypatch.setattr(_compiled, "array_access", lambda: None)
    counts = dict(_compiled.trace_counts)
    steps = STEPS.get(name, 3)
    cparams, copt = _run(ctorch, name, kw, steps=steps)
    assert dict(_compiled.trace_counts) == counts  # nothing was compiled
    tparams, topt = _run(rt, name, kw, steps=steps)
    for i, (a, b) in enumerate(zip(cparams, tparams)):
        _assert_close(a, b, f"param {i}")
    _assert_same_state(copt.state_dict(), topt.state_dict())


def test_adagrad_fused_false_and_fresh_state(real_torch):
    rt = real_torch
    copt = ctorch.optim.Adagrad(_params(ctorch), initial_accumulator_value=0.5, fused=False)
    topt = rt.optim.Adagrad(_params(rt), initial_accumulator_value=0.5, fused=False)
    _assert_same_state(copt.state_dict(), topt.state_dict())  # state exists before any step


def test_lr_change_does_not_recompile():
    params = _params(ctorch)
    opt = ctorch.optim.RMSprop(params, lr=0.01, momentum=0.5)
    _train(ctorch, opt, params, 2)  # the first step runs on NumPy (_cold), the second traces
    before = _compiled.trace_counts["rmsprop_step"]
    for group in opt.param_groups:
        group["lr"] = 0.02
    _train(ctorch, opt, params, 2)
    assert _compiled.trace_counts["rmsprop_step"] == before


def _to_torch(rt, value):
    if isinstance(value, list):
        return [_to_torch(rt, v) for v in value]
    if hasattr(value, "detach"):
        return rt.tensor(npv(value))
    return value


def _to_numpy(value):
    if isinstance(value, list):
        return [_to_numpy(v) for v in value]
    return npv(value) if hasattr(value, "detach") else value


def _portable(sd, convert):
    return {
        "state": {k: {n: convert(v) for n, v in st.items()} for k, st in sd["state"].items()},
        "param_groups": sd["param_groups"],
    }


ROUND_TRIP = [CASES[i] for i in (1, 3, 5, 8, 10, 14, 16, 18)]


@pytest.mark.parametrize(("name", "kw"), ROUND_TRIP, ids=[c[0] for c in ROUND_TRIP])
def test_state_dict_round_trip_with_torch(name, kw, real_torch):
    rt = real_torch
    cparams, copt = _run(ctorch, name, kw, steps=2)
    tparams, topt = _run(rt, name, kw, steps=2)
    # compat -> torch: a fresh torch optimizer continues from compat's state.
    tparams2 = [rt.nn.Parameter(rt.tensor(npv(p))) for p in cparams]
    topt2 = getattr(rt.optim, name)(tparams2, **kw)
    topt2.load_state_dict(_portable(copt.state_dict(), lambda v: _to_torch(rt, v)))
    # torch -> compat (through NumPy): a fresh compat optimizer continues from torch's state.
    cparams2 = [ctorch.nn.Parameter(ctorch.tensor(npv(p))) for p in tparams]
    copt2 = getattr(ctorch.optim, name)(cparams2, **kw)
    copt2.load_state_dict(_portable(topt.state_dict(), _to_numpy))
    _train(rt, topt2, tparams2, 2)
    _train(ctorch, copt2, cparams2, 2)
    _train(rt, topt, tparams, 2)
    for a, b, c in zip(cparams2, tparams2, tparams):
        _assert_close(a, c, "compat resumed from torch's state")
        _assert_close(b, c, "torch resumed from compat's state")
    _assert_same_state(copt2.state_dict(), topt.state_dict())


# ---------------------------------------------------------------------------
# L-BFGS
# ---------------------------------------------------------------------------


def _lbfgs(lib, steps, **kw):
    # float64: a line search's accept/reject turns a last-bit difference in a float32
    # loss (any two implementations', or XLA's at two optimisation levels) into a
    # different step; in float64 the comparison checks the algorithm, not the rounding
    params = [lib.nn.Parameter(lib.tensor(p.astype(np.float64))) for p in P0]
    opt = lib.optim.LBFGS(params, **kw)
    losses = []

    def closure():
        opt.zero_grad()
        loss = _loss(lib, params)
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(float(opt.step(closure).detach()))
    return params, opt, losses


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": 0.5, "max_iter": 6, "history_size": 3},
        {"line_search_fn": "strong_wolfe", "max_iter": 6, "history_size": 3},
        {"line_search_fn": "strong_wolfe", "max_iter": 4, "max_eval": 5, "lr": 2.0},
    ],
    ids=["fixed-step", "strong-wolfe", "strong-wolfe-max-eval"],
)
def test_lbfgs_matches_torch(kw, real_torch):
    rt = real_torch
    cparams, copt, closs = _lbfgs(ctorch, 2, **kw)
    tparams, topt, tloss = _lbfgs(rt, 2, **kw)
    np.testing.assert_allclose(closs, tloss, rtol=1e-5)
    for i, (a, b) in enumerate(zip(cparams, tparams)):
        _assert_close(a, b, f"param {i}")
    csd, tsd = copt.state_dict(), topt.state_dict()
    cst, tst = csd["state"][0], tsd["state"][0]
    assert csd["param_groups"] == tsd["param_groups"]
    assert set(cst) == set(tst)
    for key in ("func_evals", "n_iter"):
        assert cst[key] == tst[key], key
    for key in ("d", "prev_flat_grad", "old_dirs", "old_stps", "ro", "H_diag"):
        pair = (cst[key], tst[key]) if isinstance(tst[key], list) else ([cst[key]], [tst[key]])
        assert len(pair[0]) == len(pair[1]), key
        for u, v in zip(*pair):
            # y = g_new - g_old cancels: compare on the gradients' scale (~1).
            np.testing.assert_allclose(npv(u), npv(v), rtol=1e-4, atol=1e-5, err_msg=key)
    np.testing.assert_allclose(float(cst["t"]), float(tst["t"]), rtol=1e-5)
    np.testing.assert_allclose(cst["prev_loss"], tst["prev_loss"], rtol=1e-5)


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-13), ("float32", 1e-6)])
def test_lbfgs_first_step_in_the_gradients_dtype(dtype, rtol, real_torch):
    """The first iteration's step ``min(1, 1 / |g|_1) * lr`` is computed in the gradient's
    dtype, as PyTorch's tensors compute it: float64 parameters are not moved by a step
    rounded to float32 (time_sequence_prediction's float64 run parted at 5e-9 on step 1)."""
    out = []
    for lib in (ctorch, real_torch):
        params = [lib.nn.Parameter(lib.tensor(p.astype(dtype))) for p in P0]
        opt = lib.optim.LBFGS(params, lr=0.7, max_iter=1)

        def closure(lib=lib, params=params, opt=opt):
            opt.zero_grad()
            loss = _loss(lib, params)
            loss.backward()
            return loss

        opt.step(closure)
        out.append([npv(p) for p in params])
    for a, b in zip(*out):
        assert a.dtype == b.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


def test_lbfgs_state_dict_round_trip_with_torch(real_torch):
    rt = real_torch
    kw = {"line_search_fn": "strong_wolfe", "max_iter": 3, "history_size": 2}
    cparams, copt, _ = _lbfgs(ctorch, 1, **kw)
    tparams, topt, _ = _lbfgs(rt, 1, **kw)
    # torch -> compat through NumPy, and compat -> torch.
    cparams2 = [ctorch.nn.Parameter(ctorch.tensor(npv(p))) for p in tparams]
    copt2 = ctorch.optim.LBFGS(cparams2, **kw)
    copt2.load_state_dict(_portable(topt.state_dict(), _to_numpy))
    tparams2 = [rt.nn.Parameter(rt.tensor(npv(p))) for p in cparams]
    topt2 = rt.optim.LBFGS(tparams2, **kw)
    topt2.load_state_dict(_portable(copt.state_dict(), lambda v: _to_torch(rt, v)))

    def step(lib, opt, params):
        def closure():
            opt.zero_grad()
            loss = _loss(lib, params)
            loss.backward()
            return loss

        return float(opt.step(closure).detach())

    reference = step(rt, topt, tparams)
    np.testing.assert_allclose(step(ctorch, copt2, cparams2), reference, rtol=1e-5)
    np.testing.assert_allclose(step(rt, topt2, tparams2), reference, rtol=1e-5)
    for a, b, c in zip(cparams2, tparams2, tparams):
        _assert_close(a, c, "compat L-BFGS resumed from torch's state")
        _assert_close(b, c, "torch L-BFGS resumed from compat's state")
    n_iter = topt.state_dict()["state"][0]["n_iter"]
    assert copt2.state_dict()["state"][0]["n_iter"] == n_iter
    assert topt2.state_dict()["state"][0]["n_iter"] == n_iter


def test_lbfgs_errors(real_torch):
    rt = real_torch
    for lib in (ctorch, rt):
        p, q = _params(lib)
        with pytest.raises(ValueError, match="per-parameter options"):
            lib.optim.LBFGS([{"params": [p]}, {"params": [q]}])
        opt = lib.optim.LBFGS([p], line_search_fn="bogus")

        def closure(opt=opt, p=p):
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)
        with pytest.raises(TypeError):
            opt.step()
        assert lib.optim.LBFGS([p], max_iter=8).defaults["max_eval"] == 10


# ---------------------------------------------------------------------------
# Defaults and argument checks
# ---------------------------------------------------------------------------

NAMES = ["Adadelta", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS"]


@pytest.mark.parametrize("name", NAMES)
def test_defaults_match_torch(name, real_torch):
    rt = real_torch
    copt = getattr(ctorch.optim, name)(_params(ctorch))
    topt = getattr(rt.optim, name)(_params(rt))
    assert copt.defaults == topt.defaults
    assert copt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


BAD = [
    ("Adadelta", {"lr": -1.0}),
    ("Adadelta", {"rho": 1.5}),
    ("Adadelta", {"eps": -1e-3}),
    ("Adadelta", {"weight_decay": -0.1}),
    ("Adagrad", {"lr_decay": -0.1}),
    ("Adagrad", {"initial_accumulator_value": -1.0}),
    ("Adagrad", {"eps": -1.0}),
    ("RMSprop", {"momentum": -0.5}),
    ("RMSprop", {"alpha": -0.5}),
    ("RMSprop", {"eps": -0.5}),
    ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}),
    ("NAdam", {"momentum_decay": -1.0}),
    ("NAdam", {"lr": -0.5}),
    ("RAdam", {"weight_decay": -1.0}),
    ("RAdam", {"eps": -1.0}),
    ("ASGD", {"weight_decay": -1.0}),
    ("ASGD", {"lr": -1.0}),
    ("Rprop", {"etas": (1.5, 1.2)}),
    ("Rprop", {"etas": (0.5, 0.9)}),
    ("LBFGS", {"lr": -1.0}),
]


@pytest.mark.parametrize(("name", "kw"), BAD, ids=[f"{n}-{next(iter(k))}" for n, k in BAD])
def test_invalid_arguments_raise_like_torch(name, kw, real_torch):
    rt = real_torch
    messages = []
    for lib in (ctorch, rt):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)(_params(lib), **kw)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_flags_accepted(real_torch):
    rt = real_torch
    for lib in (ctorch, rt):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            lib.optim.RMSprop(_params(lib), lr=lib.tensor([0.1, 0.2]))
        with pytest.raises(RuntimeError, match="cannot be `True` together"):
            lib.optim.Adagrad(_params(lib), fused=True, foreach=True)
    # Performance-only flags change nothing about the result.
    a, _ = _run(ctorch, "Adamax", {"foreach": True, "capturable": True}, steps=2)
    b, _ = _run(rt, "Adamax", {"foreach": True}, steps=2)
    for u, v in zip(a, b):
        _assert_close(u, v, "Adamax with foreach/capturable")
    # Every elementwise optimizer takes differentiable=True (test_compat_optim_differentiable
    # checks the recorded step against PyTorch's); L-BFGS has no such flag, as PyTorch's.
    for name in [*NAMES[:-1], "SGD", "Adam", "AdamW"]:
        for lib in (ctorch, rt):
            getattr(lib.optim, name)(_params(lib), differentiable=True)
    for lib in (ctorch, rt):
        with pytest.raises(TypeError):
            lib.optim.LBFGS(_params(lib), differentiable=True)


def test_tensor_lr_matches_torch(real_torch):
    rt = real_torch
    a, _ = _run(ctorch, "RMSprop", {"lr": ctorch.tensor(0.05), "momentum": 0.5}, steps=2)
    b, _ = _run(rt, "RMSprop", {"lr": rt.tensor(0.05), "momentum": 0.5}, steps=2)
    for u, v in zip(a, b):
        _assert_close(u, v, "RMSprop with a Tensor lr")


def test_params_without_grad_are_skipped_like_torch(real_torch):
    rt = real_torch
    results = []
    for lib in (ctorch, rt):
        params = _params(lib)
        opt = lib.optim.NAdam(params, lr=0.05)
        for step in range(3):
            opt.zero_grad()
            loss = (
                _loss(lib, params) if step != 1 else _loss(lib, params[:1] + [params[1].detach()])
            )
            loss.backward()
            opt.step()
        results.append((params, opt.state_dict()))
    for a, b in zip(results[0][0], results[1][0]):
        _assert_close(a, b, "param")
    _assert_same_state(results[0][1], results[1][1])


@pytest.mark.parametrize(
    ("name", "kw", "sched", "skw"),
    [
        ("NAdam", {"lr": 0.01}, "OneCycleLR", {"max_lr": 0.1, "total_steps": 6}),
        (
            "RMSprop",
            {"momentum": 0.9},
            "CyclicLR",
            {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2},
        ),
        ("Adagrad", {"lr": 0.1}, "StepLR", {"step_size": 2, "gamma": 0.5}),
    ],
    ids=["NAdam-OneCycleLR", "RMSprop-CyclicLR", "Adagrad-StepLR"],
)
def test_schedulers_drive_new_optimizers_like_torch(name, kw, sched, skw, real_torch):
    results = []
    for lib in (ctorch, real_torch):
        params = _params(lib)
        opt = getattr(lib.optim, name)(params, **kw)
        scheduler = getattr(lib.optim.lr_scheduler, sched)(opt, **skw)
        for _ in range(4):
            _train(lib, opt, params, 1)
            scheduler.step()
        results.append((params, opt.state_dict()))
    for a, b in zip(results[0][0], results[1][0]):
        _assert_close(a, b, "param")
    _assert_same_state(results[0][1], results[1][1])


@pytest.mark.parametrize("name, kw", [("NAdam", {}), ("ASGD", {"lr": 0.1, "t0": 1})])
def test_scalar_state_follows_the_default_dtype(name, kw, real_torch):
    """With float64 the default dtype, PyTorch keeps NAdam's ``mu_product`` and ASGD's
    ``eta``/``mu`` in float64 tensors: float64 parameters then match to float64 rounding
    (rounded to float32, they were 2.5e-11 apart after five steps)."""
    out = []
    for lib in (ctorch, real_torch):
        lib.set_default_dtype(lib.float64)
        try:
            p = lib.nn.Parameter(lib.tensor(np.linspace(-1.0, 1.0, 7)))
            opt = getattr(lib.optim, name)([p], **kw)
            for _ in range(5):
                opt.zero_grad()
                (p**4).sum().backward()
                opt.step()
        finally:
            lib.set_default_dtype(lib.float32)
        out.append(npv(p))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-14, atol=1e-15)


# lerp's weight complement is taken in the parameter's compute type: float32 for a
# float32 parameter, double for a float64 one (beta1 / alpha < 0.5 selects that formula).
HIGH_WEIGHT = [
    ("Adam", {"betas": (0.3, 0.999)}),
    ("AdamW", {"betas": (0.3, 0.999)}),
    ("Adamax", {"betas": (0.3, 0.999)}),
    ("NAdam", {"betas": (0.3, 0.999)}),
    ("RAdam", {"betas": (0.3, 0.999)}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("name", "kw"), HIGH_WEIGHT, ids=[c[0] for c in HIGH_WEIGHT])
def test_high_weight_lerp_is_bit_exact_in_each_dtype(name, kw, dtype, real_torch):
    def run(lib):
        p = lib.nn.Parameter(lib.tensor(np.linspace(-1.0, 1.0, 7), dtype=getattr(lib, dtype)))
        opt = getattr(lib.optim, name)([p], **kw)
        for _ in range(5):
            opt.zero_grad()
            (p * p * p).sum().backward()
            opt.step()
        return npv(p.detach())

    np.testing.assert_array_equal(run(ctorch), run(real_torch))
