"""``F.channel_shuffle`` and ``nn.ChannelShuffle`` against PyTorch 2.13 (the ``real_torch``
fixture): values, gradients and ``repr`` on 3- to 5-d inputs (an empty batch too), and
the errors' messages."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch


@pytest.mark.parametrize(
    "shape,groups", [((2, 6, 3), 3), ((1, 8, 2, 2), 2), ((0, 9, 4, 4), 3), ((2, 4, 1, 1, 1), 4)]
)
def test_channel_shuffle(real_torch, shape: tuple, groups: int) -> None:
    x = np.random.default_rng(1).standard_normal(shape)
    results = []
    for lib in (ctorch, real_torch):
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.channel_shuffle(t, groups)
        module_out = lib.nn.ChannelShuffle(groups)(t)
        g = lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape))
        out.backward(g)
        results.append((out.detach().numpy(), module_out.detach().numpy(), t.grad.numpy()))
        assert repr(lib.nn.ChannelShuffle(groups)) == f"ChannelShuffle(groups={groups})"
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize(
    "shape,groups", [((2, 4), 2), ((2, 4, 3), 0), ((2, 3, 3), 2), ((2, 4, 3), -1)]
)
def test_channel_shuffle_errors(real_torch, shape: tuple, groups: int) -> None:
    msgs = []
    for lib in (ctorch, real_torch):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.channel_shuffle(lib.ones(shape), groups)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
