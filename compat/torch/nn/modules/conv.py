"""``nn.Conv1d/2d/3d`` (every ``padding_mode``), initialised as ``torch/nn/modules/conv.py``
does; the transposed layers build on ``_ConvNd`` in ``conv_transpose``."""

from __future__ import annotations

import math
from typing import Any

import compat.torch as torch
from compat.torch.nn import functional as F
from compat.torch.nn import init
from compat.torch.nn.modules.module import Module
from compat.torch.nn.modules.utils import _ntuple
from compat.torch.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """Shared bookkeeping of the convolution layers (PyTorch's ``_ConvNd``)."""

    _nd = 0
    _transposed = False

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
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = self._transposed
        self.output_padding = (0,) * nd
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts (last dimension first) for the non-zeros padding modes
        if isinstance(padding, str):
            pairs = []
            for d, k in zip(dilation, kernel_size):
                total = d * (k - 1) if padding == "same" else 0
                pairs.append((total // 2, total - total // 2))
        else:
            pairs = [(p, p) for p in padding]
        self._reversed_padding_repeated_twice = [a for pair in reversed(pairs) for a in pair]
        if self._transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
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
        fn = getattr(F, f"conv{self._nd}d")
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

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
    an int, a 1-tuple, ``'valid'`` or ``'same'``, applied as ``padding_mode`` says
    (``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``).

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.Conv1d(2, 4, 3, padding="same")(torch.ones(5, 2, 8)).shape
        torch.Size([5, 4, 8])
    """

    _nd = 1


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C_in, H, W)`` (or ``(C_in, H, W)``) input.

    ``weight`` is ``(out_channels, in_channels / groups, kH, kW)``; ``padding`` is an
    int, a pair, ``'valid'`` or ``'same'``; any ``padding_mode``.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)(torch.ones(1, 3, 8, 8)).shape
        torch.Size([1, 8, 4, 4])
    """

    _nd = 2


class Conv3d(_ConvNd):
    """3-D convolution over ``(N, C_in, D, H, W)`` (or ``(C_in, D, H, W)``) input; ``weight``
    is ``(out_channels, in_channels / groups, kD, kH, kW)``."""

    _nd = 3


def _empty(shape: tuple[int, ...], dtype: Any) -> Any:
    if dtype is None:
        return torch.empty(shape)
    return torch.empty(shape, dtype=dtype)
