"""Transforms on PIL images and tensors: the handful the examples use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from PIL import Image


class Compose:
    """Apply transforms in order."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, x: Any) -> Any:
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    """PIL image or HWC uint8 array -> float CHW tensor in [0, 1]."""

    def __call__(self, pic: Any) -> Any:
        arr = np.asarray(pic)
        if arr.ndim == 2:
            arr = arr[:, :, None]
        scale = 255.0 if arr.dtype == np.uint8 else 1.0
        chw = np.ascontiguousarray(arr.transpose(2, 0, 1), dtype=np.float32) / scale
        return torch.from_numpy(chw)


class Normalize:
    """Per-channel ``(x - mean) / std`` on a CHW tensor."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        self.mean = [float(m) for m in mean]
        self.std = [float(s) for s in std]

    def __call__(self, t: Any) -> Any:
        mean = torch.tensor(self.mean, dtype=t.dtype).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=t.dtype).view(-1, 1, 1)
        return (t - mean) / std


class Resize:
    """Resize a PIL image: an int sets the shorter side, a pair sets (h, w)."""

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = size

    def __call__(self, img: Image.Image) -> Image.Image:
        w, h = img.size
        if isinstance(self.size, int):
            if w <= h:
                new = (self.size, max(1, round(h * self.size / w)))
            else:
                new = (max(1, round(w * self.size / h)), self.size)
        else:
            new = (int(self.size[1]), int(self.size[0]))
        return img.resize(new, Image.BILINEAR)


class CenterCrop:
    """Crop the centre of a PIL image."""

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, img: Image.Image) -> Image.Image:
        w, h = img.size
        th, tw = self.size
        left, top = (w - tw) // 2, (h - th) // 2
        return img.crop((left, top, left + tw, top + th))


class Lambda:
    """Apply a user function."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def __call__(self, x: Any) -> Any:
        return self.fn(x)
