"""Optimizer edge cases against PyTorch 2.13: LBFGS's first step with a zero gradient
(1 / |g|_1 is inf, the step is ``lr``; compat divided by zero), a tensor ``lr`` refused
with ``foreach=True`` and accepted otherwise by Adam/AdamW."""

from __future__ import annotations

import math
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _lbfgs_zero_gradient(lib: Any, tolerance: float) -> list[Any]:
    params = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.zeros(3))]
    opt = lib.optim.LBFGS(params, 0.01, tolerance_grad=tolerance)
    out = opt.step(lambda: lib.tensor([10.0]))
    return [type(out).__name__, out.tolist(), [p.tolist() for p in params]]


@pytest.mark.parametrize("tolerance", [math.inf, -math.inf, 1e-7])
def test_lbfgs_zero_gradient(tolerance: float) -> None:
    assert _lbfgs_zero_gradient(ctorch, tolerance) == _lbfgs_zero_gradient(torch, tolerance)


def _tensor_lr(lib: Any, cls: str, **kw: Any) -> str:
    p = lib.nn.Parameter(lib.ones(2))
    try:
        getattr(lib.optim, cls)([p], lr=lib.tensor(0.001), **kw)
    except ValueError as e:
        return str(e)
    return "accepted"


@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_tensor_lr(cls: str, foreach: Any) -> None:
    assert _tensor_lr(ctorch, cls, foreach=foreach) == _tensor_lr(torch, cls, foreach=foreach)
