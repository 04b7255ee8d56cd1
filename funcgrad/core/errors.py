"""Errors raised by funcgrad and the helper that points them at the user's line."""

from __future__ import annotations

import os
import sys

_FG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PKG_DIRS = (_FG_DIR + os.sep, os.path.join(os.path.dirname(_FG_DIR), "compat") + os.sep)
_SKIP = ("jax" + os.sep, "contextlib.py", "functools.py", "<frozen")


class ConcretizationError(TypeError):
    """A traced (abstract) value was used where Python needs a concrete one."""


class TracerBoolConversionError(ConcretizationError):
    """``bool()`` (an ``if``, ``while``, ``and``/``or``) of a value that is not known."""


class TracerIntegerConversionError(ConcretizationError):
    """``__index__`` (a list index, ``range``) of a value that is not known."""


class TracerArrayConversionError(ConcretizationError):
    """``np.asarray`` of a value that is not known."""


#: JAX's name for the base class
ConcretizationTypeError = ConcretizationError


class LeakedTracerError(Exception):
    """A tracer was used after the transform that created it had finished."""


def user_frame() -> tuple[str, int] | None:
    """(filename, line) of the innermost frame outside funcgrad, compat and jax."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG_DIRS) and not any(s in fn for s in _SKIP):
            return (fn, f.f_lineno)
        f = f.f_back
    return None


def where(source: tuple[str, int] | None) -> str:
    if source is None:
        return ""
    return f"\n  (in your code at {source[0]}:{source[1]})"
