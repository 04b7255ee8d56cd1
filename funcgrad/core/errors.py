"""Errors raised by funcgrad and the helper that points them at the user's line."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import numpy as np

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


class LeakedTracerError(TypeError):
    """A tracer was used after the transform that created it had finished (a
    ``TypeError``, as JAX's ``UnexpectedTracerError``)."""


class JAXTypeError(TypeError):
    """JAX's base class for type errors it defines (``jax.errors.JAXTypeError``)."""


class JAXIndexError(IndexError):
    """JAX's base class for indexing errors it defines (``jax.errors.JAXIndexError``)."""


class NonConcreteBooleanIndexError(JAXIndexError, ConcretizationError):
    """A boolean mask index whose values are not known (under ``jit``, or a batched
    mask): the result's shape would depend on them. An ``IndexError`` as in JAX, and a
    :class:`ConcretizationError` as funcgrad's other errors about abstract values."""


class AxisError(np.exceptions.AxisError):
    """An axis out of range for an array. Both a ``ValueError`` and an ``IndexError``
    (NumPy's ``AxisError``): ``jax.numpy`` raises either, depending on the function."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


def broadcast_error_type(shapes: Sequence[tuple[int, ...]]) -> type[Exception]:
    """The exception ``jax.numpy``'s elementwise operations raise for operand shapes that
    do not broadcast: ``TypeError`` when the non-scalar operands share one rank (the
    operation's own shape check), ``ValueError`` when their ranks differ (the failure is
    in the rank promotion that comes first)."""
    ranks = {len(s) for s in shapes if len(s)}
    return TypeError if len(ranks) <= 1 else ValueError


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
