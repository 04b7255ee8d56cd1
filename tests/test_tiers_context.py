"""An executable slower alone than the host tier, but within the drop ratio, is judged in
context (funcgrad.core.tiers, ``Tiered._trial``): its calls alternate with the host
tier's, each timed to the program's next call. The clocks are stand-ins: what is tested
is the rule, not this machine's speed. Also: the tier knobs are options of
funcgrad.config, and setting them changes what the policy does."""

from __future__ import annotations

import numpy as np
import pytest
from tiers_testutil import Clock, ManualClock

import funcgrad as fg
from funcgrad.core import tiers
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval


def _f(x, y):
    return [x * y + y]


_A = Aval((8,), np.dtype("float32"))
_ARGS = [np.linspace(-1.0, 1.0, 8, dtype=np.float32), np.full(8, 1.5, np.float32)]
_EXPECTED = _ARGS[0] * _ARGS[1] + _ARGS[1]


def _compiled(policy, monkeypatch, host_us: float = 100.0) -> tiers.Tiered:
    """A Tiered executable compiled in the background after two host calls of
    ``host_us`` each (stand-in clock), not yet probed."""
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 2, 0, 1
    policy.tier_drop_min_ms = 0.0  # (the ratio rule alone: the floor has tests of its own)
    t = tiers.Tiered(trace_flat(_f, [_A, _A], "test"))
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(host_us))
        for _ in range(2):
            np.testing.assert_array_equal(t(*_ARGS)[0], _EXPECTED)
    assert tiers.wait_for_background(60) and t.exe is not None
    return t


def _probe(t: tiers.Tiered, monkeypatch, exe_us: float, cpu_us: float = 0.0) -> None:
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(exe_us, cpu_us))
        while t.probes:
            np.testing.assert_allclose(np.asarray(t(*_ARGS)[0]), _EXPECTED, rtol=1e-6)


def _step(t: tiers.Tiered, clock: ManualClock, rest_us) -> bool:
    """One call of ``t`` and the caller's work after it (``rest_us(on_host)``); whether
    the call ran on the host tier. The results are the same either way."""
    out = t(*_ARGS)[0]
    on_host = type(out) is np.ndarray
    np.testing.assert_allclose(np.asarray(out), _EXPECTED, rtol=1e-6)
    clock.advance(rest_us(on_host))
    return on_host


@pytest.mark.parametrize(("exe_us", "trial"), [(90, False), (150, True), (250, False)])
def test_only_an_executable_within_the_drop_ratio_is_tried_in_context(
    policy, monkeypatch, exe_us, trial
):
    t = _compiled(policy, monkeypatch)
    _probe(t, monkeypatch, exe_us)
    assert bool(t.trial) is trial
    assert (t.exe is not None) is (exe_us < 200)  # (the drop ratio is 2)


@pytest.mark.parametrize(
    ("exe_us", "cpu_us", "spare", "kept", "trial"),
    [
        (40, 30, False, True, False),  # under half the host tier's, wall and CPU: kept
        (40, 60, False, False, False),  # its threads' CPU time over half the host tier's
        (90, 60, False, False, False),  # faster, but not by the margin a hand-over costs
        (90, 180, True, True, False),  # with a second core, wall time decides
        (150, 0, False, False, False),  # slower alone: no trial in context without a core
        (150, 0, True, True, True),
    ],
)
def test_without_a_spare_core_process_cpu_time_decides_and_nothing_is_tried(
    policy, monkeypatch, exe_us, cpu_us, spare, kept, trial
):
    # (a process sharing its cores with its peers: a 2-process DDP job on 2 cores)
    t = _compiled(policy, monkeypatch)
    monkeypatch.setattr(tiers, "_spare", [spare])
    _probe(t, monkeypatch, exe_us, cpu_us)
    assert (t.exe is not None) is kept
    assert bool(t.trial) is trial


@pytest.mark.parametrize(
    ("host_step_us", "exe_step_us", "kept"),
    [
        (1_000, 800, True),  # slower alone, but overlapped with the caller: a shorter step
        (1_000, 1_300, False),  # slower in the step too
        (1_000, 1_000, False),  # a tie: the host tier, which holds no second thread
    ],
)
def test_the_tier_with_the_shorter_interval_to_the_next_call_serves(
    policy, monkeypatch, host_step_us, exe_step_us, kept
):
    t = _compiled(policy, monkeypatch)
    _probe(t, monkeypatch, 150)
    n = t.trial
    assert n == 8
    before = fg.debug.tier_stats()
    clock = ManualClock()
    served = []
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", clock)
        for _ in range(2 * n + 1):
            served.append(_step(t, clock, lambda h: host_step_us if h else exe_step_us))
    assert served[: 2 * n].count(True) == n  # as many calls of each tier
    assert not t.trial and (t.exe is not None) is kept
    assert served[-1] is (not kept)  # the call that decided ran on the chosen tier
    after = fg.debug.tier_stats()
    assert after["background_trials"] == before["background_trials"] + 1
    assert after["background_kept_host"] == before["background_kept_host"] + (not kept)
    assert (type(t(*_ARGS)[0]) is np.ndarray) is (not kept)  # for good


def test_a_program_called_twice_a_step_is_judged_on_both_positions(policy, monkeypatch):
    # the program runs twice a step: the interval after its first call is short, the one
    # after its second holds the rest of the step. The executable saves 30 us of each
    # step; plain alternation would give the host tier every short interval and the
    # executable every long one, and drop it.
    t = _compiled(policy, monkeypatch)
    _probe(t, monkeypatch, 150)
    clock = ManualClock()
    position = [0]

    def rest(on_host: bool) -> float:
        position[0] ^= 1
        return (100 if position[0] else 5_000) - (0 if on_host else 30)

    with monkeypatch.context() as m:
        m.setattr(tiers, "time", clock)
        for _ in range(2 * t.trial + 1):
            _step(t, clock, rest)
    assert t.exe is not None and not t.trial


def test_trial_calls_are_balanced_on_the_first_positions_of_a_step():
    seq = [tiers._trial_host(k) for k in range(16)]
    assert seq[:4] == [True, False, False, True]
    for period in (1, 2, 4, 8):
        for start in range(period):
            own = seq[start::period]
            assert own.count(True) == own.count(False)


@pytest.mark.parametrize(
    ("exe_us", "kept", "trial"),
    [
        (250, True, False),  # 2.5x the host tier's, but 0.15 ms a call: kept untried
        (1_050, True, False),  # 10.5x, 0.95 ms slower: still under the 1 ms floor
        (1_500, False, False),  # 15x and 1.4 ms slower: dropped
    ],
)
def test_an_executable_slower_by_less_than_the_floor_is_kept(
    policy, monkeypatch, exe_us, kept, trial
):
    t = _compiled(policy, monkeypatch)
    fg.config.update("funcgrad_tier_drop_min_ms", 1.0)
    monkeypatch.setattr(tiers, "_spare", [True])  # (the floor rests on a second core)
    _probe(t, monkeypatch, exe_us)
    assert (t.exe is not None) is kept and bool(t.trial) is trial


def test_the_floor_leaves_a_long_program_to_the_ratio_and_the_trial(policy, monkeypatch):
    t = _compiled(policy, monkeypatch, host_us=10_000)
    fg.config.update("funcgrad_tier_drop_min_ms", 1.0)
    _probe(t, monkeypatch, 15_000)  # 5 ms slower a call, within the ratio: tried
    assert t.exe is not None and t.trial == 8


def test_judging_in_context_can_be_turned_off(policy, monkeypatch):
    fg.config.update("funcgrad_tier_judge_in_context", False)
    t = _compiled(policy, monkeypatch)
    _probe(t, monkeypatch, 150)
    assert not t.trial and t.exe is not None  # within the ratio: kept, as before


def test_the_drop_ratio_is_an_option(policy, monkeypatch):
    fg.config.update("funcgrad_tier_drop_ratio", 1.2)
    assert policy.tier_drop_ratio == 1.2
    t = _compiled(policy, monkeypatch)
    _probe(t, monkeypatch, 150)  # 1.5x the host tier's: over the ratio now
    assert t.exe is None and not t.trial


def test_the_trial_length_is_an_option(policy, monkeypatch):
    fg.config.update("funcgrad_tier_trial_calls", 3)
    t = _compiled(policy, monkeypatch)
    _probe(t, monkeypatch, 150)
    assert t.trial == 3
    clock = ManualClock()
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", clock)
        for _ in range(6):
            _step(t, clock, lambda h: 1_000 if h else 800)
        assert t.trial == 3  # six calls timed; the seventh decides
        assert not _step(t, clock, lambda h: 1_000)
    assert not t.trial and t.exe is not None


def test_the_probe_counts_are_options(policy):
    assert tiers._probe_calls(1_000) == 8
    fg.config.update("funcgrad_tier_probe_calls", 5)
    assert tiers._probe_calls(1_000) == 5
    fg.config.update("funcgrad_tier_probe_budget_ms", 10)  # 10 ms / 4 ms: 2, at least 3
    assert tiers._probe_calls(4_000_000) == 3
    fg.config.update("funcgrad_tier_probe_min_calls", 1)
    assert tiers._probe_calls(4_000_000) == 2


@pytest.mark.parametrize(("early_ms", "submitted_at"), [(20, 3), (30, 8)])
def test_the_early_compile_is_an_option(policy, monkeypatch, early_ms, submitted_at):
    fg.config.update("funcgrad_tier_early_ms", early_ms)
    fg.config.update("funcgrad_tier_early_calls", 3)
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 8, 0, 1
    t = tiers.Tiered(trace_flat(_f, [_A, _A], "test"))
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(25_000))  # 25 ms a host call
        for call in range(1, 9):
            t(*_ARGS)
            assert t.submitted is (call >= submitted_at)
    tiers.wait_for_background(60)


def test_tier_options_are_listed_and_checked():
    opts = fg.config.options()
    for name in (
        "funcgrad_tier_probe_calls",
        "funcgrad_tier_probe_min_calls",
        "funcgrad_tier_probe_budget_ms",
        "funcgrad_tier_drop_ratio",
        "funcgrad_tier_drop_min_ms",
        "funcgrad_tier_follow_compiled",
        "funcgrad_tier_judge_in_context",
        "funcgrad_tier_trial_calls",
        "funcgrad_tier_early_ms",
        "funcgrad_tier_early_calls",
        "funcgrad_tier_exit_wait_s",
    ):
        assert name in opts and opts[name][1]
    with pytest.raises(TypeError, match="funcgrad_tier_probe_calls"):
        fg.config.update("funcgrad_tier_probe_calls", "8")
