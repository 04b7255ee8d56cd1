"""Under an explicit tier mode a program keeps one tier from call to call, so identical
calls give identical bits: a trial in context (funcgrad.core.tiers, ``Tiered._trial``)
alternates the tiers call by call, and the tiers round differently (XLA's own tanh
approximation; with optimisation on, also its fused multiply-adds), which made a float64 backward run twice differ in
the last bit (PyTorch's gradcheck: "Backward is not reentrant"). The clocks are
stand-ins: the rule is tested, not this machine's speed."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from tiers_testutil import Clock

import funcgrad as fg
import funcgrad.lax as lax
from funcgrad.core import tiers
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval


def _f(x, y, z):
    return [lax.tanh(x) * y + z]


def _args(dtype):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(64).astype(dtype) for _ in range(3)]


def _in_trial(policy, monkeypatch, dtype) -> tiers.Tiered:
    """A Tiered executable compiled in the background and probed slower alone than the
    host tier (stand-in clocks), so that its next calls are a trial in context."""
    policy.tier = "tiered"
    policy.tier_compile_after, policy.tier_compile_host_ms, policy.tier_compile_min_us = 2, 0, 1
    policy.tier_drop_min_ms = 0.0
    a = Aval((64,), np.dtype(dtype))
    t = tiers.Tiered(trace_flat(_f, [a, a, a], "test"))
    args = _args(dtype)
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(100.0))
        for _ in range(2):
            t(*args)
    assert tiers.wait_for_background(60) and t.exe is not None
    with monkeypatch.context() as m:
        m.setattr(tiers, "time", Clock(150.0))
        while t.probes:
            t(*args)
    assert t.trial == 8
    return t


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_trial_alternates_tiers_and_their_bits_differ(policy, monkeypatch, dtype):
    """The premise: in ``"tiered"`` mode a trial's calls alternate, with other bits."""
    with jax.enable_x64(True):
        t = _in_trial(policy, monkeypatch, dtype)
        args = _args(dtype)
        outs = [t(*args)[0] for _ in range(4)]
    assert [type(o) is np.ndarray for o in outs] == [tiers._trial_host(k) for k in range(4)]
    host = next(np.asarray(o) for o in outs if type(o) is np.ndarray)
    compiled = next(np.asarray(o) for o in outs if type(o) is not np.ndarray)
    assert (host != compiled).any()  # (XLA's tanh is not NumPy's)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["compiled", "host"])
def test_an_explicit_mode_holds_a_program_in_trial_on_one_tier(policy, monkeypatch, dtype, mode):
    with jax.enable_x64(True):
        t = _in_trial(policy, monkeypatch, dtype)
        args = _args(dtype)
        before = fg.debug.tier_stats()
        with fg.eager_tier(mode):
            outs = [np.asarray(t(*args)[0]) for _ in range(20)]
        after = fg.debug.tier_stats()
        assert t.trial == 8 and t.trial_k == 0  # the trial waits for the tiered mode
        assert after["host_calls"] == before["host_calls"]
        for o in outs[1:]:
            np.testing.assert_array_equal(o.view(np.uint8), outs[0].view(np.uint8))
        served = [type(t(*args)[0]) is np.ndarray for _ in range(4)]  # tiered again
    assert served == [tiers._trial_host(k) for k in range(4)]
