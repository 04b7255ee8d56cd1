"""The tier policy's cost model (funcgrad.core.tiers): XLA's call floor grows with a
program's arguments, its compile time with its equations, and an executable whose first
calls are slower than the host tier's fastest is dropped (results unchanged)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from tiers_testutil import Clock

from funcgrad.core import tiers
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval


def _prog(n_in: int = 2, n_eqns: int = 4, size: int = 8):
    def f(*xs):
        x = xs[0]
        for i in range(n_eqns):
            x = x * xs[i % n_in]
        return [x]

    a = Aval((size,), np.dtype("float32"))
    return trace_flat(f, [a] * n_in, "test")


def _args(n_in: int = 2, size: int = 8):
    rng = np.random.default_rng(0)
    return [rng.uniform(0.5, 1.5, size).astype(np.float32) for _ in range(n_in)]


def _submitted(policy, monkeypatch, prog, n_in, us, calls=8):
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 4, 0.2, 30
    monkeypatch.setattr(tiers, "time", Clock(us))
    t = tiers.Tiered(prog)
    for _ in range(calls):
        t(*_args(n_in))
    monkeypatch.undo()
    tiers.wait_for_background(60)
    return t.submitted


def test_the_call_floor_grows_with_arguments_and_results(policy, monkeypatch):
    # 2 inputs and 1 output: the floor is tier_compile_min_us (30 us)
    assert _submitted(policy, monkeypatch, _prog(2), 2, us=40)
    # 15 inputs and 1 output: 30 us x 16 / 4 = 120 us a call
    assert not _submitted(policy, monkeypatch, _prog(15, 15), 15, us=100)
    assert _submitted(policy, monkeypatch, _prog(15, 15), 15, us=130)


def test_the_work_to_repay_a_compile_grows_with_equations(policy, monkeypatch):
    # 64 equations: tier_compile_host_ms (0.2 ms) x 64 / 16 = 0.8 ms of work in all
    prog = _prog(2, 64)
    assert not _submitted(policy, monkeypatch, prog, 2, us=60, calls=8)  # 0.48 ms
    assert _submitted(policy, monkeypatch, prog, 2, us=60, calls=14)  # 0.84 ms


def _compiled(policy, min_us):
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = (
        2,
        0,
        min_us,
    )
    t = tiers.Tiered(_prog())
    args = _args()
    host = [np.asarray(o) for o in t(*args)]
    t(*args)
    assert t.submitted and tiers.wait_for_background(60) and t.exe is not None
    return t, args, host


@pytest.mark.parametrize(
    ("host_ns", "min_us", "kept"),
    [(1, 1e-9, False), (1 << 50, 1e-9, True), (1, 0, True)],
    ids=["slower-dropped", "faster-kept", "zero-floor-kept"],
)
def test_an_executable_slower_than_the_host_tier_is_dropped(policy, host_ns, min_us, kept):
    t, args, host = _compiled(policy, min_us)
    policy.tier_drop_min_ms = 0.0  # (any slowdown counts: the floor is tested on its own)
    t.min_ns = host_ns  # the host tier's fastest call, as measured
    before = tiers.stats()["background_kept_host"]
    for _ in range(policy.tier_probe_calls):
        out = t(*args)
        assert not isinstance(out[0], np.ndarray)  # the executable's, while probed
        np.testing.assert_allclose(np.asarray(out[0]), host[0], rtol=1e-6)
    assert (t.exe is not None) is kept
    assert tiers.stats()["background_kept_host"] == before + (not kept)
    out = t(*args)  # after the probe: the host tier again, or the executable
    assert (type(out[0]) is np.ndarray) is (not kept)
    np.testing.assert_allclose(np.asarray(out[0]), host[0], rtol=1e-6)
    assert not t.probes


@pytest.mark.parametrize("follow", [True, False])
def test_a_small_program_fed_by_compiled_programs_compiles_too(policy, monkeypatch, follow):
    """5 us a call is under the call floor: on host values it stays on the host tier; fed
    arrays a compiled program computed it follows them (each host call would wait for
    and copy its inputs), unless ``tier_follow_compiled`` is off. Results are the same."""
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 4, 0, 30
    policy.tier_follow_compiled = follow
    monkeypatch.setattr(tiers, "_spare", [True])  # (a second core: see the next test)
    prog = _prog(2)
    on_host, fed = tiers.Tiered(prog), tiers.Tiered(prog)
    host_args = _args(2)
    device_args = [jnp.asarray(a) for a in host_args]
    expected = [np.asarray(o) for o in on_host(*host_args)]
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(5))
        for _ in range(16):
            on_host(*host_args)
            fed(*device_args)
    assert not on_host.submitted
    assert fed.submitted is follow
    tiers.wait_for_background(60)
    assert (fed.exe is not None) is follow
    for _ in range(8):  # through the probe and after it: the same values
        np.testing.assert_allclose(np.asarray(fed(*device_args)[0]), expected[0], rtol=1e-6)
    assert fed.exe is not None or not follow  # 5 us on the host: kept under the drop floor


def test_funcgrad_eager_programs_do_not_follow_their_jax_inputs(policy, monkeypatch):
    """``tiers.run`` (funcgrad's un-jitted transforms) takes its users' JAX arrays
    whatever computed them: there the inputs' kind says nothing, and a small program
    stays on the host tier."""
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 4, 0, 30
    policy.tier_follow_compiled = True
    prog = _prog(3, 7)
    device_args = [jnp.asarray(a) for a in _args(3)]
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(5))
        outs = [tiers.run(prog, *device_args) for _ in range(16)]
    assert not tiers.tiered(prog).submitted
    np.testing.assert_allclose(np.asarray(outs[-1][0]), np.asarray(outs[0][0]))


@pytest.mark.parametrize(("procs", "spare"), [("1", True), ("2", False), ("x", True)])
def test_without_a_spare_core_programs_neither_follow_nor_keep_slower_executables(
    policy, monkeypatch, procs, spare
):
    """Two cores shared by ``LOCAL_WORLD_SIZE`` processes (a launcher's DDP job): with
    one core a process, a compiled call cannot run beside the caller, so neither rule
    that rests on it applies (a malformed variable counts as one process)."""
    monkeypatch.setattr(tiers.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", procs)
    monkeypatch.setattr(tiers, "_spare", [])
    assert tiers.spare_core() is spare
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 4, 0, 30
    policy.tier_follow_compiled, policy.tier_drop_min_ms = True, 1.0
    fed = tiers.Tiered(_prog(2, 5))
    device_args = [jnp.asarray(a) for a in _args(2)]
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(5))
        for _ in range(16):
            fed(*device_args)
    assert fed.submitted is spare
    # an executable 0.1 ms slower alone than the host tier: kept only with a spare core
    t, args, _ = _compiled(policy, 1e-9)
    t.min_ns = 1
    for _ in range(policy.tier_probe_calls):
        t(*args)
    assert (t.exe is not None) is spare
