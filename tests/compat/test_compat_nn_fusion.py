"""``nn.utils.fusion`` against PyTorch 2.13 (the ``real_torch`` fixture): conv/linear and
batch-norm fusion in eval mode (the fused weights, bias and outputs), the fused
parameters' ``requires_grad``, and the refusal to fuse a module in training mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch


def _conv_bn(lib: Any, arrays: list, transpose: bool, bias: bool) -> tuple:
    conv_cls = lib.nn.ConvTranspose2d if transpose else lib.nn.Conv2d
    conv = conv_cls(2, 3, 2, bias=bias).double().eval()
    bn = lib.nn.BatchNorm2d(3).double().eval()
    with lib.no_grad():
        conv.weight.copy_(
            lib.tensor(arrays[0] if not transpose else arrays[0].transpose(1, 0, 2, 3))
        )
        if bias:
            conv.bias.copy_(lib.tensor(arrays[1]))
        for name, a in zip(("running_mean", "running_var", "weight", "bias"), arrays[2:]):
            getattr(bn, name).copy_(lib.tensor(a))
    return conv, bn


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn(real_torch, transpose: bool, bias: bool) -> None:
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((3, 2, 2, 2)), rng.standard_normal(3), rng.standard_normal(3),
              rng.uniform(0.5, 2.0, 3), rng.standard_normal(3), rng.standard_normal(3)]  # fmt: skip
    x = rng.standard_normal((2, 2, 5, 5))
    results = []
    for lib in (ctorch, real_torch):
        conv, bn = _conv_bn(lib, arrays, transpose, bias)
        fused = lib.nn.utils.fusion.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        assert type(fused) is type(conv) and fused is not conv
        results.append((fused.weight.detach().numpy(), fused.bias.detach().numpy(),
                        fused(lib.tensor(x)).detach().numpy(), bn(conv(lib.tensor(x))).detach().numpy()))  # fmt: skip
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[0][2], results[0][3], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("w_rg,b_rg", [(True, True), (True, False), (False, True), (False, False)])
def test_fused_weights_keep_requires_grad(real_torch, w_rg: bool, b_rg: bool) -> None:
    for lib in (ctorch, real_torch):
        fusion = lib.nn.utils.fusion
        for layer, bn, fuse in (
            (lib.nn.Conv2d(3, 3, 3), lib.nn.BatchNorm2d(3), fusion.fuse_conv_bn_weights),
            (lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3), fusion.fuse_linear_bn_weights),
        ):
            layer.weight.requires_grad_(w_rg)
            layer.bias.requires_grad_(b_rg)
            w, b = fuse(
                layer.weight,
                layer.bias,
                bn.running_mean,
                bn.running_var,
                bn.eps,
                bn.weight,
                bn.bias,
            )
            assert (w.requires_grad, b.requires_grad) == (w_rg, b_rg)
            assert isinstance(w, lib.nn.Parameter)


def test_fuse_linear_bn(real_torch) -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal(4),
              rng.uniform(0.5, 2.0, 4), rng.standard_normal(4), rng.standard_normal(4)]  # fmt: skip
    x = rng.standard_normal((5, 3))
    results = []
    for lib in (ctorch, real_torch):
        linear = lib.nn.Linear(3, 4).double().eval()
        bn = lib.nn.BatchNorm1d(4).double().eval()
        with lib.no_grad():
            for obj, name, a in zip((linear, linear, bn, bn, bn, bn),
                                    ("weight", "bias", "running_mean", "running_var", "weight", "bias"), arrays):  # fmt: skip
                getattr(obj, name).copy_(lib.tensor(a))
        fused = lib.nn.utils.fusion.fuse_linear_bn_eval(linear, bn)
        results.append(fused(lib.tensor(x)).detach().numpy())
        with pytest.raises(AssertionError):
            lib.nn.utils.fusion.fuse_linear_bn_eval(linear.train(), bn)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-12)
