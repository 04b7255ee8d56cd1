"""A convolution of an input with no channels, as PyTorch 2.13 gives it: no output
channels either (``(N, 0, *out)``, whatever ``out_channels``), and the bias a zero
gradient; compared with real PyTorch."""

from __future__ import annotations

import pytest

import compat.torch as ctorch


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors is a no-op")
@pytest.mark.parametrize(
    "nd,shape,stride", [(1, (2, 0, 5), 2), (1, (2, 0, 5), 1), (2, (2, 0, 5, 5), 1), (1, (0, 5), 1)]
)
def test_no_input_channels(real_torch, nd, shape, stride):
    def run(lib):
        lib.manual_seed(0)
        conv = getattr(lib.nn, f"Conv{nd}d")(0, 3, 2, stride=stride)
        y = conv(lib.zeros(shape))
        y.sum().backward()
        return tuple(y.shape), conv.bias.grad.numpy().tolist(), tuple(conv.weight.grad.shape)

    assert run(ctorch) == run(real_torch)
