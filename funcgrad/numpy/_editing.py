"""Copies of an array with entries inserted, deleted or replaced: ``insert``, ``delete``,
``put``, ``put_along_axis``, ``place`` and ``fill_diagonal``.

Arrays are immutable, so each returns the edited array; the NumPy forms that write in
place (``inplace=True``, the default of ``put``/``place``/``fill_diagonal``) raise.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer
from funcgrad.numpy import _at, _creation, _indexing, _setops, _shape, _sorting, _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    check_arraylike,
    here,
    normalize_axis,
    out,
)
from funcgrad.numpy._from_data import resize


def _obj_indices(name: str, obj: Any, n: int) -> np.ndarray:
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    if isinstance(obj, Tracer):
        raise ValueError(f"jnp.{name}(): index obj must be static (not traced) in funcgrad")
    return np.asarray(obj)


def _insert_traced(moved: Any, idx: Any, v: Any, ax: int) -> Any:
    """:func:`insert` along axis 0 of ``moved`` at traced integer indices ``idx``
    (negative ones count from the end; out-of-range ones are clipped, as in JAX)."""
    n, rest = aval(moved).shape[0], aval(moved).shape[1:]
    nd = len(rest) + 1
    if aval(v).ndim < nd:  # NumPy's ndmin: leading axes of size 1
        v = _shape.reshape(v, (1,) * (nd - aval(v).ndim) + aval(v).shape)
    if aval(idx).ndim == 0:  # the values' first axis (along ``ax``) holds the insertions
        v = _shape.moveaxis(v, ax, 0)
        k = aval(v).shape[0]
        vals = _shape.broadcast_to(v, (k, *rest))
        idx = _shape.broadcast_to(idx, (k,))
    else:
        idx = _shape.ravel(idx)
        k = aval(idx).shape[0]
        target = (k, *rest)
        vals = _shape.broadcast_to(_shape.moveaxis(v, ax, 0), target)
    idx = _ufuncs.clip(_ufuncs.where(idx < 0, idx + n, idx), 0, n)
    order = _sorting.argsort(idx)
    sidx = _indexing.take(idx, order)
    vals = _indexing.take(vals, order, axis=0)
    arange_n = _creation.arange(n, dtype=aval(sidx).dtype)
    old_pos = arange_n + _setops.searchsorted(sidx, arange_n, side="right")
    new_pos = sidx + _creation.arange(k, dtype=aval(sidx).dtype)
    res = _creation.zeros((n + k, *rest), aval(moved).dtype)
    res = _at.at(res)[old_pos].set(moved)
    return _at.at(res)[new_pos].set(vals)


def _kept_traced(obj: Any, n: int) -> Any:
    """The ``n - k`` positions (in order) that ``k`` unique traced indices ``obj`` (negative
    ones from the end) leave: a stable sort puts the untouched positions first."""
    if not dtypes.is_integer(aval(obj).dtype):
        raise TypeError(f"jnp.delete(): index array must be integer typed, got {aval(obj)}")
    o = _shape.ravel(obj)
    k = aval(o).shape[0]
    if k > n:
        raise ValueError(f"jnp.delete(): {k} unique indices cannot be deleted from {n} entries")
    o = _ufuncs.where(o < 0, o + n, o)
    hit = _at.at(_creation.zeros((n,), np.int32))[o].set(1)
    return _sorting.argsort(hit, stable=True)[: n - k]


def delete(
    arr: ArrayLike,
    obj: ArrayLike | slice,
    axis: int | None = None,
    *,
    assume_unique_indices: bool = False,
) -> Any:
    """``arr`` without the entries at ``obj`` (static indices or a slice; traced indices
    with ``assume_unique_indices``, as JAX) along ``axis``."""
    check_arraylike("delete", arr, obj)
    a = as_array(arr, "delete")
    if axis is None:
        a, axis = _shape.ravel(a), 0
    ax = normalize_axis(axis, aval(a).ndim, "delete")
    n = aval(a).shape[ax]
    if isinstance(obj, Tracer) and assume_unique_indices:
        return out(_indexing.take(a, _kept_traced(obj, n), axis=ax))
    idx = _obj_indices("delete", obj, n)
    if idx.dtype == np.bool_ and idx.shape == (n,):  # a mask: delete where it is True
        idx = np.flatnonzero(idx)
    if idx.dtype.kind not in "iu" and idx.size:
        raise ValueError(f"np.delete(): index must be an integer or slice, got {idx.dtype}")
    idx = np.where(idx < 0, idx + n, idx).astype(np.int64)
    if np.any((idx < 0) | (idx >= n)):
        raise IndexError(f"delete: index out of bounds for axis {ax} with size {n}")
    keep = np.setdiff1d(np.arange(n), idx)
    return out(_indexing.take(a, keep.astype(np.int32), axis=ax))


def insert(
    arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike, axis: int | None = None
) -> Any:
    """``arr`` with ``values`` inserted before the static indices ``obj`` along ``axis``."""
    check_arraylike("insert", arr, obj, values)
    a = as_array(arr, "insert")
    if axis is None:
        a, axis = _shape.ravel(a), 0
    ax = normalize_axis(axis, aval(a).ndim, "insert")
    n = aval(a).shape[ax]
    if isinstance(obj, Tracer):
        if not dtypes.is_integer(aval(obj).dtype):
            raise TypeError(f"jnp.insert(): index array must be integer typed, got {aval(obj)}")
        v = _creation.asarray(values, dtype=aval(a).dtype)
        res = _insert_traced(_shape.moveaxis(a, ax, 0), obj, v, ax)
        return out(_shape.moveaxis(res, 0, ax))
    idx = _obj_indices("insert", obj, n + 1 if isinstance(obj, slice) else n)
    scalar = idx.ndim == 0
    idx = np.atleast_1d(idx).astype(np.int64)
    idx = np.where(idx < 0, idx + n, idx)
    if np.any((idx < 0) | (idx > n)):
        raise IndexError(f"insert: index out of bounds for axis {ax} with size {n}")
    v = _creation.asarray(values, dtype=aval(a).dtype)
    moved = _shape.moveaxis(a, ax, 0)
    rest = aval(moved).shape[1:]
    nd = aval(a).ndim
    if aval(v).ndim < nd:  # NumPy's ndmin: leading axes of size 1
        v = _shape.reshape(v, (1,) * (nd - aval(v).ndim) + aval(v).shape)
    if scalar:  # the values' first axis holds the insertions
        k = aval(v).shape[0]
        vals = _shape.broadcast_to(v, (k, *rest))
        idx = np.full(k, idx[0])
    else:
        k = idx.size
        target = list(aval(a).shape)
        target[ax] = k
        vals = _shape.moveaxis(_shape.broadcast_to(v, tuple(target)), ax, 0)
    # positions: originals shifted by the number of insertions before them
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    vals = _indexing.take(vals, order.astype(np.int32), axis=0)
    new_pos = sidx + np.arange(k)
    old_pos = np.arange(n) + np.searchsorted(sidx, np.arange(n), side="right")
    total = n + k
    src = np.empty(total, np.int64)
    src[old_pos] = np.arange(n)
    src[new_pos] = n + np.arange(k)
    both = _shape.concatenate([moved, vals], axis=0)
    res = _indexing.take(both, src.astype(np.int32), axis=0)
    return out(_shape.moveaxis(res, 0, ax))


def _no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(
            f"funcgrad.numpy.{name} cannot modify arrays in place (arrays are immutable); "
            f"pass inplace=False to get the updated array{here()}"
        )


def _tile_to(v: Any, n: int) -> Any:
    m = v.shape[0]
    if m == n:
        return v
    reps = -(-n // m)
    return _shape.tile(v, reps)[:n]


def put(
    a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *, inplace: bool = True
) -> Any:
    """``a`` with ``a.flat[ind] = v`` (``v`` repeated to the length of ``ind``).

    As ``jax.numpy.put``: ``mode=None`` takes a negative index from the end and clips
    what is still out of bounds (JAX unravels the indices, which clips), ``'clip'`` clips
    every index to ``[0, size)`` (a negative one to 0) and ``'wrap'`` wraps them;
    ``inplace`` must be ``False``.
    """
    _no_inplace("put", inplace)
    arr = _creation.asarray(a)
    idx = _shape.ravel(_creation.asarray(ind))
    vals = _shape.ravel(_creation.asarray(v))
    if arr.size == 0 or idx.size == 0 or vals.size == 0:
        return arr
    vals = _tile_to(vals, idx.shape[0])
    if mode is None:
        idx = _ufuncs.where(idx < 0, idx + arr.size, idx)
        idx = _ufuncs.clip(idx, 0, arr.size - 1)
    elif mode == "clip":
        idx = _ufuncs.clip(idx, 0, arr.size - 1)
    elif mode == "wrap":
        idx = idx % arr.size
    elif mode == "raise":
        raise NotImplementedError("put: mode='raise' is not supported")
    else:
        raise ValueError(f"put: mode should be one of 'wrap' or 'clip', got {mode!r}")
    return _shape.ravel(arr).at[idx].set(vals).reshape(arr.shape)


def put_along_axis(
    arr: ArrayLike,
    indices: ArrayLike,
    values: ArrayLike,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | None = None,
) -> Any:
    """``arr`` with ``values`` written where ``take_along_axis(arr, indices, axis)`` reads;
    ``inplace`` must be ``False``."""
    _no_inplace("put_along_axis", inplace)
    a = _creation.asarray(arr)
    idx = _creation.asarray(indices)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"put_along_axis: with axis=None indices must be 1-D{here()}")
        return put(a, idx, values, mode=mode, inplace=False)
    axis = axis % a.ndim
    if idx.ndim != a.ndim:
        raise ValueError(
            f"put_along_axis: indices (shape {idx.shape}) must have arr's rank {a.ndim}{here()}"
        )
    shape = np.broadcast_shapes(
        tuple(s if i != axis else idx.shape[axis] for i, s in enumerate(a.shape)), idx.shape
    )
    idx = _shape.broadcast_to(idx, shape)
    idx = _ufuncs.where(idx < 0, idx + a.shape[axis], idx)
    grids = list(np.indices(shape, sparse=True))
    grids[axis] = idx
    vals = _shape.broadcast_to(_creation.asarray(values).astype(a.dtype), shape)
    return a.at[tuple(grids)].set(vals)


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Any:
    """``arr`` with its ``mask``-selected elements replaced, in order, by ``vals``
    (repeated as needed); ``inplace`` must be ``False``."""
    _no_inplace("place", inplace)
    a = _creation.asarray(arr)
    m = _shape.ravel(_creation.asarray(mask)).astype(bool)
    v = _shape.ravel(_creation.asarray(vals))
    if m.shape[0] != a.size:
        raise ValueError(f"place: mask (size {m.shape[0]}) must have arr's size {a.size}{here()}")
    if a.size == 0 or v.size == 0:
        return a
    (pos,) = _setops.nonzero(m, size=a.size, fill_value=a.size)
    v = _tile_to(v, a.size).astype(a.dtype)
    flat = _shape.concatenate([_shape.ravel(a), _shape.ravel(a)[:1]])
    return flat.at[pos].set(v)[:-1].reshape(a.shape)


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *, inplace: bool = True) -> Any:
    """A copy of ``a`` with its main diagonal set to ``val`` (``inplace=False`` required, as
    jnp: arrays are immutable)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented")
    a = _creation.asarray(a)
    if aval(a).ndim < 2:
        raise ValueError("array must be at least 2-d")
    if aval(a).ndim > 2 and len(set(aval(a).shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = builtins.min(aval(a).shape)
    idx = tuple(np.arange(n) for _ in range(aval(a).ndim))
    v = _shape.ravel(_creation.asarray(val, dtype=aval(a).dtype))
    v = resize(v, n) if aval(v).shape[0] != n else v
    return out(a.at[idx].set(v))
