"""``torch.jit``: ``script``/``trace`` return their argument unchanged.

compat already compiles every op (and whole backward passes) through funcgrad and
XLA, so TorchScript has nothing to add; the decorators are accepted so that
programs using them run. ``save``/``load`` of TorchScript archives are not
supported.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = [
    "export",
    "ignore",
    "is_scripting",
    "is_tracing",
    "load",
    "save",
    "script",
    "trace",
    "unused",
]


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None, **kw: Any):
    """``obj`` unchanged (a function, a module or a class)."""
    return obj


def trace(func: Any, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """``func`` unchanged; ``example_inputs`` are not run."""
    return func


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@ignore`` or ``@ignore(drop=...)``: the function unchanged."""
    if callable(drop):
        return drop
    if drop:
        warnings.warn(
            "ignore(True) has been deprecated. TorchScript will now drop the function call on "
            "compilation. Use torch.jit.unused now.",
            FutureWarning,
            stacklevel=2,
        )
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    return fn


def export(fn: Callable) -> Callable:
    return fn


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    raise NotImplementedError("torch.jit.save: compat.torch has no TorchScript archives")


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    raise NotImplementedError("torch.jit.load: compat.torch has no TorchScript archives")
