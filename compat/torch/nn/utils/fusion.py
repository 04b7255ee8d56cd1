"""``nn.utils.fusion``: fold an eval-mode ``BatchNorm`` into the convolution or linear
layer before it (inference graphs: one layer instead of two).

``BatchNorm`` in eval mode is the affine map ``y = (x - mean) * w / sqrt(var + eps) + b``
per channel, so ``conv`` (or ``linear``) followed by it is one ``conv`` whose weight's
output channels are scaled by ``w / sqrt(var + eps)`` and whose bias is
``(bias - mean) * w / sqrt(var + eps) + b``. The fused weights are new ``Parameter``s that
keep the original weight's and bias's ``requires_grad``.

Example:
    >>> import compat.torch as torch
    >>> conv, bn = torch.nn.Conv2d(2, 3, 1).eval(), torch.nn.BatchNorm2d(3).eval()
    >>> fused = torch.nn.utils.fusion.fuse_conv_bn_eval(conv, bn)
    >>> x = torch.randn(1, 2, 4, 4)
    >>> bool(torch.allclose(fused(x), bn(conv(x)), atol=1e-6))
    True
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import compat.torch as torch
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]

Tensor = Any
M = TypeVar("M", bound=Module)


def _bn_parts(bn_rm: Tensor, bn_w: Tensor | None, bn_b: Tensor | None) -> tuple[Tensor, Tensor]:
    weight = torch.ones_like(bn_rm) if bn_w is None else bn_w
    bias = torch.zeros_like(bn_rm) if bn_b is None else bn_b
    return weight, bias


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of the convolution that is ``conv`` then eval-mode batch norm
    (``transpose``: a transposed convolution, output channels on dimension 1)."""
    weight_dtype = conv_w.dtype
    bias_dtype = weight_dtype if conv_b is None else conv_b.dtype
    if conv_b is None:
        conv_b = torch.zeros_like(bn_rm)
    bn_w, bn_b = _bn_parts(bn_rm, bn_w, bn_b)
    scale = bn_w * torch.rsqrt(bn_rv + bn_eps)
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * scale.reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv: M, bn: Module, transpose: bool = False) -> M:
    """A copy of ``conv`` (eval mode) with ``bn`` (eval mode) folded into its weights."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fusing needs the batch norm's running statistics")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose,
    )  # fmt: skip
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
) -> tuple[Parameter, Parameter]:
    """The weight and bias of the linear layer that is ``linear`` then eval-mode batch
    norm."""
    if linear_b is None:
        linear_b = torch.zeros_like(bn_rm)
    bn_w, bn_b = _bn_parts(bn_rm, bn_w, bn_b)
    scale = bn_w * torch.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear: M, bn: Module) -> M:
    """A copy of ``linear`` (eval mode) with ``bn`` (eval mode, over its outputs) folded
    into its weights."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fusing needs the batch norm's running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused
