"""Padding layers (``torch/nn/modules/padding.py``): reflection, replication, zero, constant
and circular padding of the last 1, 2 or 3 dimensions, via ``nn.functional.pad``."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module
from compat.torch.nn.modules.utils import _ntuple

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


class _PadNd(Module):
    """``padding`` is an int (every side) or ``2 * nd`` ints, last dimension first."""

    _nd = 1
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._nd)
        if len(self.padding) != 2 * self._nd:
            raise ValueError(
                f"{type(self).__name__}: padding must be an int or a tuple of "
                f"{2 * self._nd} ints, got {padding!r}"
            )

    def forward(self, input: Any) -> Any:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Any) -> Any:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with ``value``."""

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dimensions with ``value``."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dimensions with ``value``."""

    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dimension with zeros."""

    _nd = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last two dimensions with zeros.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.ZeroPad2d((1, 1, 2, 0))(torch.ones(1, 3, 3)).shape
        torch.Size([1, 5, 5])
    """

    _nd = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last three dimensions with zeros."""

    _nd = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dimension with its reflection (edge not repeated)."""

    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions with their reflection."""

    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last three dimensions with their reflection."""

    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dimension by repeating its edge values."""

    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions by repeating their edge values."""

    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last three dimensions by repeating their edge values."""

    _nd, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dimension periodically (wrap around)."""

    _nd, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Pad the last two dimensions periodically."""

    _nd, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Pad the last three dimensions periodically."""

    _nd, _mode = 3, "circular"
