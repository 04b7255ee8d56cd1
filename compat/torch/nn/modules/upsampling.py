"""``nn.Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``, ``PixelShuffle``,
``PixelUnshuffle`` and ``ChannelShuffle`` (``torch/nn/modules/upsampling.py``,
``pixelshuffle.py`` and ``channelshuffle.py``)."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module

__all__ = [
    "ChannelShuffle",
    "PixelShuffle",
    "PixelUnshuffle",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
]


class Upsample(Module):
    """``F.interpolate`` with stored ``size``/``scale_factor``/``mode``/``align_corners``.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.Upsample(scale_factor=2, mode="bilinear")(torch.ones(1, 1, 2, 3)).shape
        torch.Size([1, 1, 4, 6])
    """

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Any) -> Any:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)`` input."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` input with ``align_corners=True``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """``(*, C r², H, W)`` to ``(*, C, H r, W r)``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Any) -> Any:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H r, W r)`` to ``(*, C r², H, W)``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Any) -> Any:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the ``groups`` channel groups of ``(N, C, *)`` (``F.channel_shuffle``)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Any) -> Any:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
