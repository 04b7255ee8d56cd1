"""``torch._VF``: PyTorch's module of the raw ``torch`` functions, some of which
``torch/functional.py`` hides from the ``torch`` namespace (``unique_dim``). Other
names resolve to ``compat.torch``'s function of that name."""

from __future__ import annotations

from typing import Any

import compat.torch as _torch
from compat._core.ops.sorting import unique_dim

__all__ = ["unique_dim"]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_torch, name)
    except AttributeError:
        raise AttributeError(f"module 'torch._VF' has no attribute {name!r}") from None
