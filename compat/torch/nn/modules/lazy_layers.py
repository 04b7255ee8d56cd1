"""The lazy convolutions and normalisations of ``torch/nn/modules/conv.py``,
``batchnorm.py`` and ``instancenorm.py``: ``LazyConv1d/2d/3d``,
``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d``.

Each is built as its eager class with no channels and placeholder parameters
(``UninitializedParameter``/``UninitializedBuffer``); the first call reads the channel
count from its input (``nn.modules.lazy``), materialises them, runs the eager class's
``reset_parameters`` and turns the module into that class (``LazyConv2d`` becomes
``Conv2d``), as :class:`LazyLinear` does.

Example:
    >>> import warnings
    >>> import compat.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     conv = torch.nn.LazyConv2d(4, 3)
    >>> _ = conv(torch.ones(1, 2, 5, 5))
    >>> type(conv).__name__, tuple(conv.weight.shape)
    ('Conv2d', (4, 2, 3, 3))
"""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from compat.torch.nn.modules.conv import Conv1d, Conv2d, Conv3d
from compat.torch.nn.modules.conv_transpose import (
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from compat.torch.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from compat.torch.nn.modules.lazy import LazyModuleMixin
from compat.torch.nn.parameter import UninitializedBuffer, UninitializedParameter

__all__ = [
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _LazyConvXdMixin(LazyModuleMixin):
    """``in_channels`` from the first input's channel dimension (dimension 1 when batched,
    0 when not); the weight's shape follows the eager class's layout."""

    def reset_parameters(self) -> None:
        """The eager class's initialisation, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any, *args: Any, **kwargs: Any) -> None:
        """Materialise ``weight`` and ``bias`` from ``input``'s channel count."""
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        per_group = (
            (self.in_channels, self.out_channels // self.groups)
            if self.transposed
            else (self.out_channels, self.in_channels // self.groups)
        )
        with torch.no_grad():
            self.weight.materialize((*per_group, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input: Any) -> int:
        plain = self._nd + 1
        if input.dim() not in (plain, plain + 1):
            raise RuntimeError(
                f"Expected {plain}D (unbatched) or {plain + 1}D (batched) input to "
                f"{type(self).__name__}, but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == plain + 1 else input.shape[0]

    def _lazy_parameters(self, bias: bool, dtype: Any) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)


class _LazyConv(_LazyConvXdMixin):
    """The lazy convolutions' constructor: the eager one's arguments less ``in_channels``."""

    def __init__(
        self,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype
        )
        self._lazy_parameters(bias, dtype)
        self.out_channels = out_channels


class _LazyConvTranspose(_LazyConvXdMixin):
    """The lazy transposed convolutions' constructor (``ConvTransposeNd``'s argument order,
    less ``in_channels``)."""

    def __init__(
        self,
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
        super().__init__(
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
            device,
            dtype,
        )
        self._lazy_parameters(bias, dtype)
        self.out_channels = out_channels


class LazyConv1d(_LazyConv, Conv1d):
    """A :class:`Conv1d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A :class:`Conv2d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A :class:`Conv3d` whose ``in_channels`` comes from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A :class:`ConvTranspose1d` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A :class:`ConvTranspose2d` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A :class:`ConvTranspose3d` whose ``in_channels`` comes from its first input."""

    cls_to_become = ConvTranspose3d


class _LazyNormBase(LazyModuleMixin):
    """``num_features`` from the first input's dimension 1 (as PyTorch's, batched or not);
    the affine parameters and running statistics start as placeholders. The defaults are
    ``affine=True`` and ``track_running_stats=True`` for the instance norms too, as
    PyTorch's lazy instance norms have them."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = torch.tensor(0, dtype=torch.int64)

    def reset_parameters(self) -> None:
        """The eager class's reset, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:
        """Materialise the parameters and running statistics as ``(input.shape[1],)``."""
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with torch.no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                value = getattr(self, name)
                if value is not None:
                    value.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A :class:`BatchNorm1d` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A :class:`BatchNorm2d` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A :class:`BatchNorm3d` whose ``num_features`` comes from its first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An :class:`InstanceNorm1d` whose ``num_features`` comes from its first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """An :class:`InstanceNorm2d` whose ``num_features`` comes from its first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """An :class:`InstanceNorm3d` whose ``num_features`` comes from its first input."""

    cls_to_become = InstanceNorm3d
