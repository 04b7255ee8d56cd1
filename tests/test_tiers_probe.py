"""How many of a background-compiled executable's first calls the tier policy times
(funcgrad.core.tiers): fewer for long host-tier calls, whose time is their work, and
results unchanged while probing and after the decision."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from tiers_testutil import Clock

from funcgrad.core import tiers
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval


@pytest.mark.parametrize(
    ("host_us", "probes"),
    [(1, 8), (6_000, 8), (10_000, 5), (12_500, 4), (20_000, 3), (2_000_000, 3)],
)
def test_probe_calls_fit_a_budget_of_host_work(host_us, probes):
    # the budget is 50 ms of host-tier work: 50 / 10 = 5 calls; never under 3 or over 8
    assert tiers._probe_calls(host_us * 1000) == probes


@pytest.mark.parametrize(
    ("host_us", "exe_us", "probes", "kept"),
    [
        (100, 100, 8, True),
        (100, 250, 8, False),
        (40_000, 30_000, 3, True),
        (40_000, 90_000, 3, False),
    ],
)
def test_a_long_program_is_judged_after_fewer_calls(
    policy, monkeypatch, host_us, exe_us, probes, kept
):
    def f(x, y):
        return [x * y + x]

    a = Aval((8,), np.dtype("float32"))
    prog = trace_flat(f, [a, a], "test")
    args = [np.linspace(0.5, 1.5, 8, dtype=np.float32), np.full(8, 2.0, np.float32)]
    expected = args[0] * args[1] + args[0]
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 2, 0, 1
    policy.tier_drop_min_ms = 0.0  # (the ratio alone: 0.15 ms slower is under the floor)
    t = tiers.Tiered(prog)
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(host_us))  # each host call lasts host_us
        for _ in range(2):
            np.testing.assert_array_equal(t(*args)[0], expected)
    assert t.submitted and tiers.wait_for_background(60) and t.exe is not None
    assert t.probes == probes
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(exe_us))  # each executable call lasts exe_us
        for _ in range(probes):  # the executable's calls, timed to completion
            out = t(*args)[0]
            assert not isinstance(out, np.ndarray)
            np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    assert not t.probes
    assert (t.exe is not None) is kept
    out = t(*args)[0]  # the executable, or the host tier for good: the same values
    assert isinstance(out, np.ndarray) is (not kept)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_threads_probing_at_once_end_the_probe(policy):
    def f(x, y):
        return [x * y - y]

    a = Aval((16,), np.dtype("float32"))
    prog = trace_flat(f, [a, a], "test")
    args = [np.linspace(-1, 1, 16, dtype=np.float32), np.full(16, 3.0, np.float32)]
    expected = args[0] * args[1] - args[1]
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 2, 0, 0
    t = tiers.Tiered(prog)
    t(*args)
    t(*args)
    assert tiers.wait_for_background(60) and t.exe is not None and t.probes > 0
    results = []

    def worker():
        for _ in range(10):
            results.append(np.asarray(t(*args)[0]))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert t.probes == 0 and t.exe is not None  # (a zero floor keeps the executable)
    for r in results:
        np.testing.assert_allclose(r, expected, rtol=1e-6)


@pytest.mark.parametrize(("host_us", "submitted_at"), [(25_000, 3), (15_000, 8), (100, 8)])
def test_a_long_program_compiles_from_its_third_call(policy, monkeypatch, host_us, submitted_at):
    # tier_compile_after is 8; a fastest call of 20 ms or more is compiled from the 3rd
    def f(x):
        return [x * 2.0 + 1.0]

    prog = trace_flat(f, [Aval((4,), np.dtype("float32"))], "test")
    x = np.arange(4, dtype=np.float32)
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 8, 0, 1
    t = tiers.Tiered(prog)
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(host_us))
        for call in range(1, 9):
            np.testing.assert_array_equal(t(x)[0], x * 2 + 1)  # the host tier's, unchanged
            assert t.submitted is (call >= submitted_at)
    tiers.wait_for_background(60)
