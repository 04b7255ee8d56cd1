"""``nn.functional.pad``: constant (negative amounts crop), reflect, replicate and circular
padding, one compat op each, with PyTorch's argument checks."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor

_NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _constant_pad_f(x: Any, *, pads: tuple[tuple[int, int], ...], value: Any) -> Any:
    config = [(lo, hi, 0) for lo, hi in pads]
    return flax.pad(x, fnp.asarray(value, dtype=x.dtype), config)


def _mode_pad_f(x: Any, *, pads: tuple[tuple[int, int], ...], mode: str) -> Any:
    # a negative amount crops, as PyTorch's kernels index: reflect and replicate pad by
    # the positive amounts about the original edges, then crop; circular crops, then wraps
    # the cropped tensor
    grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    if grow == pads:
        return fnp.pad(x, pads, mode=_NP_MODE[mode])
    if mode == "circular":
        return fnp.pad(_crop(x, pads), grow, mode="wrap")
    return _crop(fnp.pad(x, grow, mode=_NP_MODE[mode]), pads)


def _crop(x: Any, pads: tuple[tuple[int, int], ...]) -> Any:
    """``x`` less ``-lo``/``-hi`` entries at each end where an amount is negative."""
    return x[tuple(slice(-min(lo, 0), n + min(hi, 0)) for n, (lo, hi) in zip(x.shape, pads))]


def _pairs(pad: tuple[int, ...], ndim: int) -> tuple[tuple[int, int], ...]:
    """PyTorch's ``pad`` list (last dimension first) as per-dimension ``(low, high)``."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return tuple(pairs)


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad ``input``; ``pad`` is ``(left, right)`` for the last dimension, then
    ``(top, bottom)`` for the one before, and so on.

    ``mode='constant'`` fills with ``value`` (0 by default) and pads any number of trailing
    dimensions, cropping where an amount is negative; ``'reflect'``, ``'replicate'`` and
    ``'circular'`` pad the last 1, 2 or 3 dimensions of a batched or unbatched input.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> F.pad(torch.arange(3.0).reshape(1, 3), (2, 1), mode="reflect").tolist()
        [[2.0, 1.0, 0.0, 1.0, 2.0, 1.0]]
    """
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    try:
        amounts = tuple(operator.index(p) for p in pad)
    except TypeError:
        raise TypeError(f"pad(): argument 'pad' must be tuple of ints, not {pad!r}") from None
    ndim = input.dim()
    if len(amounts) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(amounts) // 2 > ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(amounts)} and input of dimension {ndim}"
        )
    pairs = _pairs(amounts, ndim)
    if mode == "constant":
        for d, (lo, hi) in enumerate(pairs):
            if input.shape[d] + lo + hi < 0:
                raise RuntimeError(
                    f"The input size {input.shape[d]}, plus negative padding {lo} and {hi} "
                    "resulted in a negative output size, which is invalid. Check dimension "
                    f"{d} of your input."
                )
        fill = 0 if value is None else value
        if input.dtype == torch.bool:
            fill = bool(fill)
        elif not input.is_floating_point():
            fill = int(fill)
        static = (("pads", pairs), ("value", np.asarray(fill).item()))
        return apply(_constant_pad_f, "ConstantPadNdBackward0", (input,), static)
    if mode not in _NP_MODE:
        raise NotImplementedError(
            f"Unrecognised padding mode {mode}"
            if mode != "zeros"
            else "Unrecognised padding mode zeros"
        )
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(amounts) // 2
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(amounts)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode != "circular":
        spatial = input.shape[1:] if ndim == k + 2 else input.shape
        if 0 in spatial:
            raise RuntimeError(
                f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size "
                f"and other non-zero dimensions for input, but got: {list(input.shape)}"
            )
    for d in range(ndim - k, ndim):
        n, (lo, hi) = input.shape[d], pairs[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                f"{list(input.shape)}"
            )
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        size = n + lo + hi
        if mode == "circular" and size < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if mode != "circular" and k == 1 and size <= 0:
            raise RuntimeError(f"input (W: {n}) is too small. Calculated output W: {size}")
        if size < 0:
            raise RuntimeError(
                f"The input size {n}, plus negative padding {lo} and {hi} resulted in a "
                f"negative output size, which is invalid. Check dimension {d} of your input."
            )
    name = {"reflect": "ReflectionPad", "replicate": "ReplicationPad", "circular": "Pad"}[mode]
    return apply(_mode_pad_f, f"{name}{k}DBackward0", (input,), (("pads", pairs), ("mode", mode)))


_pad = pad  # (constant_pad_nd's argument ``pad`` hides the function)


def constant_pad_nd(input: Tensor, pad: Any, value: float = 0) -> Tensor:
    """``torch.constant_pad_nd``: ``pad(input, pad, "constant", value)`` (negative
    amounts crop)."""
    return _pad(input, pad, "constant", value)
