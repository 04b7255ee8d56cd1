"""``torch._VF``: PyTorch's module of the raw ``torch`` functions, some of which
``torch/functional.py`` hides from the ``torch`` namespace (``unique_dim``). Other
names resolve to ``compat.torch``'s function of that name; ``_add_relu``/``_add_relu_``
(the fused ``relu(input + alpha * other)`` PyTorch's tests and quantization passes call)
are composites here."""

from __future__ import annotations

from typing import Any

import compat.torch as _torch
from compat._core.ops.sorting import unique_dim

__all__ = ["_add_relu", "_add_relu_", "unique_dim"]


def _add_relu(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """``relu(input + alpha * other)``, broadcasting and promoting as ``add``."""
    return _torch.relu(_torch.add(input, other, alpha=alpha))


def _add_relu_(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """In-place ``_add_relu``: ``input`` takes ``relu(input + alpha * other)``."""
    return input.add_(other, alpha=alpha).relu_()


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_torch, name)
    except AttributeError:
        raise AttributeError(f"module 'torch._VF' has no attribute {name!r}") from None
