"""``nn.functional.conv1d``/``conv2d``: one ``ConvolutionBackward0`` node each, PyTorch's checks."""

from __future__ import annotations

import operator
from typing import Any

import compat.torch as torch
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor, _int_list
from compat.torch.nn.functional._dtype_names import _SCALAR_NAME, _type_name


def _conv_f(
    x: Any,
    w: Any,
    *b: Any,
    stride: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    dilation: tuple[int, ...],
    groups: int,
    unbatched: bool,
) -> Any:

    if unbatched:
        x = fnp.expand_dims(x, 0)
    y = flax.conv_general_dilated(
        x, w, stride, padding, rhs_dilation=dilation, feature_group_count=groups
    )
    if b:
        y = y + fnp.reshape(b[0], (1, -1) + (1,) * len(stride))
    return fnp.squeeze(y, 0) if unbatched else y


def _conv_arg(name: str, value: Any, nd: int) -> tuple[int, ...]:
    """An int or a sequence of 1 or ``nd`` ints, expanded to ``nd`` (PyTorch's ``expand_param``)."""
    values = _int_list(value, nd)
    if values is None:
        raise TypeError(f"conv{nd}d(): argument '{name}' must be tuple of ints, not {value!r}")
    if len(values) != nd:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} values to match "
            f"the convolution dimensions, but got {name}={values}"
        )
    return tuple(values)


def check_tensor_args(name: str, input: Any, weight: Any, bias: Any) -> None:
    """A convolution's ``input`` and ``weight`` are Tensors, ``bias`` a Tensor or None
    (PyTorch's argument-parser ``TypeError``)."""
    for arg, value in (("input", input), ("weight", weight), ("bias", bias)):
        if not isinstance(value, torch.Tensor) and not (arg == "bias" and value is None):
            raise TypeError(
                f"{name}(): argument '{arg}' must be Tensor, not {type(value).__name__}"
            )


def check_ranks(name: str, nd: int, input: Tensor, weight: Tensor) -> tuple[bool, list[int]]:
    """An ``nd``-d convolution's input is ``nd + 1``-d (unbatched) or ``nd + 2``-d and its
    weight ``nd + 2``-d; returns whether the input is unbatched and its batched shape."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    unbatched = input.dim() == nd + 1
    in_shape = [1, *input.shape] if unbatched else list(input.shape)
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input {in_shape}, "
            f"but got {weight.dim()}-dimensional weight of size {list(weight.shape)} instead"
        )
    return unbatched, in_shape


def check_groups_stride_dilation(
    name: str, groups: Any, stride: tuple[int, ...], dilation: tuple[int, ...]
) -> int:
    """``groups`` is an int (returned as one), and it, the strides and the dilations are
    positive, in PyTorch's words."""
    if isinstance(groups, bool) or not hasattr(groups, "__index__"):
        raise TypeError(f"{name}(): argument 'groups' must be int, not {type(groups).__name__}")
    groups = operator.index(groups)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    return groups


def apply_conv(
    f: Any,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    dilation: tuple[int, ...],
    groups: int,
    unbatched: bool,
) -> Tensor:
    """One ``ConvolutionBackward0`` op computing ``f`` (a plain or transposed convolution on
    checked arguments: explicit ``(low, high)`` paddings, ``groups``, unbatched or not)."""
    args = (input, weight) if bias is None else (input, weight, bias)
    static = (
        ("stride", stride),
        ("padding", pads),
        ("dilation", dilation),
        ("groups", groups),
        ("unbatched", unbatched),
    )
    return apply(f, "ConvolutionBackward0", args, static)


def _conv(
    nd: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    """``torch.nn.functional.conv{nd}d``: argument checks in PyTorch's words, then one op."""

    name = f"conv{nd}d"
    check_tensor_args(name, input, weight, bias)
    unbatched, in_shape = check_ranks(name, nd, input, weight)
    stride = _conv_arg("stride", stride, nd)
    dilation = _conv_arg("dilation", dilation, nd)
    groups = check_groups_stride_dilation(name, groups, stride, dilation)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # PyTorch puts the odd element of the total padding at the end
            totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pads = tuple((t // 2, t - t // 2) for t in totals)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        sym = _conv_arg("padding", padding, nd)
        if any(p < 0 for p in sym):
            raise RuntimeError("negative padding is not supported")
        pads = tuple((p, p) for p in sym)
    w_shape = list(weight.shape)
    if in_shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {w_shape}, expected input{in_shape} to have "
            f"{weight.shape[1] * groups} channels, but got {in_shape[1]} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{w_shape}] instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(
            f"Given weight of size {w_shape}, expected bias to be 1-dimensional with "
            f"{weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead"
        )
    padded = [n + lo + hi for n, (lo, hi) in zip(in_shape[2:], pads)]
    window = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    if any(k > n for k, n in zip(window, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, window))}). Kernel size can't be greater than "
            "actual input size"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"Input type (torch.{_type_name(input)}Tensor) and weight type "
            f"(torch.{_type_name(weight)}Tensor) should be the same"
        )
    if bias is not None and bias.dtype != input.dtype:
        a, b = _type_name(input), _type_name(bias)
        raise RuntimeError(
            f"Input type ({_SCALAR_NAME.get(a, a.lower())}) and bias type "
            f"({_SCALAR_NAME.get(b, b.lower())}) should be the same"
        )
    if input.dtype == torch.bool:
        raise NotImplementedError(f"\"slow_conv{nd}d_cpu\" not implemented for 'Bool'")
    out = apply_conv(_conv_f, input, weight, bias, stride, pads, dilation, groups, unbatched)
    if in_shape[1] == 0:  # PyTorch's result for no input channels: no output channels either
        out = out.narrow(-nd - 1, 0, 0)
    return out


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: str | int | tuple[int] = 0,
    dilation: int | tuple[int] = 1,
    groups: int = 1,
) -> Tensor:
    """1-D convolution (cross-correlation) of ``(N, C_in, L)`` or ``(C_in, L)`` input with a
    ``(C_out, C_in / groups, k)`` weight; ``padding`` is an int, a 1-tuple, ``'valid'`` or
    ``'same'``."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: str | int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution (cross-correlation) of ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input
    with a ``(C_out, C_in / groups, kH, kW)`` weight; ``padding`` is an int, a pair,
    ``'valid'`` or ``'same'``.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> F.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), padding="same").shape
        torch.Size([1, 3, 5, 5])
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: str | int | tuple[int, int, int] = 0,
    dilation: int | tuple[int, int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """3-D convolution (cross-correlation) of ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``
    input with a ``(C_out, C_in / groups, kD, kH, kW)`` weight; ``padding`` is an int, a
    triple, ``'valid'`` or ``'same'``."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-D convolution of a ``(time, batch, in_channels)`` sequence with a
    ``(kernel_width, in_channels, out_channels)`` filter, ``pad`` steps of zeros on both
    ends of time (a negative ``pad`` crops): ``conv1d`` in the (batch, channel, time)
    layout, the result back in ``(time, batch, out_channels)``."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError(
            "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels."
        )
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    pad = operator.index(pad)
    if pad < 0:
        input = input[-pad : input.shape[0] + pad]
    x = input.permute(1, 2, 0)
    y = conv1d(x, weight.permute(2, 1, 0), bias, padding=max(pad, 0))
    return y.permute(2, 0, 1)
