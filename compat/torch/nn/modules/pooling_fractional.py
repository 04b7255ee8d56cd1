"""``nn.FractionalMaxPool2d``/``3d``: ``nn.functional.fractional_max_pool2d``/``3d`` with
the window size and output size (or ratio) fixed, PyTorch's checks."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module
from compat.torch.nn.modules.utils import _pair, _triple

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class _FractionalMaxPoolNd(Module):
    _nd = 2
    _expand = staticmethod(_pair)
    _pool = staticmethod(F.fractional_max_pool2d)

    def __init__(
        self,
        kernel_size: Any,
        output_size: Any = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Any = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = self._expand(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = self._expand(output_size) if output_size is not None else None
        self.output_ratio = self._expand(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Any) -> Any:
        return self._pool(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling over pseudo-random windows of ``kernel_size``, to
    ``output_size`` or ``output_ratio`` of the input (new windows each call unless
    ``_random_samples`` is given)."""


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling over pseudo-random windows of ``kernel_size``."""

    _nd = 3
    _expand = staticmethod(_triple)
    _pool = staticmethod(F.fractional_max_pool3d)
