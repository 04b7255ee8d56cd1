"""An optimizer unpickled from an older PyTorch, whose param groups lack options added
since, gets PyTorch's defaults for them (each optimizer's ``__setstate__``)."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

NAMES = [
    "SGD",
    "Adam",
    "AdamW",
    "Adadelta",
    "Adagrad",
    "Adamax",
    "ASGD",
    "NAdam",
    "RMSprop",
    "Rprop",
]


@pytest.mark.parametrize("name", NAMES)
def test_setstate_fills_missing_group_options_as_pytorch(real_torch, name):
    filled = []
    for lib in (ctorch, real_torch):
        p = lib.nn.Parameter(lib.tensor(np.ones(2, np.float32)))
        opt = getattr(lib.optim, name)([p], lr=0.1)
        state = opt.__getstate__() if hasattr(opt, "__getstate__") else dict(opt.__dict__)
        state = dict(state)
        keep = {"params", "lr"}
        state["param_groups"] = [
            {k: v for k, v in g.items() if k in keep} for g in state["param_groups"]
        ]
        fresh = object.__new__(type(opt))
        fresh.__setstate__(state)
        filled.append(
            {k: v for k, v in fresh.param_groups[0].items() if k not in keep and k != "params"}
        )
    ours, theirs = filled
    assert ours == theirs
