"""Checks of loss targets: class-index targets (range, shape, one-hot masks) and the
size in PyTorch's target-size messages."""

from __future__ import annotations

from typing import Any

import numpy as np

import compat.torch as torch
from compat._core.tensor import known_value
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _to_dtype


def _check_targets(target: Tensor, n_classes: int, ignore_index: int) -> int | None:
    """Raise PyTorch's ``IndexError`` for out-of-range class targets; count the valid ones
    (``None``: the values are not known, inside ``torch.func.vmap``)."""
    values = known_value(target)
    if values is None:
        return None
    if values.size:  # (the common case in two reductions: every target a class, none ignored)
        lo, hi = values.min(), values.max()
        if lo >= 0 and hi < n_classes and not lo <= ignore_index <= hi:
            return int(values.size)
    ignored = values == ignore_index
    bad = ~ignored & ((values < 0) | (values >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(values[bad].flat[0])} is out of bounds.")
    return int(values.size - np.count_nonzero(ignored))


def _class_mask(
    target: Tensor, n_classes: int, class_dim: int, ndim: int, dtype: Any, ignore_index: int
) -> Tensor:
    """One-hot of ``target`` along ``class_dim`` as a float mask (ignored targets: zero rows)."""
    shape = [1] * ndim
    shape[class_dim] = n_classes
    classes = torch.arange(n_classes, device=target.device).reshape(shape)
    hit = target.unsqueeze(class_dim) == classes
    if 0 <= ignore_index < n_classes:  # otherwise an ignored target matches no class anyway
        hit = hit & (classes != ignore_index)
    return _to_dtype(hit, dtype)


def _class_dim(input: Tensor) -> int:
    return 0 if input.dim() == 1 else 1


def _check_class_target_shape(input: Tensor, target: Tensor, class_dim: int) -> None:
    expected = tuple(s for i, s in enumerate(input.shape) if i != class_dim)
    if tuple(target.shape) != expected:
        if input.dim() >= 2 and (target.dim() < 1 or target.shape[0] != input.shape[0]):
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                f"({target.shape[0] if target.dim() else 0})."
            )
        if input.dim() == 2 and target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")


def _check_class_weight(weight: Tensor | None, n_classes: int, prefix: str = "") -> None:
    """PyTorch's error for a class ``weight`` that is not a vector of ``n_classes``."""
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {n_classes} classes or no classes "
            f"but got weight tensor of shape: {list(weight.shape)}"
        )


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"
