"""``"auto"`` on a machine with an accelerator: each call placed by its operands (host
tier for host values and CPU arrays, compiled for accelerator arrays). This machine has
no accelerator, so the tests turn placement on by hand with a stand-in for
``tiers.on_accelerator``; the real predicate is checked on CPU arrays."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import compat.torch as torch
import funcgrad.numpy as fnp
from funcgrad.core import compile_cache, tiers
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval


def _prog():
    def f(x, y):
        return [fnp.tanh(x * y + 0.5), x - y]

    a = Aval((16,), np.dtype("float32"))
    return trace_flat(f, [a, a], "placement")


def _args():
    rng = np.random.default_rng(0)
    return [rng.uniform(-1, 1, 16).astype(np.float32) for _ in range(2)]


@pytest.fixture
def placed(monkeypatch):
    """Placement on, with ``on_accelerator`` answering what ``accel[0]`` says."""
    accel = [False]
    monkeypatch.setattr(tiers, "on_accelerator", lambda args: accel[0])
    monkeypatch.setattr(compile_cache.POLICY, "tier", "auto")
    tiers.enable_placement()
    try:
        yield accel
    finally:
        tiers.disable_placement()


def _expected(args):
    x, y = args
    return [np.tanh(x * y + 0.5), x - y]


def test_host_values_run_on_the_host_tier(placed):
    t = tiers.Tiered(_prog())
    tiers.reset_stats()
    out = t(*_args())
    assert all(type(o) is np.ndarray for o in out)
    assert t.exe is None
    s = tiers.stats()
    assert s["host_calls"] == 1 and s["compiled_calls"] == 0
    for o, e in zip(out, _expected(_args())):
        np.testing.assert_allclose(o, e, rtol=1e-6)


def test_accelerator_operands_are_compiled_at_once(placed):
    placed[0] = True
    t = tiers.Tiered(_prog())
    tiers.reset_stats()
    out = t(*_args())
    assert t.exe is not None and all(isinstance(o, jax.Array) for o in out)
    s = tiers.stats()
    assert s["host_calls"] == 0 and s["compiled_calls"] == 1
    for o, e in zip(out, _expected(_args())):
        np.testing.assert_allclose(np.asarray(o), e, rtol=1e-6)
    # the same program with host values afterwards: its executable, on the CPU device
    placed[0] = False
    out = t(*_args())
    assert all(d.platform == "cpu" for o in out for d in o.devices())


def test_explicit_modes_are_not_placed(placed):
    placed[0] = True
    t = tiers.Tiered(_prog())
    with tiers.eager_tier("host"):
        out = t(*_args())
    assert t.exe is None and all(type(o) is np.ndarray for o in out)


def test_compat_ops_follow_their_tensors(placed):
    """compat's per-op paths (fast path, shape templates) reach the placed call: with
    accelerator operands nothing runs on the host tier, not even a template's plan."""
    placed[0] = True
    tiers.reset_stats()
    # a new length each time (the shape templates' case); lengths and constants no other
    # test uses, so the executables compiled here serve no other test (clearing the
    # caches instead would cost the tests after it their compiles: ~5 s a test)
    for n in range(37, 42):
        x = torch.ones(n, dtype=torch.float64) * 2.75 + 1.25
        np.testing.assert_allclose(x.numpy(), np.full(n, 4.0))
    s = tiers.stats()
    assert s["host_calls"] == 0 and s["template_calls"] == 0 and s["compiled_calls"] > 0


def test_on_accelerator_reads_placement():
    cpu = jax.devices("cpu")[0]
    assert not tiers.on_accelerator((np.ones(2), 1.0, jax.device_put(np.ones(2), cpu)))
