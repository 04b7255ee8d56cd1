"""The default device of PyTorch's factories: ``torch.set_default_device``,
``torch.get_default_device`` and ``with torch.device(...)`` (compat raised
``NotImplementedError`` for the block), scenario by scenario against PyTorch 2.13 (a CPU
build, as compat on this machine: ``cuda`` is PyTorch's CPU-build error at the first
factory, ``meta`` shape-only tensors). Each scenario records the device or the error
(type and message) of every step; both libraries must record the same."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import compat.torch as ctorch

#: factories called without ``device=``: they follow the default device
FACTORIES = {
    "ones": lambda t: t.ones(2),
    "zeros": lambda t: t.zeros(2, 3),
    "empty": lambda t: t.empty(2),
    "full": lambda t: t.full((2,), 1.5),
    "tensor": lambda t: t.tensor([1.0, 2.0]),
    "arange": lambda t: t.arange(3),
    "linspace": lambda t: t.linspace(0, 1, 4),
    "eye": lambda t: t.eye(2),
    "randn": lambda t: t.randn(2),
    "rand": lambda t: t.rand(2),
    "randint": lambda t: t.randint(0, 5, (2,)),
    "randperm": lambda t: t.randperm(4),
    "linear": lambda t: t.nn.Linear(2, 3).weight,
}
#: calls that do not: an explicit device, a prototype's device, shared memory
FOLLOWERS = {
    "explicit": lambda t: t.zeros(2, device="cpu"),
    "zeros_like": lambda t: t.zeros_like(t.zeros(2, device="cpu")),
    "new_zeros": lambda t: t.zeros(2, device="cpu").new_zeros(3),
    "op": lambda t: t.zeros(2, device="cpu") + 1,
    "from_numpy": lambda t: t.from_numpy(np.ones(2)),
}


def _run(f):
    try:
        out = f()
    except Exception as e:  # the error is the record
        return (type(e).__name__, str(e))
    return str(out.device) if hasattr(out, "device") else repr(out)


def _scenario(t, default):
    rec = [_run(lambda: t.get_default_device())]
    with t.device(default) as d:
        rec.append(repr(d))
        rec.append(_run(lambda: t.get_default_device()))
        rec += [_run(lambda f=f: f(t)) for f in FACTORIES.values()]
        rec += [_run(lambda f=f: f(t)) for f in FOLLOWERS.values()]
    rec.append(_run(lambda: t.get_default_device()))  # restored
    return rec


@pytest.mark.parametrize("default", ["cpu", "cpu:0", "cuda", "cuda:1"])
def test_device_block_matches_pytorch(real_torch, default):
    assert _scenario(ctorch, default) == _scenario(real_torch, default)


def _settings(t):
    rec = []
    for value in ("cpu", "cpu:1", "cuda", "foo", 3, None):
        rec.append(_run(lambda v=value: t.set_default_device(v)))
        rec.append(_run(lambda: t.get_default_device()))
        rec.append(_run(lambda: t.ones(1)))
    t.set_default_device("cpu:1")
    seen = []
    other = threading.Thread(target=lambda: seen.append(str(t.get_default_device())))
    other.start()
    other.join()
    rec.append(seen)  # another thread keeps the CPU: the default is per thread
    with t.device("cpu"):
        with t.device("cpu:0"):
            pass
        rec.append(_run(lambda: t.get_default_device()))  # the outer block's again
    rec.append(_run(lambda: t.get_default_device()))  # the set one again
    t.set_default_device(None)
    return rec


def test_set_and_get_default_device_match_pytorch(real_torch):
    try:
        assert _settings(ctorch) == _settings(real_torch)
    finally:
        ctorch.set_default_device(None)
        real_torch.set_default_device(None)


def test_meta_default_makes_meta_tensors():
    # as PyTorch: factories and layers in the block make meta tensors (shape-only; the
    # meta device itself is tested in test_compat_meta_device.py), the CPU after it
    with ctorch.device("meta"):
        assert ctorch.get_default_device() == ctorch.device("meta")
        assert ctorch.nn.Linear(2, 3).weight.device == ctorch.device("meta")
    assert ctorch.ones(1).device == ctorch.device("cpu")
