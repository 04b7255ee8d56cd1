"""Argument types and parsing shared by ``nn.functional``'s modules."""

from __future__ import annotations

import operator
from typing import Any

Tensor = Any  # compat.torch.Tensor (kept loose so annotations never import the core)


def _int_list(value: Any, nd: int) -> list[int] | None:
    """An int or a sequence of ints as a list, one int repeated to ``nd``; ``None`` when an
    element is not an int (bools included, as PyTorch's int-list arguments reject them)."""
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    if any(isinstance(v, bool) for v in values):
        return None
    try:
        values = [operator.index(v) for v in values]
    except TypeError:
        return None
    return values * nd if len(values) == 1 else values
