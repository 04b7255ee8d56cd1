"""``nn.Conv1d`` and ``nn.Conv2d``, initialised as ``torch/nn/modules/conv.py`` does."""

from __future__ import annotations

import math
from typing import Any

import compat.torch as torch
from compat.torch.nn import functional as F
from compat.torch.nn import init
from compat.torch.nn.modules.module import Module
from compat.torch.nn.modules.utils import _ntuple
from compat.torch.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """Shared bookkeeping of the convolution layers (PyTorch's ``_ConvNd``)."""

    _nd = 0

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, ...],
        stride: int | tuple[int, ...] = 1,
        padding: str | int | tuple[int, ...] = 0,
        dilation: int | tuple[int, ...] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        nd = self._nd
        kernel_size = _ntuple(kernel_size, nd)
        stride = _ntuple(stride, nd)
        padding = padding if isinstance(padding, str) else _ntuple(padding, nd)
        dilation = _ntuple(dilation, nd)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            valid = {"same", "valid"}
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"Conv{nd}d(padding_mode='{padding_mode}') is not supported by compat yet: "
                "only padding_mode='zeros'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0,) * nd
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_empty(shape, dtype))
        if bias:
            self.bias = Parameter(_empty((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw ``weight`` with ``kaiming_uniform_(a=sqrt(5))`` and ``bias`` uniform on
        ``±1/sqrt(fan_in)``, as PyTorch does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def _conv_forward(self, input: Any, weight: Any, bias: Any) -> Any:
        raise NotImplementedError

    def forward(self, input: Any) -> Any:
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C_in, L)`` (or ``(C_in, L)``) input.

    ``weight`` is ``(out_channels, in_channels / groups, kernel_size)``; ``padding`` is
    an int, a 1-tuple, ``'valid'`` or ``'same'``; only ``padding_mode='zeros'``.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.Conv1d(2, 4, 3, padding="same")(torch.ones(5, 2, 8)).shape
        torch.Size([5, 4, 8])
    """

    _nd = 1

    def _conv_forward(self, input: Any, weight: Any, bias: Any) -> Any:
        return F.conv1d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C_in, H, W)`` (or ``(C_in, H, W)``) input.

    ``weight`` is ``(out_channels, in_channels / groups, kH, kW)``; ``padding`` is an
    int, a pair, ``'valid'`` or ``'same'``; only ``padding_mode='zeros'``.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)(torch.ones(1, 3, 8, 8)).shape
        torch.Size([1, 8, 4, 4])
    """

    _nd = 2

    def _conv_forward(self, input: Any, weight: Any, bias: Any) -> Any:
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


def _empty(shape: tuple[int, ...], dtype: Any) -> Any:
    if dtype is None:
        return torch.empty(shape)
    return torch.empty(shape, dtype=dtype)
