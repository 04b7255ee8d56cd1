"""compat's errors for a lazy module's uninitialised state against real PyTorch 2.13:
loading it into an initialised module raises PyTorch's ``RuntimeError`` (the shape of an
uninitialised parameter), sharing its memory raises PyTorch's, and loading an initialised
state into a lazy module still materialises it."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch

pytestmark = pytest.mark.filterwarnings("ignore:Lazy modules are a new feature")

#: (initialised module, its lazy counterpart), by kind
PAIRS = {
    "Linear": (lambda nn: nn.Linear(10, 4), lambda nn: nn.LazyLinear(4)),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(10), lambda nn: nn.LazyBatchNorm1d()),
    "Conv2d": (lambda nn: nn.Conv2d(10, 4, 3), lambda nn: nn.LazyConv2d(4, 3)),
}


@pytest.mark.parametrize("kind", ["Linear", "BatchNorm1d", "Conv2d"])
def test_load_lazy_state_into_initialised_module(real_torch, kind):
    msgs = []
    for lib in (torch, real_torch):
        full, lazy = (make(lib.nn) for make in PAIRS[kind])
        with pytest.raises(RuntimeError) as err:
            full.load_state_dict(lazy.state_dict())
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_share_memory_of_lazy_module(real_torch):
    msgs = []
    for lib in (torch, real_torch):
        with pytest.raises(RuntimeError) as err:
            lib.nn.LazyLinear(3).share_memory()
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_lazy_module_loads_initialised_state(real_torch):
    got = []
    for lib in (torch, real_torch):
        lib.manual_seed(0)
        src = lib.nn.BatchNorm1d(5)
        src.running_mean.fill_(0.5)
        lazy = lib.nn.LazyBatchNorm1d(affine=True, track_running_stats=True)
        lazy.load_state_dict(src.state_dict())
        got.append(
            (lazy.has_uninitialized_params(), tuple(lazy.weight.shape), npv(lazy.running_mean))
        )
    assert got[0][:2] == got[1][:2]
    np.testing.assert_array_equal(got[0][2], got[1][2])
