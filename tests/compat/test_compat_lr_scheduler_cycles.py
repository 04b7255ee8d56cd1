"""A scheduler's wrapping of ``optimizer.step`` leaves no reference cycle through the
optimizer, as in PyTorch 2.13: the optimizer is freed by reference counting alone."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _cycles(lib: Any) -> tuple[int, bool, float]:
    param = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([param], lr=0.5)
    sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5**epoch)
    param.sum().backward()
    opt.step()  # through the scheduler's wrapper
    sched.step()
    value = float(param.detach()[0])
    del sched
    referrers = len(gc.get_referrers(opt))
    ref = weakref.ref(opt)
    was = gc.isenabled()
    gc.disable()
    try:
        del opt
        freed = ref() is None  # without the collector: no cycle kept it
    finally:
        if was:
            gc.enable()
    return referrers, freed, value


def test_optimizer_freed_without_the_collector() -> None:
    assert _cycles(ctorch) == _cycles(torch) == (0, True, 0.5)
