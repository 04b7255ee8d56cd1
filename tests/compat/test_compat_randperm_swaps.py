"""``randperm``'s Fisher-Yates swaps computed at once (``rng.front_swaps``) give what the
sequential swaps give, and PyTorch's permutations after the same seed at sizes the
Python loop was slow for. Real PyTorch and a plain loop are the oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch

import compat.torch as ct
from compat._core import rng

real = import_real_torch()


def _loop(j: list[int]) -> list[int]:
    out = list(range(len(j) + 1))
    for i, t in enumerate(j):
        out[i], out[t] = out[t], out[i]
    return out


@st.composite
def targets(draw):
    """``j[i]`` in ``[i, n)``, biased to repeat targets and to ``j[i] == i``."""
    n = draw(st.integers(2, 60))
    mode = draw(st.sampled_from(["any", "self", "few"]))
    j = []
    for i in range(n - 1):
        if mode == "self" and draw(st.booleans()):
            j.append(i)
        elif mode == "few":
            j.append(max(i, n - 1 - draw(st.integers(0, 2))))
        else:
            j.append(draw(st.integers(i, n - 1)))
    return j


@settings(max_examples=200, deadline=None)
@given(targets())
def test_front_swaps_equal_the_sequential_swaps(j):
    got = rng.front_swaps(np.asarray(j, np.int64))
    assert got.dtype == np.int64
    assert got.tolist() == _loop(j)


@pytest.mark.parametrize("n", [2**16 + 3, 2**20])
def test_randperm_large_n_is_pytorchs(n):
    for lib in (real, ct):
        lib.manual_seed(n)
    expect = real.randperm(n).numpy()
    got = ct.randperm(n).numpy()
    np.testing.assert_array_equal(got, expect)
    # the stream goes on where PyTorch's does
    np.testing.assert_array_equal(ct.rand(5).numpy(), real.rand(5).numpy())
