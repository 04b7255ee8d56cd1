"""Values to NumPy for the summary writers: compat tensors, NumPy arrays, Python and
NumPy scalars (what PyTorch's ``SummaryWriter`` accepts), and image layouts to HWC."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.tensor import Tensor


def make_np(x: Any) -> np.ndarray:
    """``x`` as a NumPy array: arrays as they are, a scalar as a 1-element array, a
    tensor detached (bfloat16 read as float16, since NumPy has no bfloat16)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        t = x.detach()
        if t.dtype is _dt.bfloat16:
            t = t.to(_dt.float16)
        return np.asarray(t.numpy())
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def _tile_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """A batch ``(N, C, H, W)`` of 1- or 3-channel images laid out row by row on one
    ``(3, rows*H, cols*W)`` canvas (zeros where the last row runs short)."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    canvas = np.zeros((3, rows * h, cols * w), dtype=images.dtype)
    for i in range(n):
        r, c = divmod(i, cols)
        canvas[:, r * h : (r + 1) * h, c * w : (c + 1) * w] = images[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image array in layout ``dataformats`` (``NCHW``, ``CHW``, ``HWC``, ``HW``, any
    letter order) as one ``HWC`` image: a batch becomes a grid, gray becomes RGB."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {dataformats}"
        )
    if array.ndim != len(dataformats):
        raise AssertionError(
            "size of input tensor and input format are different. "
            f"tensor shape: {array.shape}, input_format: {dataformats}"
        )
    fmt = dataformats.upper()
    if len(fmt) == 4:
        grid = _tile_grid(array.transpose([fmt.find(c) for c in "NCHW"]))
        return grid.transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        return np.stack([array.transpose([fmt.find(c) for c in "HW"])] * 3, axis=2)
    raise AssertionError(f"input_format should have 2, 3 or 4 letters, got {dataformats!r}")


def figure_to_chw(figure: Any, close: bool) -> np.ndarray:
    """A matplotlib figure rendered with Agg as a ``uint8`` RGB ``(3, H, W)`` array."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    w, h = figure.canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)
    if close:
        plt.close(figure)
    return np.moveaxis(rgba[:, :, :3], 2, 0)
