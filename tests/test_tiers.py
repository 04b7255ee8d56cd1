"""The tier policy (funcgrad.core.tiers): cold eager work on the host tier, hot work
compiled in the background with calls switching over, explicit modes, the counters."""

from __future__ import annotations

import subprocess
import sys
import threading

import jax
import numpy as np
import pytest
from tiers_testutil import Clock

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import compile_cache, tiers
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval


def _prog(n: int = 6, size: int = 64):
    def f(x, y):
        for i in range(n):
            x = fnp.tanh(x * y + 0.5) if i % 2 else x * x - y
        return [x, x * 2.0]

    a = Aval((size,), np.dtype("float32"))
    return trace_flat(f, [a, a], "test")


def _args(size: int = 64):
    rng = np.random.default_rng(0)
    return [rng.uniform(-1, 1, size).astype(np.float32) for _ in range(2)]


def test_cold_program_runs_on_host_without_compiling(policy):
    policy.tier = "tiered"
    prog = _prog()
    t = tiers.Tiered(prog)
    before = compile_cache.info().compiles
    out = t(*_args())
    assert all(type(o) is np.ndarray for o in out)
    assert t.exe is None and not t.submitted
    assert compile_cache.info().compiles == before  # nothing compiled, not even alone
    ref = compile_cache.compiled(prog)(*_args())
    for o, r in zip(out, ref):
        assert o.dtype == np.float32
        np.testing.assert_allclose(o, np.asarray(r), rtol=1e-6, atol=1e-6)


def test_hot_program_switches_to_compiled_with_same_results(policy):
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 3, 0, 0
    t = tiers.Tiered(_prog())
    args = _args()
    host = [t(*args) for _ in range(3)]
    assert t.submitted
    assert tiers.wait_for_background(60)
    assert t.exe is not None
    compiled = t(*args)
    assert not isinstance(compiled[0], np.ndarray)  # the executable's JAX arrays
    for h in host:
        for a, b in zip(h, compiled):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-6, atol=1e-6)


def test_threads_calling_while_it_compiles_see_one_result(policy):
    """No race: threads keep calling the same program while the background thread
    compiles it and the calls switch over; every result is the same."""
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 2, 0, 0
    t = tiers.Tiered(_prog(n=12))
    args = _args()
    ref = [np.asarray(o) for o in compile_cache.compiled(t.prog)(*args)]
    results: list = []
    errors: list = []

    def work():
        try:
            for _ in range(200):
                results.append([np.asarray(o) for o in t(*args)])
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert tiers.wait_for_background(60) and t.exe is not None
    assert len(results) == 800
    for r in results:
        for a, b in zip(r, ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_programs_over_the_equation_bound_stay_on_the_host_tier(policy, monkeypatch):
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 2, 0, 0
    prog = _prog(n=6)
    monkeypatch.setattr(policy, "tier_max_compiled_eqns", len(prog.eqns) - 1)
    t = tiers.Tiered(prog)
    for _ in range(4):
        out = t(*_args())
    assert t.submitted and tiers.wait_for_background(60)
    assert t.exe is None and type(out[0]) is np.ndarray  # still the host tier
    monkeypatch.setattr(policy, "tier_max_compiled_eqns", len(prog.eqns))
    t = tiers.Tiered(prog)
    for _ in range(4):
        t(*_args())
    assert tiers.wait_for_background(60) and t.exe is not None


_SLOW_EXIT = """
import os, sys, time
import numpy as np
import funcgrad.numpy as fnp
from funcgrad.core import compile_cache, tiers
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval

def note(word):
    with open(sys.argv[1], "a") as f:
        f.write(word + "\\n")

def slow(prog, eager=False):
    note("started")
    time.sleep(2)  # a compile that outlasts the program
    note("compiled")
    raise RuntimeError("no executable")

compile_cache.compiled = slow
p = compile_cache.POLICY
p.tier = "tiered"
p.tier_compile_after, p.tier_compile_host_ms, p.tier_compile_min_us = 1, 0, 0
a = Aval((4,), np.dtype("float32"))
for k in range(3):  # one compile running, two queued
    t = tiers.Tiered(trace_flat(lambda x, k=k: [fnp.sin(x) + k], [a], "test"))
    t(np.ones(4, np.float32))
while not os.path.exists(sys.argv[1]):  # the first compile is running
    time.sleep(0.01)
print("done", len(tiers._pending))
"""


def test_exit_drops_queued_compiles_and_waits_for_the_running_one(tmp_path):
    # three queued compiles: the process ends after the one running, without the two
    # queued (the old thread pool ran every queued job at exit: a program that queued
    # large ones did not exit for minutes); the running one is waited for (a daemon
    # thread ended inside XLA at finalization aborted the process)
    log = tmp_path / "compiles.txt"
    out = subprocess.run(
        [sys.executable, "-c", _SLOW_EXIT, str(log)], capture_output=True, text=True, timeout=50
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["done", "3"]
    assert log.read_text().split() == ["started", "compiled"]


def _calls_with_durations(policy, monkeypatch, durations_us):
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 4, 0.2, 30
    monkeypatch.setattr(tiers, "time", Clock(durations_us))
    t = tiers.Tiered(_prog())
    for _ in durations_us:
        t(*_args())
    monkeypatch.undo()
    tiers.wait_for_background(60)
    return t


def test_preempted_calls_do_not_make_a_small_program_compile(policy, monkeypatch):
    # 5 us of work a call, one call preempted for 20 ms: the mean (4 ms) would pass
    # tier_compile_min_us and make a program compile that XLA's call floor makes slower;
    # the fastest call measures the work
    t = _calls_with_durations(policy, monkeypatch, [5, 5, 20_000, 5, 5, 5, 5, 5])
    assert not t.submitted and t.exe is None
    # work over the bound on every call compiles, preempted or not
    t = _calls_with_durations(policy, monkeypatch, [40, 20_000, 40, 40, 40])
    assert t.submitted
    # ... once the work, calls times the fastest, reaches tier_compile_host_ms
    t = _calls_with_durations(policy, monkeypatch, [40, 20_000, 40, 40])
    assert not t.submitted


def test_host_mode_never_compiles_in_background(policy):
    policy.tier = "host"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 1, 0, 0
    t = tiers.Tiered(_prog())
    for _ in range(5):
        t(*_args())
    assert not t.submitted and t.exe is None


def test_compiled_mode_never_uses_the_host_tier(policy):
    tiers.reset_stats()
    with tiers.eager_tier("compiled"):
        assert tiers.mode() == "compiled"
        t = tiers.Tiered(_prog())
        out = t(*_args())
        assert t.plan is None and t.exe is not None
        assert not isinstance(out[0], np.ndarray)
        y = fg.grad(lambda x: fnp.sum(fnp.sin(x)))(fnp.ones(3))
    assert tiers.stats()["host_calls"] == 0
    assert tiers.stats()["host_equations"] == 0
    np.testing.assert_allclose(y, np.cos(np.ones(3)), rtol=1e-6)


def test_auto_mode_places_calls_on_an_accelerator(policy, monkeypatch):
    """With an accelerator ``"auto"`` is compiled, or, with
    ``tier_place_by_operands``, tiered with each call placed by its operands
    (tests/test_tiers_placement.py), compiled where JAX has no CPU backend to place host
    work on; on a CPU backend plainly tiered."""
    policy.tier = "auto"
    monkeypatch.setattr(tiers, "_resolved", [])
    monkeypatch.setattr(tiers, "_host_device", [])
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert tiers.mode() == "compiled" and not tiers.BY_PLACEMENT[0]  # (the option's off)
    monkeypatch.setattr(tiers, "_resolved", [])
    policy.tier_place_by_operands = True
    try:
        assert tiers.mode() == "tiered"
        assert tiers.BY_PLACEMENT[0] and tiers.Tiered.__call__ is tiers.Tiered._placed_call
    finally:
        tiers.disable_placement()
    monkeypatch.setattr(tiers, "_resolved", [])

    def no_cpu(backend=None):
        raise RuntimeError(f"Unknown backend {backend}")

    monkeypatch.setattr(jax, "local_devices", no_cpu)
    assert tiers.mode() == "compiled" and not tiers.BY_PLACEMENT[0]
    monkeypatch.setattr(tiers, "_resolved", [])
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    assert tiers.mode() == "tiered" and not tiers.BY_PLACEMENT[0]
    assert tiers.Tiered.__call__ is tiers.Tiered._plain_call


def test_mode_switches_validate_and_nest(policy):
    with pytest.raises(ValueError, match="eager tier mode"), tiers.eager_tier("fast"):
        pass
    with tiers.eager_tier("host"):
        with tiers.eager_tier("compiled"):
            assert tiers.mode() == "compiled"
        assert tiers.mode() == "host"
    fg.config.update("funcgrad_eager_tier", "host")
    assert policy.tier == "host"
    with pytest.raises(ValueError):
        fg.config.update("funcgrad_eager_tier", "gpu")
    fg.config.update("funcgrad_eager_tier", "auto")


def test_eager_results_are_jax_arrays_with_weak_types(policy):
    """Users see one array type: the host tier's values leave as JAX arrays, weakly
    typed where the compiled tier's would be."""
    policy.tier = "tiered"
    x = fnp.ones(3, dtype=fnp.float32)
    y = fnp.sin(x)
    assert isinstance(y, jax.Array) and y.dtype == np.float32
    g = fg.grad(lambda v: fnp.sum(v * 2.0))(x)
    assert isinstance(g, jax.Array) and g.dtype == np.float32
    w = fnp.sin(2.0)  # a weakly typed result stays weak: it takes float32 from x
    assert getattr(w, "weak_type", False)
    assert (w + x).dtype == np.float32


def test_stats_count_tiers(policy):
    policy.tier = "tiered"
    fg.debug.reset_tier_stats()
    fg.grad(lambda v: fnp.sum(fnp.tanh(v) * 3.0))(fnp.ones(4))
    s = fg.debug.tier_stats()
    assert s["mode"] == "tiered"
    assert s["host_calls"] >= 1 and s["host_equations"] >= 3
    for k in ("background_compiles", "background_seconds", "compiled_calls"):
        assert k in s
