"""``torch.compile``: the model's calls run under compat's lazy execution.

Inside a compiled module's ``forward`` (or a compiled function) ops are recorded
instead of run (:mod:`compat.lazy`), so the whole call becomes one program, compiled
from its second sighting and evaluated when a value is needed (with lazy execution
on for the whole training loop, the step's backward and update join it).
``torch.compile``'s options are accepted and have no effect. Unlike PyTorch, a
module is returned as itself (no ``OptimizedModule`` wrapper, so no ``_orig_mod``
prefix in its ``state_dict``): it is marked, and ``Module.__call__`` reads the mark.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from funcgrad._compat_contract import lazy as _lazy

__all__ = ["compile"]


def compile(model: Callable | None = None, **kwargs: Any) -> Any:
    """``torch.compile(model, ...)`` or ``@torch.compile`` / ``@torch.compile(...)``."""
    if model is None:
        return compile
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if hasattr(model, "_modules"):  # an nn.Module: its calls run lazily (see Module.__call__)
        object.__setattr__(model, "_compat_compiled", True)
        return model
    return _lazily(model)


def _lazily(fn: Callable) -> Callable:
    """``fn`` run with lazy execution on."""
    if getattr(fn, "_compat_compiled", False):
        return fn

    @functools.wraps(fn)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        with _lazy.enabled(True):
            return fn(*args, **kwargs)

    compiled._compat_compiled = True  # type: ignore[attr-defined]
    return compiled
