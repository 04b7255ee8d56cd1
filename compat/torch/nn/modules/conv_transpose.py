"""``nn.ConvTranspose1d/2d/3d``: weights ``(in_channels, out_channels / groups, k...)``,
initialised as PyTorch's, and ``forward(input, output_size=None)``."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.conv import _ConvNd
from compat.torch.nn.modules.utils import _ntuple

__all__ = ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvTransposeNd(_ConvNd):
    """Shared bookkeeping of the transposed convolutions (PyTorch's ``_ConvTransposeNd``)."""

    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise TypeError(f"{type(self).__name__}: padding must be an int or a tuple of ints")
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )
        self.output_padding = _ntuple(output_padding, self._nd)

    def _output_padding(self, input: Any, output_size: Any) -> tuple[int, ...]:
        """The ``output_padding`` that makes the output ``output_size`` (PyTorch's rule:
        the size must lie within one stride of the smallest possible one)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        size = list(output_size)
        if len(size) == nd + 2 or (len(size) == nd + 1 and input.dim() == nd + 1):
            size = size[-nd:]
        if len(size) != nd:
            raise ValueError(
                f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} "
                f"or {nd + 2} elements (got {len(output_size)})"
            )
        result = []
        for i in range(nd):
            n = input.shape[input.dim() - nd + i]
            k, s, p, d = self.kernel_size[i], self.stride[i], self.padding[i], self.dilation[i]
            smallest = (n - 1) * s - 2 * p + d * (k - 1) + 1
            if not smallest <= size[i] <= smallest + s - 1:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from "
                    f"{[smallest]} to {[smallest + s - 1]} (for an input of "
                    f"{list(input.shape[2:])})"
                )
            result.append(size[i] - smallest)
        return tuple(result)

    def forward(self, input: Any, output_size: Any = None) -> Any:
        fn = getattr(F, f"conv_transpose{self._nd}d")
        out_pad = self._output_padding(input, output_size)
        return fn(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            out_pad,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over ``(N, C_in, L)`` or ``(C_in, L)`` input."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.ConvTranspose2d(4, 2, 3, stride=2)(torch.ones(1, 4, 5, 5)).shape
        torch.Size([1, 2, 11, 11])
    """

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` input."""

    _nd = 3
