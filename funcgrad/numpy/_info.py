"""Introspection of arrays and dtypes: ``result_type``, ``promote_types``, ``can_cast``,
``ndim``, ``shape``, ``size``, ``isscalar``, ``isdtype``, ``iterable`` and the ``ndarray``
type for ``isinstance`` checks (below the other ``funcgrad.numpy`` modules, which use them)."""

from __future__ import annotations

import builtins as _builtins
import warnings as _warnings
from typing import Any

import jax as _jax
import numpy as _np
from ml_dtypes import finfo as _ml_finfo
from ml_dtypes import iinfo as _ml_iinfo

from funcgrad.core import dtypes as _dtypes
from funcgrad.core.interp import Tracer as _Tracer
from funcgrad.numpy._core import as_array as _as_array
from funcgrad.numpy._core import prep as _prep
from funcgrad.numpy._core import result_dtype as _result_dtype
from funcgrad.numpy._core import user_dtype as _user_dtype


class _ArrayMeta(type):
    def __instancecheck__(cls, x: object) -> bool:
        return isinstance(x, (_jax.Array, _Tracer))


class ndarray(metaclass=_ArrayMeta):
    """``isinstance(x, fnp.ndarray)`` is true for ``jax.Array``s and funcgrad tracers."""


def result_type(*args: Any) -> _np.dtype:
    """The dtype ``jax.numpy`` would give a function of ``args`` (arrays, Python scalars or
    dtypes); a weakly typed result is reported as its kind's default dtype."""
    pairs = []
    for a in args:
        if a is None:  # NumPy's dtype(None): float64 (canonicalized), strong, as jax.numpy
            pairs.append((_dtypes.canonicalize(_np.dtype(None)), False))
        elif isinstance(a, (_np.dtype, type, str)) and not isinstance(a, _builtins.bool):
            if a is int or a is float or a is complex:
                pairs.append((_dtypes.default_dtype({int: 1, float: 2, complex: 3}[a]), True))
            else:
                pairs.append((_user_dtype(a, "result_type"), False))
        else:
            x = _prep(a, "result_type")
            pairs.append(_result_dtype(x))
    dt, weak = _dtypes.result_type(*pairs)
    return _dtypes.default_dtype(_dtypes.kind(dt)) if weak else dt


def promote_types(a: Any, b: Any) -> _np.dtype:
    """The promoted dtype of two (strong) dtypes on JAX's lattice."""
    return _dtypes.result_type(
        (_user_dtype(a, "promote_types"), False), (_user_dtype(b, "promote_types"), False)
    )[0]


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """NumPy's ``can_cast`` on canonical dtypes."""
    f = from_ if isinstance(from_, (_np.dtype, type, str)) else _result_dtype(_prep(from_))[0]
    return _builtins.bool(
        _np.can_cast(_user_dtype(f, "can_cast"), _user_dtype(to, "can_cast"), casting)
    )


def ndim_of(a: Any) -> int:
    """Number of dimensions of ``a`` (lists too, silently: funcgrad's own callers)."""
    return len(_as_array(a, "ndim", sequences=True).shape)


def shape_of(a: Any) -> tuple[int, ...]:
    """Shape of ``a`` (lists too, silently: funcgrad's own callers)."""
    return tuple(_as_array(a, "shape", sequences=True).shape)


def _warn_sequence(name: str, a: Any) -> None:
    """JAX's deprecation warning for a list or tuple where an array is expected."""
    if isinstance(a, (list, tuple)):
        _warnings.warn(
            f"{name} requires ndarray or scalar arguments, got {type(a)} at position 0. "
            "In a future JAX release this will be an error.",
            DeprecationWarning,
            stacklevel=3,
        )


def ndim(a: Any) -> int:
    """Number of dimensions of ``a``."""
    _warn_sequence("ndim", a)
    return ndim_of(a)


def shape(a: Any) -> tuple[int, ...]:
    """Shape of ``a``."""
    _warn_sequence("shape", a)
    return shape_of(a)


def size(a: Any, axis: int | None = None) -> int:
    """Number of elements of ``a`` (along ``axis`` if given)."""
    _warn_sequence("size", a)
    s = shape_of(a)
    if axis is None:
        return int(_np.prod(s, dtype=_np.int64))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len({i % len(s) for i in axes}) != len(axes):
        raise ValueError(f"repeated axis: {axis}")
    return int(_np.prod([s[i] for i in axes], dtype=_np.int64))


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a Python/NumPy scalar or a 0-d array."""
    if isinstance(element, (_jax.Array, _Tracer, _np.ndarray)):
        return element.ndim == 0
    return _builtins.bool(_np.isscalar(element))


def _custom_parent(dt: _np.dtype) -> type | None:
    """The NumPy abstract type an ml_dtypes type (``bfloat16``, ``int4``...) belongs
    under, as JAX's ``issubdtype`` places it; ``None`` for NumPy's own dtypes."""
    if issubclass(dt.type, (_np.number, _np.bool_)) or dt.names is not None:
        return None
    try:
        _ml_finfo(dt)
        return _np.floating
    except ValueError:
        pass
    try:
        return _np.signedinteger if _ml_iinfo(dt).min < 0 else _np.unsignedinteger
    except ValueError:
        return None


_ABSTRACT = (_np.generic, _np.number, _np.inexact, _np.floating, _np.integer)
_ABSTRACT += (_np.signedinteger, _np.unsignedinteger, _np.complexfloating)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """``numpy.issubdtype``, with ml_dtypes' types where JAX puts them:
    ``issubdtype(bfloat16, floating)`` and ``issubdtype(int4, signedinteger)`` are true."""
    try:
        dt1 = _np.dtype(arg1)
    except TypeError:
        return bool(_np.issubdtype(arg1, arg2))
    parent = _custom_parent(dt1)
    if parent is None:
        return bool(_np.issubdtype(arg1, arg2))
    if arg2 in _ABSTRACT:
        return issubclass(parent, arg2)
    try:
        return _np.dtype(arg2) == dt1
    except TypeError:
        return False


_KINDS = {
    "bool": lambda d: d == _np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f" or d == _dtypes.bfloat16,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d == _dtypes.bfloat16,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (an array-API kind name, a dtype, or a tuple)."""
    dt = _np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized {k=!r}")
            if _KINDS[k](dt):
                return True
        elif dt == _np.dtype(k):
            return True
    return False


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True
