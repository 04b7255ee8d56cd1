"""Axis arguments: the one normalisation every layer (primitives' wrappers, ``lax``,
``numpy``, ``nn``) uses, so ``axis``/``axes`` mean the same thing everywhere.

* :func:`normalize_axis` — one axis: a static int in ``[-ndim, ndim)``, returned
  non-negative.
* :func:`normalize_axes` — ``None`` (all axes), one int or a sequence of ints: distinct
  non-negative axes **in the order given** (repeats are an error).
* :func:`sorted_axes` — the same set of axes, sorted: the canonical ``axes`` parameter
  of the reduction primitives.

Errors name the caller (``name``) and the user's line: an axis out of range is an
:class:`~funcgrad.core.errors.AxisError` (a ``ValueError`` and an ``IndexError``, as
NumPy's), a repeated axis a ``ValueError``, a non-integer or traced axis a ``TypeError``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core.errors import AxisError, ConcretizationError, user_frame, where
from funcgrad.core.interp import Tracer
from funcgrad.core.symbolic import SymDim


def static_index(x: Any, what: str, name: str) -> int:
    """A static Python int from ``x`` (a clear ``TypeError`` for non-integers; for tracers
    a ``ConcretizationError``, a ``TypeError`` too, as JAX's ``ConcretizationTypeError``)."""
    if isinstance(x, Tracer):
        raise ConcretizationError(
            f"{name}: {what} must be a static int, got a traced value {x.aval}; mark it static "
            f"(jit(static_argnums=...)){where(user_frame())}"
        )
    if type(x) is SymDim:  # a symbolic dimension stays symbolic
        return x  # type: ignore[return-value]
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int, got {x!r}{where(user_frame())}") from None


def normalize_axis(axis: Any, ndim: int, name: str) -> int:
    """``axis`` (possibly negative) as an index in ``[0, ndim)``."""
    ax = static_index(axis, "axis", name)
    if not -ndim <= ax < ndim:
        raise AxisError(
            f"{name}: axis {ax} out of range for an array of dimension {ndim}{where(user_frame())}"
        )
    return ax % ndim


def normalize_axes(axes: Any, ndim: int, name: str) -> tuple[int, ...]:
    """Distinct non-negative axes in the order given; ``None`` means all ``ndim`` axes."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (Sequence, np.ndarray)) and not isinstance(axes, str):
        out = tuple(normalize_axis(a, ndim, name) for a in axes)
    else:
        out = (normalize_axis(axes, ndim, name),)
    if len(set(out)) != len(out):
        raise ValueError(
            f"{name}: duplicate value in 'axis': {axes!r} (a repeated axis){where(user_frame())}"
        )
    return out


def sorted_axes(axes: Any, ndim: int, name: str) -> tuple[int, ...]:
    """:func:`normalize_axes`, sorted (the reduction primitives' ``axes`` parameter)."""
    return tuple(sorted(normalize_axes(axes, ndim, name)))
