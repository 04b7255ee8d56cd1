"""``torch.compile``: returns the model or function unchanged.

compat runs each op as a compiled XLA program and assembles whole backward passes
into one compiled program already; ``torch.compile``'s options are accepted and have
no effect. Unlike PyTorch, a module is returned as itself (no ``OptimizedModule``
wrapper, so no ``_orig_mod`` prefix in its ``state_dict``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile"]


def compile(model: Callable | None = None, **kwargs: Any) -> Any:
    """``torch.compile(model, ...)`` or ``@torch.compile`` / ``@torch.compile(...)``."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model
