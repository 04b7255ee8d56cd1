"""compat.torch.optim.lr_scheduler side by side with real PyTorch's schedulers.

Every scheduler runs next to PyTorch's on the same kind of optimizer with the
same parameter groups; learning rates (and OneCycleLR's momentum / betas) must be
the very same Python floats at every step. Also: state-dict resume (including
loading a state dict across the two libraries), ReduceLROnPlateau on scripted
metrics, SequentialLR / ChainedScheduler, PyTorch's warnings and errors, training
with a schedule, and that a schedule never retraces the optimizer's compiled step.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compat.torch as ctorch
from compat.torch.optim import _compiled

STEPS = 30
# ``real_torch`` is a module, not per-example state: sharing it across examples is fine.
_FIXTURE_OK = [HealthCheck.function_scoped_fixture]
GROUP_LRS = (0.1, 0.03)


def _optimizer(lib, kind: str, lrs=GROUP_LRS, **kw):
    """An optimizer of ``kind`` with one param group per lr (gradient-free, float64)."""
    groups = [
        {"params": [lib.nn.Parameter(lib.tensor(np.full(i + 2, 1.0)))], "lr": lr}
        for i, lr in enumerate(lrs)
    ]
    if kind == "SGD" and "momentum" not in kw:
        kw["momentum"] = 0.9
    return getattr(lib.optim, kind)(groups, **kw)


def _group_state(opt):
    return [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]


def _assert_same(c_opt, t_opt, c_sched, t_sched, where):
    assert c_sched.get_last_lr() == t_sched.get_last_lr(), where
    assert _group_state(c_opt) == _group_state(t_opt), where


def _side_by_side(real_torch, kind, make, steps=STEPS, opt_kw=None, lrs=GROUP_LRS):
    """Build ``make(lib, opt)`` on both libraries and compare them for ``steps`` steps."""
    opt_kw = opt_kw or {}
    c_opt, t_opt = (
        _optimizer(ctorch, kind, lrs, **opt_kw),
        _optimizer(real_torch, kind, lrs, **opt_kw),
    )
    c_sched, t_sched = make(ctorch, c_opt), make(real_torch, t_opt)
    _assert_same(c_opt, t_opt, c_sched, t_sched, "construction")
    for i in range(steps):
        c_opt.step()
        t_opt.step()
        c_sched.step()
        t_sched.step()
        _assert_same(c_opt, t_opt, c_sched, t_sched, f"step {i + 1}")
    return c_opt, t_opt, c_sched, t_sched


def _sched(name, *args, **kw):
    return lambda lib, opt: getattr(lib.optim.lr_scheduler, name)(opt, *args, **kw)


CASES = {
    "LambdaLR": _sched("LambdaLR", lambda e: 0.95**e),
    "LambdaLR-per-group": _sched("LambdaLR", [lambda e: 1.0 / (e + 1), lambda e: 0.5 ** (e // 4)]),
    "MultiplicativeLR": _sched("MultiplicativeLR", lambda e: 0.9 if e % 2 else 0.99),
    "StepLR": _sched("StepLR", step_size=4, gamma=0.5),
    "StepLR-default-gamma": _sched("StepLR", 7),
    "MultiStepLR": _sched("MultiStepLR", milestones=[3, 7, 7, 12], gamma=0.3),
    "ConstantLR": _sched("ConstantLR", factor=0.25, total_iters=6),
    "ConstantLR-defaults": _sched("ConstantLR"),
    "LinearLR": _sched("LinearLR", start_factor=0.2, end_factor=0.9, total_iters=9),
    "LinearLR-defaults": _sched("LinearLR"),
    "ExponentialLR": _sched("ExponentialLR", gamma=0.87),
    "CosineAnnealingLR": _sched("CosineAnnealingLR", T_max=7, eta_min=0.001),
    "CosineAnnealingLR-long": _sched("CosineAnnealingLR", T_max=40),
    "PolynomialLR": _sched("PolynomialLR", total_iters=12, power=2.0),
    "PolynomialLR-defaults": _sched("PolynomialLR"),
    "OneCycleLR-cos": _sched("OneCycleLR", max_lr=[1.0, 0.4], total_steps=STEPS),
    "OneCycleLR-linear-3phase": _sched(
        "OneCycleLR",
        max_lr=0.5,
        total_steps=STEPS,
        anneal_strategy="linear",
        three_phase=True,
        pct_start=0.25,
    ),
    "OneCycleLR-epochs": _sched(
        "OneCycleLR",
        max_lr=0.3,
        epochs=6,
        steps_per_epoch=5,
        base_momentum=[0.8, 0.7],
        max_momentum=0.92,
        div_factor=10.0,
        final_div_factor=100.0,
    ),
    "OneCycleLR-no-momentum": _sched(
        "OneCycleLR", max_lr=0.2, total_steps=STEPS, cycle_momentum=False
    ),
}


@pytest.mark.parametrize("kind", ["SGD", "Adam", "AdamW"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_schedule_matches_pytorch(real_torch, case, kind):
    _side_by_side(real_torch, kind, CASES[case])


def test_one_cycle_past_total_steps_raises_like_pytorch(real_torch):
    _, _, c_sched, t_sched = _side_by_side(real_torch, "SGD", CASES["OneCycleLR-cos"])
    for sched in (c_sched, t_sched):
        with pytest.raises(ValueError, match=f"Tried to step {STEPS + 1} times"):
            sched.step()


def test_one_cycle_sets_group_keys_like_pytorch(real_torch):
    c_opt = _optimizer(ctorch, "Adam")
    t_opt = _optimizer(real_torch, "Adam")
    for lib, opt in ((ctorch, c_opt), (real_torch, t_opt)):
        lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    for cg, tg in zip(c_opt.param_groups, t_opt.param_groups):
        keys = ("initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum", "betas", "lr")
        assert {k: cg[k] for k in keys} == {k: tg[k] for k in keys}


# ---------------------------------------------------------------------------
# Hypothesis: the chainable forms stay exact over the parameter space
# ---------------------------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(step_size=st.integers(1, 10), gamma=st.floats(0.05, 1.0))
def test_step_lr_property(real_torch, step_size, gamma):
    _side_by_side(real_torch, "SGD", _sched("StepLR", step_size=step_size, gamma=gamma))


@settings(max_examples=15, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(t_max=st.integers(1, 25), eta_min=st.sampled_from([0.0, 1e-4, 0.01]))
def test_cosine_annealing_property(real_torch, t_max, eta_min):
    _side_by_side(real_torch, "SGD", _sched("CosineAnnealingLR", T_max=t_max, eta_min=eta_min))


@settings(max_examples=15, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(
    total=st.integers(8, 40),
    pct=st.floats(0.05, 0.45),
    three_phase=st.booleans(),
    anneal=st.sampled_from(["cos", "linear"]),
)
def test_one_cycle_property(real_torch, total, pct, three_phase, anneal):
    make = _sched(
        "OneCycleLR",
        max_lr=[0.9, 0.2],
        total_steps=total,
        pct_start=pct,
        three_phase=three_phase,
        anneal_strategy=anneal,
    )
    _side_by_side(real_torch, "Adam", make, steps=total)


@settings(max_examples=10, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(
    start=st.floats(0.01, 1.0),
    end=st.floats(0.0, 1.0),
    total=st.integers(1, 20),
    power=st.floats(0.5, 3.0),
)
def test_linear_and_polynomial_property(real_torch, start, end, total, power):
    make_lin = _sched("LinearLR", start_factor=start, end_factor=end, total_iters=total)
    _side_by_side(real_torch, "SGD", make_lin)
    _side_by_side(real_torch, "SGD", _sched("PolynomialLR", total_iters=total, power=power))


# ---------------------------------------------------------------------------
# Compositions
# ---------------------------------------------------------------------------


def _sequential(*specs, milestones):
    def make(lib, opt):
        members = [_sched(name, **kw)(lib, opt) for name, kw in specs]
        return lib.optim.lr_scheduler.SequentialLR(opt, members, milestones=milestones)

    return make


def _chained(*specs, pass_optimizer=False):
    def make(lib, opt):
        members = [_sched(name, **kw)(lib, opt) for name, kw in specs]
        if pass_optimizer:
            return lib.optim.lr_scheduler.ChainedScheduler(members, optimizer=opt)
        return lib.optim.lr_scheduler.ChainedScheduler(members)

    return make


COMPOSITIONS = {
    "sequential-warmup-exp": _sequential(
        ("ConstantLR", {"factor": 0.1, "total_iters": 5}),
        ("ExponentialLR", {"gamma": 0.9}),
        milestones=[5],
    ),
    "sequential-three": _sequential(
        ("LinearLR", {"start_factor": 0.1, "total_iters": 4}),
        ("CosineAnnealingLR", {"T_max": 10, "eta_min": 1e-3}),
        ("StepLR", {"step_size": 3, "gamma": 0.5}),
        milestones=[4, 15],
    ),
    "chained-constant-exp": _chained(
        ("ConstantLR", {"factor": 0.1, "total_iters": 2}), ("ExponentialLR", {"gamma": 0.9})
    ),
    "chained-linear-multistep": _chained(
        ("LinearLR", {"start_factor": 0.5, "total_iters": 6}),
        ("MultiStepLR", {"milestones": [4, 9], "gamma": 0.5}),
        pass_optimizer=True,
    ),
}


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("case", sorted(COMPOSITIONS))
def test_composition_matches_pytorch(real_torch, case, kind):
    _side_by_side(real_torch, kind, COMPOSITIONS[case])


def test_nested_sequential_in_chained(real_torch):
    def make(lib, opt):
        s = lib.optim.lr_scheduler
        seq = s.SequentialLR(
            opt, [s.ConstantLR(opt, factor=0.5, total_iters=3), s.ExponentialLR(opt, 0.8)], [3]
        )
        return s.ChainedScheduler([seq, s.StepLR(opt, step_size=5, gamma=0.5)])

    _side_by_side(real_torch, "SGD", make)


# ---------------------------------------------------------------------------
# Resuming: state dicts and last_epoch
# ---------------------------------------------------------------------------

RESUMABLE = [
    "StepLR",
    "MultiStepLR",
    "LinearLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "PolynomialLR",
    "OneCycleLR-cos",
    "LambdaLR",
]


@pytest.mark.parametrize("case", RESUMABLE)
def test_state_dict_round_trip_resumes_like_uninterrupted_pytorch(real_torch, case):
    make = CASES[case]
    t_opt = _optimizer(real_torch, "SGD")
    t_sched = make(real_torch, t_opt)
    c_opt = _optimizer(ctorch, "SGD")
    c_sched = make(ctorch, c_opt)
    for _ in range(10):
        for opt, sched in ((c_opt, c_sched), (t_opt, t_sched)):
            opt.step()
            sched.step()
    # compat's scheduler state is PyTorch's, key for key and value for value
    c_state, t_state = c_sched.state_dict(), t_sched.state_dict()
    assert c_state.keys() == t_state.keys()
    assert {k: v for k, v in c_state.items() if k not in ("lr_lambdas",)} == {
        k: v for k, v in t_state.items() if k not in ("lr_lambdas",)
    }
    saved_opt = copy.deepcopy(c_opt.state_dict())
    saved_sched = copy.deepcopy(c_state)

    # PyTorch's recipe: new optimizer and scheduler, then load both state dicts.
    r_opt = _optimizer(ctorch, "SGD", lrs=(5.0, 6.0))
    r_sched = make(ctorch, r_opt)
    r_opt.load_state_dict(saved_opt)
    r_sched.load_state_dict(saved_sched)
    # ... and a PyTorch scheduler resumed from compat's scheduler state.
    x_opt = _optimizer(real_torch, "SGD", lrs=(5.0, 6.0))
    x_sched = make(real_torch, x_opt)
    x_opt.load_state_dict(copy.deepcopy(t_opt.state_dict()))
    x_sched.load_state_dict(copy.deepcopy(c_state))
    assert r_sched.get_last_lr() == t_sched.get_last_lr()
    for _ in range(STEPS - 10):
        for opt, sched in ((r_opt, r_sched), (t_opt, t_sched), (x_opt, x_sched)):
            opt.step()
            sched.step()
        _assert_same(r_opt, t_opt, r_sched, t_sched, "resumed")
        _assert_same(r_opt, x_opt, r_sched, x_sched, "cross-loaded")


@pytest.mark.parametrize("case", ["StepLR", "CosineAnnealingLR", "ExponentialLR", "LinearLR"])
def test_last_epoch_resume_matches_pytorch(real_torch, case):
    """Construct with ``last_epoch=k`` on an optimizer whose groups carry ``initial_lr``."""
    make_resumed = {
        "StepLR": _sched("StepLR", step_size=4, gamma=0.5, last_epoch=9),
        "CosineAnnealingLR": _sched("CosineAnnealingLR", T_max=7, eta_min=1e-3, last_epoch=9),
        "ExponentialLR": _sched("ExponentialLR", gamma=0.87, last_epoch=9),
        "LinearLR": _sched("LinearLR", start_factor=0.2, total_iters=15, last_epoch=9),
    }[case]

    def make(lib, opt):
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
        return make_resumed(lib, opt)

    _side_by_side(real_torch, "SGD", make, steps=20)


def test_last_epoch_without_initial_lr_raises_like_pytorch(real_torch):
    for lib in (ctorch, real_torch):
        opt = _optimizer(lib, "SGD")
        with pytest.raises(
            KeyError, match=r"param 'initial_lr' is not specified in param_groups\[0\]"
        ):
            lib.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)


@pytest.mark.parametrize("case", sorted(COMPOSITIONS))
def test_composition_state_dict_round_trip(real_torch, case):
    make = COMPOSITIONS[case]
    c_opt, t_opt, c_sched, t_sched = _side_by_side(real_torch, "SGD", make, steps=8)
    c_state, t_state = c_sched.state_dict(), t_sched.state_dict()
    assert c_state.keys() == t_state.keys()
    assert [s.keys() for s in c_state["_schedulers"]] == [s.keys() for s in t_state["_schedulers"]]
    r_opt = _optimizer(ctorch, "SGD")
    r_sched = make(ctorch, r_opt)
    r_opt.load_state_dict(copy.deepcopy(c_opt.state_dict()))
    r_sched.load_state_dict(copy.deepcopy(c_state))
    for _ in range(15):
        for opt, sched in ((r_opt, r_sched), (t_opt, t_sched)):
            opt.step()
            sched.step()
        _assert_same(r_opt, t_opt, r_sched, t_sched, "resumed")


def test_lambda_state_dict_saves_callable_objects_only(real_torch):
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate**epoch

    states = []
    for lib in (ctorch, real_torch):
        opt = _optimizer(lib, "SGD")
        sched = lib.optim.lr_scheduler.LambdaLR(opt, [Decay(0.9), lambda e: 1.0])
        state = sched.state_dict()
        states.append(state["lr_lambdas"])
        other = Decay(0.5)
        fresh = lib.optim.lr_scheduler.LambdaLR(_optimizer(lib, "SGD"), [other, lambda e: 1.0])
        fresh.load_state_dict(state)
        assert other.rate == 0.9
    assert states[0] == states[1] == [{"rate": 0.9}, None]


# ---------------------------------------------------------------------------
# ReduceLROnPlateau
# ---------------------------------------------------------------------------

PLATEAU_METRICS = [
    1.0, 0.9, 0.9, 0.91, 0.9, 0.95, 0.899, 0.8999, 0.9, 1.2,
    0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.49999, 0.4, 0.4, 0.4,
    0.4, 0.41, 0.39, 0.39, 0.39, 0.39, 0.39, 0.39, 0.1, 0.1,
] + [0.1] * 12  # fmt: skip

PLATEAU_CONFIGS = [
    {},
    {"patience": 2},
    {"patience": 1, "factor": 0.5, "cooldown": 2},
    {"patience": 0, "threshold": 0.05, "threshold_mode": "abs", "min_lr": 0.004},
    {"mode": "max", "patience": 2, "factor": 0.3},
    {"mode": "max", "patience": 1, "threshold_mode": "abs", "threshold": 0.0, "cooldown": 1},
    {"patience": 0, "factor": 0.5, "min_lr": [0.01, 0.001], "eps": 0.005},
]


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("config", PLATEAU_CONFIGS, ids=str)
def test_reduce_on_plateau_matches_pytorch(real_torch, config, kind):
    c_opt, t_opt = _optimizer(ctorch, kind), _optimizer(real_torch, kind)
    c_sched = ctorch.optim.lr_scheduler.ReduceLROnPlateau(c_opt, **config)
    t_sched = real_torch.optim.lr_scheduler.ReduceLROnPlateau(t_opt, **config)
    _assert_same(c_opt, t_opt, c_sched, t_sched, "construction")
    reduced = False
    for i, metric in enumerate(PLATEAU_METRICS):
        c_opt.step()
        t_opt.step()
        # any SupportsFloat: alternate Python floats and 0-d float64 tensors
        c_sched.step(metric if i % 2 else ctorch.tensor(metric, dtype=ctorch.float64))
        t_sched.step(metric if i % 3 else real_torch.tensor(metric, dtype=real_torch.float64))
        _assert_same(c_opt, t_opt, c_sched, t_sched, f"epoch {i + 1}")
        for attr in ("best", "num_bad_epochs", "cooldown_counter", "last_epoch", "in_cooldown"):
            assert getattr(c_sched, attr) == getattr(t_sched, attr), (attr, i)
        reduced |= c_sched.get_last_lr() != list(GROUP_LRS)
    assert reduced
    c_state, t_state = c_sched.state_dict(), t_sched.state_dict()
    assert c_state == t_state
    fresh = ctorch.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(ctorch, kind))
    fresh.load_state_dict(c_state)
    assert fresh._is_better(-1e9, fresh.best) == (config.get("mode", "min") == "min")


def test_reduce_on_plateau_errors_like_pytorch(real_torch):
    for lib in (ctorch, real_torch):
        opt = _optimizer(lib, "SGD")
        plateau = lib.optim.lr_scheduler.ReduceLROnPlateau
        with pytest.raises(ValueError, match=r"Factor should be < 1\.0\."):
            plateau(opt, factor=1.0)
        with pytest.raises(ValueError, match="mode sideways is unknown!"):
            plateau(opt, mode="sideways")
        with pytest.raises(ValueError, match="threshold mode x is unknown!"):
            plateau(opt, threshold_mode="x")
        with pytest.raises(ValueError, match="expected 2 min_lrs, got 3"):
            plateau(opt, min_lr=[0, 0, 0])
        with pytest.raises(TypeError, match="int is not an Optimizer"):
            plateau(3)


# ---------------------------------------------------------------------------
# Warnings, errors, API surface
# ---------------------------------------------------------------------------


@pytest.fixture
def both(real_torch):
    return (ctorch, real_torch)


def test_step_order_warning_like_pytorch(both):
    for lib in both:
        opt = _optimizer(lib, "SGD")
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before"):
            sched.step()
        opt = _optimizer(lib, "SGD")
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.step()
            sched.step()
            sched.step()
        assert opt.step._wrapped_by_lr_sched


def test_overridden_optimizer_step_warning_like_pytorch(both):
    for lib in both:
        opt = _optimizer(lib, "SGD")
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        opt.step = lambda closure=None: None
        with pytest.warns(
            UserWarning, match=r"Seems like `optimizer.step\(\)` has been overridden"
        ):
            sched.step()


def test_get_lr_outside_step_warns_like_pytorch(both):
    for lib in both:
        sched = lib.optim.lr_scheduler.StepLR(_optimizer(lib, "SGD"), step_size=2)
        with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
            sched.get_lr()


@pytest.mark.parametrize(
    "case", ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
             "CosineAnnealingLR", "PolynomialLR", "LambdaLR"],
)  # fmt: skip
def test_step_with_epoch_uses_closed_form_like_pytorch(real_torch, case):
    c_opt, t_opt = _optimizer(ctorch, "SGD"), _optimizer(real_torch, "SGD")
    c_sched, t_sched = CASES[case](ctorch, c_opt), CASES[case](real_torch, t_opt)
    for epoch in [3, 4, 11, 7, 20, 0]:
        c_opt.step()
        t_opt.step()
        for sched in (c_sched, t_sched):
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step"):
                sched.step(epoch)
        _assert_same(c_opt, t_opt, c_sched, t_sched, f"epoch {epoch}")


def _construction_errors(lib, opt):
    s = lib.optim.lr_scheduler
    return [
        (ValueError, lambda: s.ConstantLR(opt, factor=1.5)),
        (ValueError, lambda: s.LinearLR(opt, start_factor=0.0)),
        (ValueError, lambda: s.LinearLR(opt, end_factor=1.5)),
        (ValueError, lambda: s.LambdaLR(opt, [lambda e: 1.0])),
        (TypeError, lambda: s.MultiplicativeLR(opt, [1.0, 2.0])),
        (TypeError, lambda: s.StepLR(object(), step_size=1)),
        (ValueError, lambda: s.OneCycleLR(opt, max_lr=1.0)),
        (ValueError, lambda: s.OneCycleLR(opt, max_lr=1.0, total_steps=0)),
        (ValueError, lambda: s.OneCycleLR(opt, max_lr=1.0, epochs=0, steps_per_epoch=3)),
        (ValueError, lambda: s.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=1)),
        (ValueError, lambda: s.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="x")),
        (ValueError, lambda: s.OneCycleLR(opt, max_lr=[1.0], total_steps=5)),
        (ValueError, lambda: s.SequentialLR(opt, [], milestones=[])),
        (ValueError, lambda: s.SequentialLR(opt, [s.StepLR(opt, 2)], milestones=[3])),
        (ValueError, lambda: s.SequentialLR(opt, [s.ReduceLROnPlateau(opt)], milestones=[])),
        (ValueError, lambda: s.ChainedScheduler([])),
    ]


def test_construction_errors_like_pytorch(real_torch):
    c_cases = _construction_errors(ctorch, _optimizer(ctorch, "SGD"))
    t_cases = _construction_errors(real_torch, _optimizer(real_torch, "SGD"))
    for i, ((c_exc, c_fn), (_, t_fn)) in enumerate(zip(c_cases, t_cases)):
        with pytest.raises(c_exc) as t_info:
            t_fn()
        with pytest.raises(c_exc) as c_info:
            c_fn()
        assert str(c_info.value) == str(t_info.value), i


def test_sequential_rejects_a_foreign_optimizer_like_pytorch(both):
    for lib in both:
        opt, other = _optimizer(lib, "SGD"), _optimizer(lib, "SGD")
        s = lib.optim.lr_scheduler
        with pytest.raises(ValueError, match="expects all schedulers to belong to the same"):
            s.SequentialLR(opt, [s.StepLR(opt, 2), s.StepLR(other, 2)], milestones=[2])
        with pytest.raises(TypeError, match="at index 0 should have `optimizer`"):
            s.ChainedScheduler([object()], optimizer=opt)


def test_module_surface():
    import compat.torch.optim.lr_scheduler as lrs

    assert ctorch.optim.lr_scheduler is lrs
    assert issubclass(lrs._LRScheduler, lrs.LRScheduler)
    assert lrs._LRScheduler.__name__ == "_LRScheduler"
    for name in (
        "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
        "ExponentialLR", "CosineAnnealingLR", "PolynomialLR", "OneCycleLR", "SequentialLR",
        "ChainedScheduler", "ReduceLROnPlateau",
    ):  # fmt: skip
        cls = getattr(lrs, name)
        assert issubclass(cls, lrs.LRScheduler) and name in lrs.__all__
    opt = _optimizer(ctorch, "SGD")
    sched = lrs.StepLR(opt, step_size=3)
    assert [g["initial_lr"] for g in opt.param_groups] == list(GROUP_LRS)
    assert sched.last_epoch == 0 and sched._last_lr == list(GROUP_LRS)
    assert sched.base_lrs == list(GROUP_LRS)
    assert sched.get_last_lr() is sched._last_lr


def test_signatures_and_defaults_match_pytorch(real_torch):
    import inspect

    import compat.torch.optim.lr_scheduler as lrs

    for name in lrs.__all__:
        ours = inspect.signature(getattr(lrs, name))
        theirs = inspect.signature(getattr(real_torch.optim.lr_scheduler, name))
        assert [(p.name, p.default, p.kind) for p in ours.parameters.values()] == [
            (p.name, p.default, p.kind) for p in theirs.parameters.values()
        ], name


# ---------------------------------------------------------------------------
# Training with a schedule; no retracing of the compiled step
# ---------------------------------------------------------------------------

X = np.random.default_rng(0).normal(size=(16, 3))
Y = np.random.default_rng(1).normal(size=(16, 2))


def _linear(lib, weights):
    model = lib.nn.Linear(3, 2, dtype=lib.float64)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(weights[0]))
        model.bias.copy_(lib.tensor(weights[1]))
    return model


def _train(lib, make_opt, make_sched, steps, on_step=None):
    weights = (np.linspace(-1, 1, 6).reshape(2, 3), np.array([0.3, -0.2]))
    model = _linear(lib, weights)
    opt = make_opt(lib, model)
    sched = make_sched(lib, opt)
    x, y = lib.tensor(X), lib.tensor(Y)
    lrs = []
    for i in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        if on_step is not None:
            on_step(i)
    return [np.asarray(p.detach().numpy()) for p in model.parameters()], lrs


@pytest.mark.parametrize("fused", [None, False])  # compiled group step / per-tensor path
def test_sgd_with_step_lr_trains_like_pytorch(real_torch, fused):
    def make_opt(lib, model):
        extra = {"fused": fused} if lib is ctorch else {}
        return lib.optim.SGD(model.parameters(), lr=0.2, momentum=0.5, **extra)

    make_sched = _sched("StepLR", step_size=3, gamma=0.5)
    c_params, c_lrs = _train(ctorch, make_opt, make_sched, 10)
    t_params, t_lrs = _train(real_torch, make_opt, make_sched, 10)
    assert c_lrs == t_lrs
    for c, t in zip(c_params, t_params):
        assert c.dtype == np.float64
        np.testing.assert_allclose(c, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_schedule_does_not_retrace_the_compiled_step(real_torch, kind):
    """OneCycleLR changes lr and momentum/beta1 each step: the group program stays the same."""

    def make_opt(lib, model):
        if kind == "SGD":
            return lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        return lib.optim.Adam(model.parameters(), lr=0.1)

    make_sched = _sched("OneCycleLR", max_lr=0.5, total_steps=20)
    key = "sgd_step" if kind == "SGD" else "adam_step"
    counts = {}

    def record(i):
        counts[i] = _compiled.trace_counts[key]

    c_params, c_lrs = _train(ctorch, make_opt, make_sched, 20, on_step=record)
    t_params, t_lrs = _train(real_torch, make_opt, make_sched, 20)
    assert c_lrs == t_lrs
    assert len({lr[0] for lr in c_lrs}) >= 18  # the lr changes (almost) every step
    assert counts[19] == counts[1], counts  # no retrace after the first two steps
    for c, t in zip(c_params, t_params):
        np.testing.assert_allclose(c, t, rtol=1e-10, atol=1e-12)
    assert math.isfinite(float(c_params[0].sum()))


# ---------------------------------------------------------------------------
# CyclicLR and CosineAnnealingWarmRestarts
# ---------------------------------------------------------------------------


class _ScaleBy:
    """A callable-object ``scale_fn`` (its ``__dict__`` is saved in the state dict)."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x):
        return self.rate**x


CYCLIC_CASES = {
    "triangular": _sched("CyclicLR", base_lr=0.01, max_lr=0.1, step_size_up=4),
    "triangular-asym-per-group": _sched(
        "CyclicLR",
        base_lr=[0.01, 0.002],
        max_lr=[0.1, 0.05],
        step_size_up=3,
        step_size_down=5,
        base_momentum=[0.8, 0.7],
        max_momentum=[0.9, 0.95],
    ),
    "triangular2": _sched(
        "CyclicLR", base_lr=0.001, max_lr=0.2, step_size_up=2, step_size_down=4, mode="triangular2"
    ),
    "exp_range": _sched(
        "CyclicLR", base_lr=0.005, max_lr=0.3, step_size_up=5, mode="exp_range", gamma=0.93
    ),
    "scale_fn-cycle": _sched(
        "CyclicLR", base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda c: 1.0 / c
    ),
    "scale_fn-iterations": _sched(
        "CyclicLR",
        base_lr=0.01,
        max_lr=0.1,
        step_size_up=4,
        step_size_down=2,
        scale_fn=_ScaleBy(0.97),
        scale_mode="iterations",
    ),
    "no-momentum": _sched(
        "CyclicLR", base_lr=0.02, max_lr=0.2, step_size_up=3, cycle_momentum=False
    ),
}

WARM_RESTART_CASES = {
    "T_0=5": _sched("CosineAnnealingWarmRestarts", T_0=5),
    "T_0=3,T_mult=2,eta_min": _sched("CosineAnnealingWarmRestarts", T_0=3, T_mult=2, eta_min=1e-3),
    "T_0=1,T_mult=3": _sched("CosineAnnealingWarmRestarts", T_0=1, T_mult=3, eta_min=0),
}


@pytest.mark.parametrize("kind", ["SGD", "Adam", "AdamW"])
@pytest.mark.parametrize("case", sorted(CYCLIC_CASES))
def test_cyclic_lr_matches_pytorch_with_momentum_or_betas(real_torch, case, kind):
    """lr, SGD momentum / Adam betas and group keys are PyTorch's at every step."""
    c_opt, t_opt, c_sched, t_sched = _side_by_side(real_torch, kind, CYCLIC_CASES[case], steps=40)
    for cg, tg in zip(c_opt.param_groups, t_opt.param_groups):
        assert cg.keys() == tg.keys()
        assert {k: cg[k] for k in cg if k != "params"} == {k: tg[k] for k in tg if k != "params"}
    # the momentum (SGD) or beta1 (Adam) really cycles, unless cycle_momentum=False
    seen = set()
    for _ in range(8):
        for opt, sched in ((c_opt, c_sched), (t_opt, t_sched)):
            opt.step()
            sched.step()
        _assert_same(c_opt, t_opt, c_sched, t_sched, "more steps")
        group = c_opt.param_groups[0]
        seen.add(group["momentum"] if kind == "SGD" else group["betas"][0])
    assert len(seen) == 1 if case == "no-momentum" else len(seen) >= 4


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("case", sorted(WARM_RESTART_CASES))
def test_warm_restarts_match_pytorch(real_torch, case, kind):
    _, _, c_sched, t_sched = _side_by_side(real_torch, kind, WARM_RESTART_CASES[case], steps=40)
    assert (c_sched.T_cur, c_sched.T_i, c_sched._step_count) == (
        t_sched.T_cur,
        t_sched.T_i,
        t_sched._step_count,
    )


@pytest.mark.parametrize("case", sorted(WARM_RESTART_CASES))
def test_warm_restarts_fractional_and_interleaved_epochs_match_pytorch(real_torch, case):
    """``step(epoch + i / iters)`` per batch, then jumps and plain ``step()`` interleaved."""
    make = WARM_RESTART_CASES[case]
    c_opt, t_opt = _optimizer(ctorch, "SGD"), _optimizer(real_torch, "SGD")
    c_sched, t_sched = make(ctorch, c_opt), make(real_torch, t_opt)
    iters = 7
    epochs = [e + i / iters for e in range(12) for i in range(iters)]
    epochs += [26, None, None, 2.5, None, 0, 0.999, 40.25, None, 3, 9.0, 21.75, None]
    for k, epoch in enumerate(epochs):
        c_opt.step()
        t_opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no deprecation warning for step(epoch) here
            c_sched.step(epoch)
            t_sched.step(epoch)
        _assert_same(c_opt, t_opt, c_sched, t_sched, f"#{k} epoch {epoch}")
        assert (c_sched.T_cur, c_sched.T_i, c_sched.last_epoch) == (
            t_sched.T_cur,
            t_sched.T_i,
            t_sched.last_epoch,
        ), (k, epoch)
    assert c_sched.state_dict() == t_sched.state_dict()


def _resume_both_ways(real_torch, make, kind, steps_before=13, steps_after=25):
    c_opt, t_opt, c_sched, t_sched = _side_by_side(real_torch, kind, make, steps=steps_before)
    c_state, t_state = c_sched.state_dict(), t_sched.state_dict()
    assert c_state.keys() == t_state.keys()
    assert c_state == t_state
    # a fresh compat pair from compat's state; a fresh PyTorch pair from compat's state too
    r_opt = _optimizer(ctorch, kind, lrs=(5.0, 6.0))
    r_sched = make(ctorch, r_opt)
    r_opt.load_state_dict(copy.deepcopy(c_opt.state_dict()))
    r_sched.load_state_dict(copy.deepcopy(c_state))
    x_opt = _optimizer(real_torch, kind, lrs=(5.0, 6.0))
    x_sched = make(real_torch, x_opt)
    x_opt.load_state_dict(copy.deepcopy(t_opt.state_dict()))
    x_sched.load_state_dict(copy.deepcopy(c_state))
    for i in range(steps_after):
        for opt, sched in ((r_opt, r_sched), (t_opt, t_sched), (x_opt, x_sched)):
            opt.step()
            sched.step()
        _assert_same(r_opt, t_opt, r_sched, t_sched, f"resumed {i}")
        _assert_same(r_opt, x_opt, r_sched, x_sched, f"cross-loaded {i}")


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize(
    "case", ["triangular2", "exp_range", "scale_fn-iterations", "no-momentum", "T_0=3,T_mult=2"]
)
def test_cyclic_state_dict_round_trip_like_pytorch(real_torch, case, kind):
    make = CYCLIC_CASES.get(case) or WARM_RESTART_CASES[f"{case},eta_min"]
    _resume_both_ways(real_torch, make, kind)


def test_cyclic_lr_state_dict_saves_scale_fn_objects_only(real_torch):
    for lib in (ctorch, real_torch):
        s = lib.optim.lr_scheduler
        opt = _optimizer(lib, "SGD")
        sched = s.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=_ScaleBy(0.5))
        state = sched.state_dict()
        assert state["_scale_fn_custom"] == {"rate": 0.5}
        assert "_scale_fn_ref" not in state
        other = _ScaleBy(0.9)
        fresh = s.CyclicLR(_optimizer(lib, "SGD"), 0.01, 0.1, step_size_up=2, scale_fn=other)
        fresh.load_state_dict(state)
        assert other.rate == 0.5
        plain = s.CyclicLR(_optimizer(lib, "SGD"), 0.01, 0.1, scale_fn=lambda x: 1.0)
        assert plain.state_dict()["_scale_fn_custom"] is None
        built_in = s.CyclicLR(_optimizer(lib, "SGD"), 0.01, 0.1, mode="exp_range", gamma=0.9)
        restored = s.CyclicLR(_optimizer(lib, "SGD"), 0.01, 0.1)
        restored.load_state_dict(built_in.state_dict())
        assert restored.scale_mode == "iterations" and restored.scale_fn(2) == 0.9**2


def test_cyclic_lr_last_epoch_resume_matches_pytorch(real_torch):
    def make(lib, opt):
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"]
            g["max_momentum"], g["base_momentum"] = 0.9, 0.8
        return lib.optim.lr_scheduler.CyclicLR(
            opt, 0.01, 0.1, step_size_up=3, mode="triangular2", last_epoch=7
        )

    _side_by_side(real_torch, "SGD", make, steps=20)

    def make_warm(lib, opt):
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
        return lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 4, 2, last_epoch=9)

    _side_by_side(real_torch, "SGD", make_warm, steps=20)


def _no_momentum_optimizer(lib):
    class Plain(lib.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            return None

    return Plain([lib.nn.Parameter(lib.tensor(np.ones(2)))])


def _cyclic_errors(lib, opt):
    s = lib.optim.lr_scheduler
    return [
        (ValueError, lambda: s.CyclicLR(_no_momentum_optimizer(lib), 0.01, 0.1)),
        (ValueError, lambda: s.CyclicLR(opt, 0.01, 0.1, mode="sawtooth")),
        (ValueError, lambda: s.CyclicLR(opt, [0.01], 0.1)),
        (ValueError, lambda: s.CyclicLR(opt, 0.01, [0.1, 0.2, 0.3])),
        (ValueError, lambda: s.CyclicLR(opt, 0.01, 0.1, base_momentum=[0.8])),
        (TypeError, lambda: s.CyclicLR(object(), 0.01, 0.1)),
        (ValueError, lambda: s.CosineAnnealingWarmRestarts(opt, 0)),
        (ValueError, lambda: s.CosineAnnealingWarmRestarts(opt, 2.0)),
        (ValueError, lambda: s.CosineAnnealingWarmRestarts(opt, 2, T_mult=0)),
        (ValueError, lambda: s.CosineAnnealingWarmRestarts(opt, 2, T_mult=1.5)),
        (ValueError, lambda: s.CosineAnnealingWarmRestarts(opt, 2, eta_min="0")),
        (ValueError, lambda: s.CosineAnnealingWarmRestarts(opt, 2).step(-1)),
    ]


def test_cyclic_errors_like_pytorch(real_torch):
    c_cases = _cyclic_errors(ctorch, _optimizer(ctorch, "SGD"))
    t_cases = _cyclic_errors(real_torch, _optimizer(real_torch, "SGD"))
    for i, ((exc, c_fn), (_, t_fn)) in enumerate(zip(c_cases, t_cases)):
        with pytest.raises(exc) as t_info:
            t_fn()
        with pytest.raises(exc) as c_info:
            c_fn()
        assert str(c_info.value) == str(t_info.value), i


def test_cyclic_lr_without_momentum_on_a_momentum_free_optimizer(real_torch):
    """``cycle_momentum=False`` works where cycling momentum raises."""
    for lib in (ctorch, real_torch):
        opt = _no_momentum_optimizer(lib)
        sched = lib.optim.lr_scheduler.CyclicLR(
            opt, 0.01, 0.1, step_size_up=2, cycle_momentum=False
        )
        opt.step()
        sched.step()
        assert sched.get_last_lr() == [0.01 + (0.1 - 0.01) * 0.5]
        assert "momentum" not in opt.param_groups[0] and "max_momentum" not in opt.param_groups[0]


def test_cyclic_schedulers_warn_like_pytorch(both):
    for lib in both:
        s = lib.optim.lr_scheduler
        opt = _optimizer(lib, "SGD")
        cyc = s.CyclicLR(opt, 0.01, 0.1)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before"):
            cyc.step()
        with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
            cyc.get_lr()
        warm = s.CosineAnnealingWarmRestarts(_optimizer(lib, "SGD"), 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no step-order warning: step() is its own
            warm.step()
            warm.step(1.5)
        assert warm._step_count == 0
        with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
            warm.get_lr()
