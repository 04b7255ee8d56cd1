"""``nn.functional.conv_transpose1d/2d/3d``: the gradient of a convolution with respect to
its input, written as one convolution of the stride-dilated input with the flipped kernel
(one ``ConvolutionBackward0`` node), with PyTorch's argument checks."""

from __future__ import annotations

from typing import Any

import funcgrad.lax as flax
import funcgrad.numpy as fnp
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _type_name
from compat.torch.nn.functional.conv import (
    _conv_arg,
    apply_conv,
    check_groups_stride_dilation,
    check_ranks,
    check_tensor_args,
)


def _conv_t_f(
    x: Any,
    w: Any,
    *b: Any,
    stride: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    dilation: tuple[int, ...],
    groups: int,
    unbatched: bool,
) -> Any:
    nd = len(stride)
    if unbatched:
        x = fnp.expand_dims(x, 0)
    c_in, c_out_g = w.shape[0], w.shape[1]
    k = tuple(w.shape[2:])
    # (C_in, C_out/g, k...) -> (C_out, C_in/g, k...), spatially flipped
    wg = fnp.reshape(w, (groups, c_in // groups, c_out_g) + k)
    wg = fnp.swapaxes(wg, 1, 2)
    wg = fnp.reshape(wg, (groups * c_out_g, c_in // groups) + k)
    wg = fnp.flip(wg, axis=tuple(range(2, 2 + nd)))
    y = flax.conv_general_dilated(
        x,
        wg,
        (1,) * nd,
        padding,
        lhs_dilation=stride,
        rhs_dilation=dilation,
        feature_group_count=groups,
    )
    if b:
        y = y + fnp.reshape(b[0], (1, -1) + (1,) * nd)
    return fnp.squeeze(y, 0) if unbatched else y


def _conv_transpose(
    nd: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
) -> Tensor:
    name = f"conv_transpose{nd}d"
    check_tensor_args(name, input, weight, bias)
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    unbatched, in_shape = check_ranks(name, nd, input, weight)
    w_shape = list(weight.shape)
    stride = _conv_arg("stride", stride, nd)
    pad = _conv_arg("padding", padding, nd)
    out_pad = _conv_arg("output_padding", output_padding, nd)
    dilation = _conv_arg("dilation", dilation, nd)
    groups = check_groups_stride_dilation(name, groups, stride, dilation)
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in out_pad):
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= s and op >= d for op, s, d in zip(out_pad, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding={list(out_pad)} stride={list(stride)} dilation={list(dilation)}"
        )
    if in_shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {w_shape}, expected input{in_shape} to have "
            f"{weight.shape[0]} channels, but got {in_shape[1]} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{w_shape}] instead"
        )
    c_out = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != c_out):
        raise RuntimeError(
            f"Given transposed=1, weight of size {w_shape}, expected bias to be 1-dimensional "
            f"with {c_out} elements, but got bias of size {list(bias.shape)} instead"
        )
    kernel = tuple(weight.shape[2:])
    out = [
        (n - 1) * s - 2 * p + d * (k - 1) + op + 1
        for n, s, p, d, k, op in zip(in_shape[2:], stride, pad, dilation, kernel, out_pad)
    ]
    if any(o <= 0 for o in out):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, in_shape[2:]))}). "
            f"Calculated output size per channel: ({' x '.join(map(str, out))}). "
            "Output size is too small"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"Input type (torch.{_type_name(input)}Tensor) and weight type "
            f"(torch.{_type_name(weight)}Tensor) should be the same"
        )
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({_type_name(input)}) and bias type ({_type_name(bias)}) should be "
            "the same"
        )
    if not input.is_floating_point():
        raise NotImplementedError(
            f"\"slow_conv_transpose{nd}d_cpu\" not implemented for '{_type_name(input)}'"
        )
    pads = tuple(
        (d * (k - 1) - p, d * (k - 1) - p + op)
        for d, k, p, op in zip(dilation, kernel, pad, out_pad)
    )
    return apply_conv(_conv_t_f, input, weight, bias, stride, pads, dilation, groups, unbatched)


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] = 0,
    output_padding: int | tuple[int] = 0,
    groups: int = 1,
    dilation: int | tuple[int] = 1,
) -> Tensor:
    """1-D transposed convolution of ``(N, C_in, L)`` or ``(C_in, L)`` input with a
    ``(C_in, C_out / groups, k)`` weight; output length
    ``(L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``."""
    return _conv_transpose(
        1, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    output_padding: int | tuple[int, int] = 0,
    groups: int = 1,
    dilation: int | tuple[int, int] = 1,
) -> Tensor:
    """2-D transposed convolution ("deconvolution") of ``(N, C_in, H, W)`` or ``(C_in, H, W)``
    input with a ``(C_in, C_out / groups, kH, kW)`` weight.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> F.conv_transpose2d(torch.ones(1, 2, 4, 4), torch.ones(2, 3, 3, 3), stride=2).shape
        torch.Size([1, 3, 9, 9])
    """
    return _conv_transpose(
        2, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: int | tuple[int, int, int] = 0,
    output_padding: int | tuple[int, int, int] = 0,
    groups: int = 1,
    dilation: int | tuple[int, int, int] = 1,
) -> Tensor:
    """3-D transposed convolution of ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` input with
    a ``(C_in, C_out / groups, kD, kH, kW)`` weight."""
    return _conv_transpose(
        3, input, weight, bias, stride, padding, output_padding, groups, dilation
    )
