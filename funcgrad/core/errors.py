"""Errors raised by funcgrad and the helper that points them at the user's line."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from collections.abc import Sequence

import numpy as np

# ``ShardingTypeError`` is JAX's own class, not one of funcgrad's beside it: funcgrad's
# sharding rules raise it, and so does JAX's lowering of the rules funcgrad leaves to it
# (a reshape, a slice, a dot's batch dimensions), eagerly and under ``fg.jit``; one
# ``except ShardingTypeError`` catches both, as under JAX. JAX makes it public in no
# module (it lives in ``jax._src.core``).
try:
    from jax._src.core import ShardingTypeError
except (ImportError, AttributeError):  # pragma: no cover - a JAX without it

    class ShardingTypeError(Exception):  # type: ignore[no-redef]
        """Operands whose shardings over explicit mesh axes leave a result's sharding
        ambiguous: the operation needs ``out_sharding``."""


_FG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: directories whose frames are library code, skipped by :func:`user_frame`: funcgrad's
#: own and those of the packages built on it that registered themselves
_PKG_DIRS: tuple[str, ...] = (_FG_DIR + os.sep,)
_SKIP = ("jax" + os.sep, "contextlib.py", "functools.py", "<frozen")
#: per code object, by its id: ``(code, whether its frames are library code)`` (user_frame
#: runs for every traced equation, and a stack is mostly the same few dozen code objects;
#: hashing a code object hashes its constants each time, ~1.7 us a probe against 0.1 us
#: by id; the entry holds the code object, so its id is not reused while it is cached)
_INTERNAL_CODE: dict[int, tuple[types.CodeType, bool]] = {}


def register_internal_package(package: str | types.ModuleType) -> None:
    """Treat the frames of ``package`` (a package name, a package module or a directory)
    as library code: errors then point past them to the user's line, as they point
    past funcgrad's own frames. A library built on funcgrad calls this at import."""
    global _PKG_DIRS
    if isinstance(package, types.ModuleType):
        paths = list(getattr(package, "__path__", None) or [os.path.dirname(package.__file__)])
    elif os.path.isdir(package):
        paths = [package]
    else:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"register_internal_package: {package!r} is not a package")
        paths = list(spec.submodule_search_locations)
    for p in paths:
        d = os.path.abspath(p) + os.sep
        if d not in _PKG_DIRS:
            _PKG_DIRS = (*_PKG_DIRS, d)
            _INTERNAL_CODE.clear()


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


class BroadcastError(Exception):
    """Operand shapes that do not broadcast. Raised as :class:`BroadcastValueError` or
    :class:`BroadcastTypeError` (the type ``jax.numpy`` raises); ``shapes`` holds the
    operands' shapes in order, so a library on top can word its own error."""

    shapes: tuple[tuple[int, ...], ...] = ()


class BroadcastValueError(BroadcastError, ValueError):
    """A :class:`BroadcastError` that is a ``ValueError``."""


class BroadcastTypeError(BroadcastError, TypeError):
    """A :class:`BroadcastError` that is a ``TypeError``."""


def broadcast_error_type(shapes: Sequence[tuple[int, ...]]) -> type[BroadcastError]:
    """The exception ``jax.numpy``'s elementwise operations raise for operand shapes that
    do not broadcast: ``TypeError`` when the non-scalar operands share one rank (the
    operation's own shape check), ``ValueError`` when their ranks differ (the failure is
    in the rank promotion that comes first)."""
    ranks = {len(s) for s in shapes if len(s)}
    return BroadcastTypeError if len(ranks) <= 1 else BroadcastValueError


def user_frame(stop: types.FrameType | None = None) -> tuple[str, int] | None:
    """(filename, line) of the innermost frame outside funcgrad, the registered
    packages (:func:`register_internal_package`) and jax; None if the walk meets the
    frame ``stop`` first."""
    f = sys._getframe(1)
    get = _INTERNAL_CODE.get  # (every traced equation walks here: locals, no re-lookups)
    while f is not stop and f is not None:
        code = f.f_code
        entry = get(id(code))
        if entry is None or entry[0] is not code:
            entry = _classify(code)
        if not entry[1]:
            return (code.co_filename, f.f_lineno)
        f = f.f_back
    return None


def _classify(code: types.CodeType) -> tuple[types.CodeType, bool]:
    """``(code, whether it is internal)``, remembered by the code's id (the entry holds the
    code, so the id is not reused while it is there)."""
    known = _INTERNAL_CODE
    if len(known) > 16384:  # code objects made at run time (exec): stay bounded
        known.clear()
    fn = code.co_filename
    entry = known[id(code)] = (code, fn.startswith(_PKG_DIRS) or any(s in fn for s in _SKIP))
    return entry


class DerivedSource(tuple):
    """The ``(file, line)`` of an equation a derivative rule made: the line of the
    forward equation it differentiates, whose primitive is ``prim``."""

    prim: str

    def __new__(cls, source: tuple[str, int], prim: str) -> DerivedSource:
        t = super().__new__(cls, source)
        t.prim = prim
        return t


def where(source: tuple[str, int] | None) -> str:
    if source is None:
        return ""
    return f"\n  (in your code at {source[0]}:{source[1]})"
