"""Pooling layers as in ``torch/nn/modules/pooling.py``: ``MaxPool1d/2d``, ``AvgPool1d/2d``
and the adaptive average and max pools, thin wrappers over ``nn.functional``."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module
from compat.torch.nn.modules.utils import _single

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
]


class _MaxPoolNd(Module):
    """Shared arguments of the max-pooling layers (PyTorch's ``_MaxPoolNd``)."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Any) -> Any:
        # ``_pool``: the subclass's functional form (``F.max_pool1d``/``2d``/``3d``)
        return self._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of ``(N, C, L)`` or ``(C, L)`` input (padding is ``-inf``).

    The gradient of a window goes to its first maximum, as in PyTorch.
    """

    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.MaxPool2d(2)(torch.ones(1, 3, 8, 8)).shape
        torch.Size([1, 3, 4, 4])
    """

    _pool = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""

    _pool = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """Average over sliding windows of ``(N, C, L)`` or ``(C, L)`` input."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Any) -> Any:
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Average over sliding windows of ``(N, C, H, W)`` or ``(C, H, W)`` input
    (``count_include_pad`` and ``divisor_override`` as in PyTorch)."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    _pool = staticmethod(F.avg_pool2d)  # AvgPool3d: F.avg_pool3d

    def forward(self, input: Any) -> Any:
        return self._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """Average over sliding windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""

    _pool = staticmethod(F.avg_pool3d)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size (``None`` in ``output_size`` keeps the input's)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Any) -> Any:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average pooling of ``(N, C, L)`` or ``(C, L)`` to length ``output_size``."""

    def forward(self, input: Any) -> Any:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` to ``output_size``."""

    def forward(self, input: Any) -> Any:
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    _fn = "adaptive_max_pool2d"

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, L)`` or ``(C, L)`` to length ``output_size``."""

    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, H, W)`` or ``(C, H, W)`` to ``output_size``."""

    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` to ``output_size``."""

    _fn = "adaptive_max_pool3d"
