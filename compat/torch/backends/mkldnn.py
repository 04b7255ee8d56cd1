"""``torch.backends.mkldnn``: compat has no oneDNN kernels (XLA compiles its own), so
``is_available()`` is ``False``; the flags PyTorch programs and tests set (``enabled``,
``deterministic``, ``allow_tf32``, ``fp32_precision``, the ``flags`` context manager,
``set_flags``, ``verbose``) are accepted, readable and settable with PyTorch's CPU
defaults, and change nothing compat computes."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = [
    "VERBOSE_OFF",
    "VERBOSE_ON",
    "VERBOSE_ON_CREATION",
    "flags",
    "is_acl_available",
    "is_available",
    "set_flags",
    "verbose",
]

enabled: bool = True
deterministic: bool = False
#: PyTorch 2.13's CPU build reports ``None`` (oneDNN's TF32 needs an Intel GPU) and keeps
#: it whatever is set
allow_tf32: bool | None = None
fp32_precision: str = "none"

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def is_available() -> bool:
    """Whether oneDNN kernels can be used: never in compat."""
    return False


def is_acl_available() -> bool:
    """Whether oneDNN with the Arm Compute Library can be used: never in compat."""
    return False


class verbose:
    """PyTorch's context manager printing oneDNN's kernel messages: compat runs no oneDNN
    kernel, so there is nothing to print."""

    def __init__(self, level: int) -> None:
        self.level = level

    def __enter__(self) -> verbose:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False


def set_flags(
    _enabled: bool | None = None,
    _deterministic: bool | None = None,
    _allow_tf32: bool | None = None,
    _fp32_precision: str | None = "none",
) -> tuple[Any, Any, Any, Any]:
    """Set the flags given (``None`` leaves one as it is); returns their values before."""
    module = sys.modules[__name__]
    before = (enabled, deterministic, allow_tf32, fp32_precision)
    if _enabled is not None:
        module.enabled = _enabled
    if _deterministic is not None:
        module.deterministic = _deterministic
    if _fp32_precision is not None:
        module.fp32_precision = _fp32_precision
    return before


@contextlib.contextmanager
def flags(
    enabled: bool = False,
    deterministic: bool = False,
    allow_tf32: bool = True,
    fp32_precision: str = "none",
) -> Iterator[None]:
    """The flags set as given inside the block (oneDNN off unless ``enabled``), restored
    after it."""
    before = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*before)
