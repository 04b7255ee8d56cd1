"""``clamp``/``clip`` with one tensor bound and one number bound: PyTorch 2.13's overloads
take two tensors or two numbers, so every form refuses the mix with a ``TypeError``; one
bound alone or two of a kind still clamp."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

CALLS = {
    "clamp(t, n)": lambda lib, x, t: lib.clamp(x, t, 1.5),
    "clamp(n, t)": lambda lib, x, t: lib.clamp(x, 0.5, t),
    "clip(t, n)": lambda lib, x, t: lib.clip(x, t, 1.5),
    "clamp(min=t, max=n)": lambda lib, x, t: lib.clamp(x, min=t, max=1.5),
    "x.clamp(t, n)": lambda lib, x, t: x.clamp(t, 1.5),
    "x.clamp_(n, t)": lambda lib, x, t: x.clone().clamp_(0.5, t),
    "x.clip_(t, n)": lambda lib, x, t: x.clone().clip_(t, 1.5),
    "clamp(t)": lambda lib, x, t: lib.clamp(x, t),
    "clamp(t, t)": lambda lib, x, t: lib.clamp(x, t, t + 1),
    "clamp(n, n)": lambda lib, x, t: lib.clamp(x, 0.5, 1.5),
}


@pytest.mark.parametrize("call", CALLS)
def test_mixed_bounds_as_pytorch(real_torch, call):
    got = []
    for lib in (ctorch, real_torch):
        x = lib.tensor([0.25, 1.0, 2.0])
        t = lib.tensor([0.5, 0.5, 0.5])
        try:
            got.append(CALLS[call](lib, x, t).tolist())
        except TypeError:
            got.append(TypeError)
    if got[1] is TypeError:
        assert got[0] is TypeError
    else:
        np.testing.assert_allclose(got[0], got[1])
