"""Index construction: the indices of triangles and diagonals (``tril_indices``,
``triu_indices``, ``diag_indices``, their ``*_from`` forms and ``mask_indices``), index
grids (``indices``, ``ix_``, ``mgrid``, ``ogrid``), conversion between flat and
multi-indices (``ravel_multi_index``, ``unravel_index``), concatenation written as
indexing (``r_``, ``c_``) and NumPy's ``index_exp``/``s_``."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.errors import ConcretizationTypeError
from funcgrad.core.interp import Tracer
from funcgrad.numpy import _creation, _info, _setops, _shape, _ufuncs
from funcgrad.numpy._core import ArrayLike, aval, check_arraylike, here, out, out_array


def _int() -> np.dtype:
    return dtypes.default_dtype(1)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle of an ``(n, m)`` array."""
    r, c = np.tril_indices(operator.index(n), operator.index(k), m)
    return out_array(r.astype(_int())), out_array(c.astype(_int()))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle of an ``(n, m)`` array."""
    r, c = np.triu_indices(operator.index(n), operator.index(k), m)
    return out_array(r.astype(_int())), out_array(c.astype(_int()))


def _shape2(name: str, arr: Any) -> tuple[int, int]:
    check_arraylike(name, arr)
    shape = tuple(arr.shape) if hasattr(arr, "shape") else np.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{name} requires a 2-D array, got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """:func:`tril_indices` for the shape of the 2-D ``arr``."""
    n, m = _shape2("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """:func:`triu_indices` for the shape of the 2-D ``arr``."""
    n, m = _shape2("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Indices of the main diagonal of an ``ndim``-dimensional ``(n, ..., n)`` array."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (out(np.arange(n, dtype=_int())),) * ndim


def diag_indices_from(arr: ArrayLike) -> tuple[Any, ...]:
    """:func:`diag_indices` for a square ``arr``."""
    check_arraylike("diag_indices_from", arr)
    shape = np.shape(arr) if not hasattr(arr, "shape") else tuple(arr.shape)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def mask_indices(
    n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *, size: int | None = None
) -> tuple[Any, Any]:
    """Indices where ``mask_func(ones((n, n)), k)`` is non-zero (e.g. ``triu``)."""
    return _setops.nonzero(mask_func(_creation.ones((n, n), _int()), k), size=size)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """Index grids for an array of shape ``dimensions`` (stacked, or sparse views)."""
    dims = tuple(operator.index(d) for d in dimensions)
    dt = _int() if dtype is None else dtype
    res = []
    for i, d in enumerate(dims):
        shape = [1] * len(dims)
        shape[i] = d
        r = _shape.reshape(_creation.arange(d, dtype=dt), shape)
        res.append(r if sparse else _shape.broadcast_to(r, dims))
    if sparse:
        return tuple(res)
    return _shape.stack(res) if res else _creation.zeros((0,), dt)


def ix_(*args: ArrayLike) -> tuple[Any, ...]:
    """Open mesh from 1-D sequences, for cross-product indexing."""
    check_arraylike("ix", *args)
    n = len(args)
    res = []
    for i, a in enumerate(args):
        a = _creation.asarray(a)
        if aval(a).ndim != 1:
            raise ValueError(f"Cross index must be 1 dimensional, got {aval(a).ndim}")
        shape = [1] * n
        shape[i] = aval(a).shape[0]
        res.append(_shape.reshape(a, shape))
    return tuple(res)


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Any, ...]:
    """Multi-indices of flat ``indices`` into an array of ``shape`` (out-of-range clamped;
    negative ones count from the end)."""
    check_arraylike("unravel_index", indices)
    idx = _creation.asarray(indices)
    if dtypes.kind(aval(idx).dtype) > 1:
        raise TypeError(f"unravel_index: indices must be integers, got {aval(idx).dtype}")
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    shape = [s if isinstance(s, Tracer) else operator.index(s) for s in shape]
    # successive divmods (sizes may be traced); what is left over says whether the index
    # was out of range above (clamped to the last entry) or below -size (to the first)
    res: list[Any] = [0] * len(shape)
    for i in reversed(range(len(shape))):
        s = shape[i]
        idx, res[i] = _ufuncs.floor_divide(idx, s), _ufuncs.remainder(idx, s)
    above = idx > 0
    below = idx < -1 if aval(idx).dtype.kind == "i" else _creation.asarray(False)
    return tuple(
        out(_ufuncs.where(above, s - 1, _ufuncs.where(below, 0, r))) for s, r in zip(shape, res)
    )


def ravel_multi_index(
    multi_index: Sequence[ArrayLike],
    dims: Sequence[int],
    mode: str = "raise",
    order: str = "C",
    *,
    dtype: Any = None,
) -> Any:
    """Flat indices of the multi-indices ``multi_index`` into an array of shape ``dims``
    (``mode``: ``"clip"``/``"wrap"``/``"ignore"``; ``"raise"`` checks concrete inputs).
    The result's dtype is ``dtype``, else the indices' promoted with ``int``."""
    check_arraylike("ravel_multi_index", *multi_index)
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if mode not in ("raise", "clip", "wrap", "ignore"):
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    idx = [_creation.asarray(i) for i in multi_index]
    for i in idx:
        if dtypes.kind(aval(i).dtype) > 1:
            raise TypeError(f"only int indices permitted, got {aval(i).dtype}")
    if mode == "raise":
        for i, d in zip(idx, dims):
            if isinstance(i, Tracer):
                raise ValueError(
                    "The error occurred because ravel_multi_index was jit-compiled with "
                    "mode='raise'. Use mode='wrap' or mode='clip' instead."
                )
            if np.any((np.asarray(i) < 0) | (np.asarray(i) >= d)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idx = [_ufuncs.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [i % d for i, d in zip(idx, dims)]
    dt = _info.result_type(int, *idx) if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_integer(dt):
        raise ValueError(f"dtype={dt} is not an integer type.")
    order_dims = list(zip(idx, dims)) if order == "C" else list(zip(idx, dims))[::-1]
    res: Any = _creation.asarray(0, dtype=dt)
    for i, d in order_dims:
        res = res * np.asarray(d, dt) + _creation.asarray(i, dtype=dt)
    return out(res)


def _range(name: str, s: slice) -> Any:
    for part in ("start", "stop", "step"):
        v = getattr(s, part)
        if isinstance(v, Tracer):
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: traced "
                f"array with shape {v.aval}. The problem arose with the slice {part} of "
                f"jnp.{name}: grid bounds must be concrete (static){here()}"
            )
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return _creation.linspace(start, s.stop, int(abs(step)), endpoint=True)
    if s.stop is None:  # ``[:]``: an empty range, as NumPy's (and JAX's) grids
        return _creation.arange(0, dtype=_int())
    return _creation.arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse: bool, name: str) -> None:
        self.sparse, self.name = sparse, name

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _range(self.name, key)
        ranges = [_range(self.name, k) for k in key]
        if not ranges:
            return _creation.arange(0, dtype=_int())
        dt = _info.result_type(*ranges)
        grids = _creation.meshgrid(
            *[r.astype(dt) for r in ranges], indexing="ij", sparse=self.sparse
        )
        return list(grids) if self.sparse else _shape.stack(grids, 0)


mgrid = _Grid(False, "mgrid")
"""Dense multi-dimensional grids from slices (``mgrid[0:3, 0:2]``; a complex step
``5j`` means 5 points including the end)."""


ogrid = _Grid(True, "ogrid")
"""Open (broadcastable) grids from slices (``ogrid[0:3, 0:2]``)."""


class _Concat:
    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str) -> None:
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        matrix = None
        if items and isinstance(items[0], str) and items[0] in ("r", "c"):
            # NumPy's matrix directives: a 1-D result becomes one row ('r') or one
            # column ('c'); an array here, not an ``np.matrix``
            matrix, items = items[0], items[1:]
        elif items and isinstance(items[0], str):
            spec, items = items[0], items[1:]
            try:
                parts = [int(p) for p in spec.split(",")]
            except ValueError as e:
                raise ValueError(f"{self.name}: could not understand directive {spec!r}") from e
            axis = parts[0]
            ndmin = parts[1] if len(parts) > 1 else ndmin
            trans1d = parts[2] if len(parts) > 2 else trans1d
        arrays = []
        for it in items:
            if isinstance(it, str):
                raise ValueError(f"{self.name}: a directive string must come first, got {it!r}")
            a = _range(self.name, it) if isinstance(it, slice) else _creation.asarray(it)
            if a.ndim < ndmin:
                # NumPy: prepend axes, then move the original ones to position ``trans1d``
                k2 = ndmin - a.ndim
                k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                a = _shape.reshape(a, (1,) * k2 + a.shape)
                axes = list(range(ndmin))
                a = _shape.transpose(a, axes[:k1] + axes[k2:] + axes[k1:k2])
            arrays.append(a)
        if not arrays:
            return _creation.zeros((0,))
        out = _shape.concatenate(arrays, axis=axis)
        if matrix is not None and out.ndim == 1:
            out = _shape.reshape(out, (-1, 1) if matrix == "c" else (1, -1))
        return out


r_ = _Concat(0, 1, -1, "r_")
"""Concatenate slices, scalars and arrays along the first axis (``r_[1:3, [5], 7]``)."""


c_ = _Concat(-1, 2, 0, "c_")
"""Stack 1-D pieces as columns / concatenate along the last axis (``c_[[1, 2], [3, 4]]``)."""


index_exp = np.index_exp
s_ = np.s_
