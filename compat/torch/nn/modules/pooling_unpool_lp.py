"""``nn.MaxUnpool1d/2d/3d`` and ``nn.LPPool1d/2d/3d`` as in ``torch/nn/modules/pooling.py``,
thin wrappers over ``nn.functional``."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module
from compat.torch.nn.modules.utils import _pair, _single, _triple

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _MaxUnpoolNd(Module):
    """Shared arguments of the unpooling layers, expanded to ``nd`` ints as PyTorch's."""

    _expand = staticmethod(_pair)
    _unpool = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = self._expand(kernel_size)
        self.stride = self._expand(stride if stride is not None else kernel_size)
        self.padding = self._expand(padding)

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Any:
        return self._unpool(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Puts the values of a ``MaxPool1d(return_indices=True)`` back at their indices in a
    zero ``(N, C, L_out)`` or ``(C, L_out)`` output (``output_size`` picks ``L_out``)."""

    _expand = staticmethod(_single)
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Puts the values of a ``MaxPool2d(return_indices=True)`` back at their indices in a
    zero ``(N, C, H_out, W_out)`` or ``(C, H_out, W_out)`` output.

    Example:
        >>> import compat.torch as torch
        >>> pool = torch.nn.MaxPool2d(2, return_indices=True)
        >>> y, i = pool(torch.ones(1, 1, 4, 4))
        >>> torch.nn.MaxUnpool2d(2)(y, i).shape
        torch.Size([1, 1, 4, 4])
    """


class MaxUnpool3d(_MaxUnpoolNd):
    """Puts the values of a ``MaxPool3d(return_indices=True)`` back at their indices in a
    zero ``(N, C, D_out, H_out, W_out)`` or ``(C, D_out, H_out, W_out)`` output."""

    _expand = staticmethod(_triple)
    _unpool = staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    """Shared arguments of the power-average pooling layers (kept as given, as PyTorch)."""

    _pool = staticmethod(F.lp_pool2d)

    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Any) -> Any:
        return self._pool(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """``(sum over the window of x ** p) ** (1 / p)`` over ``(N, C, L)`` or ``(C, L)``."""

    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """``(sum over the window of x ** p) ** (1 / p)`` over ``(N, C, H, W)`` or
    ``(C, H, W)``."""


class LPPool3d(_LPPoolNd):
    """``(sum over the window of x ** p) ** (1 / p)`` over ``(N, C, D, H, W)`` or
    ``(C, D, H, W)``."""

    _pool = staticmethod(F.lp_pool3d)
