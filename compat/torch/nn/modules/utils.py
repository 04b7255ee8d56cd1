"""Argument helpers shared by the layers (PyTorch's ``torch.nn.modules.utils``)."""

from __future__ import annotations

from typing import Any


def _ntuple(value: Any, n: int) -> tuple:
    """``value`` as a tuple: a sequence as is, a scalar repeated ``n`` times."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


def _single(value: Any) -> tuple:
    return _ntuple(value, 1)
