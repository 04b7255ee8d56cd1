"""compat's ``nn.grad`` (``F.grad``): ``conv{1,2,3}d_input`` and ``conv{1,2,3}d_weight``
against real PyTorch 2.13's, over strides, paddings, dilations and groups; and a result
that carries a graph when its operands require gradients (its second derivative compared)."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch


def _case(lib, dim, which, stride, padding, dilation, groups):
    lib.manual_seed(0)
    x = lib.randn([2, 4] + [7] * dim, dtype=lib.float64)
    w = lib.randn([8, 4 // groups] + [3] * dim, dtype=lib.float64)
    conv = getattr(lib.nn.functional, f"conv{dim}d")
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    g = lib.randn(conv(x, w, **kw).shape, dtype=lib.float64)
    fn = getattr(lib.nn.grad, f"conv{dim}d_{which}")
    if which == "input":
        return fn(x.shape, w, g, **kw)
    return fn(x, w.shape, g, **kw)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("which", ["input", "weight"])
@pytest.mark.parametrize(
    "stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 2), (1, 2, 2, 1), (3, 1, 1, 4)]
)
def test_matches_pytorch(real_torch, dim, which, stride, padding, dilation, groups):
    ours = _case(torch, dim, which, stride, padding, dilation, groups)
    ref = _case(real_torch, dim, which, stride, padding, dilation, groups)
    assert tuple(ours.shape) == tuple(ref.shape) and str(ours.dtype) == str(ref.dtype)
    np.testing.assert_allclose(npv(ours), npv(ref), rtol=1e-10, atol=1e-10)
    assert torch.nn.functional.grad.conv2d_input is torch.nn.grad.conv2d_input


def test_graph_through_weight(real_torch):
    res = []
    for lib in (torch, real_torch):
        lib.manual_seed(1)
        w = lib.randn(3, 2, 3, dtype=lib.float64, requires_grad=True)
        g = lib.randn(1, 3, 4, dtype=lib.float64)
        gi = lib.nn.grad.conv1d_input((1, 2, 6), w, g)
        (gw,) = lib.autograd.grad((gi**2).sum(), w)
        res.append((npv(gi.detach()), npv(gw), gi.requires_grad))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10)
    assert res[0][2] == res[1][2]
