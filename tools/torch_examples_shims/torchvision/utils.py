"""``save_image``: a grid of images written as PNG."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image


def save_image(
    tensor: Any, fp: Any, nrow: int = 8, padding: int = 2, normalize: bool = False, **_: Any
) -> None:
    """Write a (B, C, H, W) or (C, H, W) tensor in [0, 1] as one image grid."""
    arr = np.asarray(tensor.detach().cpu().numpy(), dtype=np.float32)
    if arr.ndim == 3:
        arr = arr[None]
    if normalize:
        lo, hi = float(arr.min()), float(arr.max())
        arr = (arr - lo) / max(hi - lo, 1e-5)
    b, c, h, w = arr.shape
    cols = min(nrow, b)
    rows = -(-b // cols)
    grid = np.zeros((c, rows * (h + padding) + padding, cols * (w + padding) + padding), np.float32)
    for i in range(b):
        r, q = divmod(i, cols)
        y, x = padding + r * (h + padding), padding + q * (w + padding)
        grid[:, y : y + h, x : x + w] = arr[i]
    img = (np.clip(grid, 0.0, 1.0) * 255 + 0.5).astype(np.uint8).transpose(1, 2, 0)
    Image.fromarray(img[:, :, 0] if c == 1 else img).save(fp, format="PNG")
