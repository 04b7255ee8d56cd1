"""``dropout1d``/``dropout3d(inplace=True)`` of an unbatched input, against real PyTorch
2.13: PyTorch drops channels of the input through an unsqueezed view, so the input is
overwritten and the result is a squeezed view of it; a seed drops the same channels."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch


@pytest.mark.parametrize(("name", "shape"), [("dropout1d", (6, 5)), ("dropout3d", (5, 2, 3, 2))])
def test_unbatched_inplace_channel_dropout_as_pytorch(real_torch, name, shape):
    def run(lib):
        leaf = lib.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=True)
        x = leaf * 1.0
        lib.manual_seed(4)
        out = getattr(lib.nn.functional, name)(x, 0.5, True, True)
        (out * lib.arange(out.numel()).reshape(shape)).sum().backward()
        plain = lib.ones(shape)
        lib.manual_seed(4)
        getattr(lib.nn.functional, name)(plain, 0.4, inplace=True)
        return npv(out), npv(x), npv(leaf.grad), tuple(out.shape), npv(plain)

    mine, theirs = run(torch), run(real_torch)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    out, x = mine[0], mine[1]
    np.testing.assert_array_equal(out, x)  # written into the input
    assert 0 < (out.reshape(shape[0], -1) == 0).all(axis=1).sum() < shape[0]
