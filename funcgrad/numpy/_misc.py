"""Index helpers, partitioning, insertion/deletion, window functions and other small
``jax.numpy`` functions, as composites of funcgrad.numpy operations."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.api import vmap
from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer
from funcgrad.numpy import _creation, _indexing, _info, _linalg, _setops, _shape, _sorting, _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    convert,
    here,
    normalize_axis,
    out,
    user_dtype,
)
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives.sort import sort


def _int() -> np.dtype:
    return dtypes.default_dtype(1)


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (the array API function form of ``x.astype``)."""

    x = as_array(x, "astype")
    if dtype is None:
        dtype = dtypes.default_dtype(2)
    return out(convert(x, user_dtype(dtype, "astype")))


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Any, ...]:
    """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed."""
    x = as_array(x, "unstack")
    if aval(x).ndim == 0:
        raise ValueError(
            "Unstack requires arrays with rank > 0, however a scalar array was passed."
        )
    ax = normalize_axis(axis, aval(x).ndim, "unstack")
    m = _shape.moveaxis(x, ax, 0)
    return tuple(m[i] for i in range(aval(m).shape[0]))


# --------------------------------------------------------------------------- index helpers


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle of an ``(n, m)`` array."""
    r, c = np.tril_indices(operator.index(n), operator.index(k), m)
    return out(r.astype(_int())), out(c.astype(_int()))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle of an ``(n, m)`` array."""
    r, c = np.triu_indices(operator.index(n), operator.index(k), m)
    return out(r.astype(_int())), out(c.astype(_int()))


def _shape2(name: str, arr: Any) -> tuple[int, int]:
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
    idx = _creation.asarray(indices)
    if dtypes.kind(aval(idx).dtype) > 1:
        raise TypeError(f"unravel_index: indices must be integers, got {aval(idx).dtype}")
    shape = tuple(operator.index(s) for s in shape)
    total = int(np.prod(shape, dtype=np.int64))
    idx = _ufuncs.where(idx < 0, idx + total, idx)
    idx = _ufuncs.clip(idx, 0, max(total - 1, 0))
    res = []
    for s in reversed(shape):
        res.append(idx % s if s else idx)
        idx = idx // s if s else idx
    return tuple(out(r) for r in reversed(res))


def ravel_multi_index(
    multi_index: Sequence[ArrayLike],
    dims: Sequence[int],
    mode: str = "raise",
    order: str = "C",
    *,
    dtype: Any = None,
) -> Any:
    """Flat indices of the multi-indices ``multi_index`` into an array of shape ``dims``
    (``mode``: ``"clip"``/``"wrap"``; ``"raise"`` checks concrete inputs)."""
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
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
    else:
        idx = [i % d for i, d in zip(idx, dims)]
    order_dims = list(zip(idx, dims)) if order == "C" else list(zip(idx, dims))[::-1]
    res: Any = 0
    for i, d in order_dims:
        res = res * d + i
    dt = _int() if dtype is None else dtype
    return out(_creation.asarray(res, dtype=dt))


# --------------------------------------------------------------------------- sorting helpers


def lexsort(keys: Sequence[ArrayLike], axis: int = -1) -> Any:
    """Indices that sort by the last key, then the one before it, and so on (stable)."""
    keys = [_creation.asarray(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = aval(keys[0]).shape
    if any(aval(k).shape != shape for k in keys):
        raise ValueError("all keys need to be the same shape")
    if not shape:
        return out(_creation.zeros((), _int()))
    ax = normalize_axis(axis, len(shape), "lexsort")
    iota = _shape.broadcast_to(
        _shape.reshape(
            _creation.arange(shape[ax], dtype=_int()),
            [-1 if d == ax else 1 for d in range(len(shape))],
        ),
        shape,
    )
    res = sort(*keys[::-1], iota, dimension=ax, is_stable=True, num_keys=len(keys))
    return out(res[-1])


def _partition_order(name: str, a: ArrayLike, kth: int, axis: int) -> tuple[Any, int, int]:
    a = as_array(a, name)
    ax = normalize_axis(axis, aval(a).ndim, name)
    n = aval(a).shape[ax]
    kth = operator.index(kth)
    if not -n <= kth < n:
        raise ValueError(f"{name}: kth={kth} out of range for an axis of length {n}")
    return a, ax, kth % n


def _halves(x: Any, ax: int, kth: int) -> Any:
    """The ``kth + 1`` smallest in ascending order, then the rest in descending order (the
    layout ``jnp`` produces from two ``top_k``)."""
    m = _shape.moveaxis(x, ax, -1)
    res = _shape.concatenate([m[..., : kth + 1], m[..., kth + 1 :][..., ::-1]], axis=-1)
    return _shape.moveaxis(res, -1, ax)


def partition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """A copy of ``a`` with the ``kth`` element in its sorted place, the smaller ones before
    it (ascending) and the larger ones after (descending)."""
    a, ax, kth = _partition_order("partition", a, kth, axis)
    return out(_halves(_sorting.sort(a, axis=ax), ax, kth))


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Indices that partition ``a`` around its ``kth`` element (here all in ascending
    order, a valid partition; ties in stable order)."""
    a, ax, kth = _partition_order("argpartition", a, kth, axis)
    return out(convert(_sorting.argsort(a, axis=ax), np.dtype(np.int32)))


def sort_complex(a: ArrayLike) -> Any:
    """Sort by real part, then imaginary part; the result is complex."""
    a = as_array(a, "sort_complex")
    dt = dtypes.to_inexact(aval(a).dtype)

    return out(convert(_sorting.sort(a, axis=-1), ew.complex_dtype(dt)))


# --------------------------------------------------------------------------- insert, delete


def _obj_indices(name: str, obj: Any, n: int) -> np.ndarray:

    if isinstance(obj, slice):
        return np.arange(n)[obj]
    if isinstance(obj, Tracer):
        raise ValueError(f"jnp.{name}(): index obj must be static (not traced) in funcgrad")
    return np.asarray(obj)


def delete(
    arr: ArrayLike,
    obj: ArrayLike | slice,
    axis: int | None = None,
    *,
    assume_unique_indices: bool = False,
) -> Any:
    """``arr`` without the entries at ``obj`` (static indices or a slice) along ``axis``."""
    a = as_array(arr, "delete")
    if axis is None:
        a, axis = _shape.ravel(a), 0
    ax = normalize_axis(axis, aval(a).ndim, "delete")
    n = aval(a).shape[ax]
    idx = _obj_indices("delete", obj, n)
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
    a = as_array(arr, "insert")
    if axis is None:
        a, axis = _shape.ravel(a), 0
    ax = normalize_axis(axis, aval(a).ndim, "insert")
    n = aval(a).shape[ax]
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


# --------------------------------------------------------------------------- misc


def block(arrays: ArrayLike | list) -> Any:
    """Assemble an array from nested lists of blocks (innermost lists join the last axis)."""

    def depth(x: Any) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)

    d = depth(arrays)
    if d == 0:
        return _creation.asarray(arrays)
    leaves_ndim = []

    def collect(x: Any) -> None:
        if isinstance(x, list):
            for e in x:
                collect(e)
        else:
            leaves_ndim.append(_info.ndim(x))

    collect(arrays)
    nd = builtins.max([d, *leaves_ndim])

    def rec(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            a = _creation.asarray(x)
            return _shape.reshape(a, (1,) * (nd - aval(a).ndim) + aval(a).shape)
        if not x:
            raise ValueError("Lists cannot be empty")
        parts = [rec(e, level + 1) for e in x]
        return _shape.concatenate(parts, axis=-(d - level))

    return out(rec(arrays, 0))


def apply_along_axis(func1d: Callable, axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis`` (one ``vmap`` per
    other axis)."""

    a = _creation.asarray(arr)
    nd = aval(a).ndim
    ax = normalize_axis(axis, nd, "apply_along_axis")

    def f(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    for _ in range(nd - 1):
        f = vmap(f)
    res = f(_shape.moveaxis(a, ax, -1))  # (*other axes, *func1d's output axes)
    k = aval(res).ndim - (nd - 1)
    perm = (*range(ax), *range(nd - 1, nd - 1 + k), *range(ax, nd - 1))
    return _shape.transpose(res, perm)


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Sequence[int]) -> Any:
    """Apply ``func(a, axis)`` repeatedly, keeping the reduced axes."""
    a = _creation.asarray(a)
    for axis in axes:
        b = func(a, axis)
        a = b if _info.ndim(b) == _info.ndim(a) else _shape.expand_dims(b, axis)
    return a


def piecewise(x: ArrayLike, condlist: Any, funclist: list, *args: Any, **kw: Any) -> Any:
    """Evaluate each function (or constant) of ``funclist`` where its condition holds (an
    extra last function is the default)."""
    x = _creation.asarray(x)
    conds = _creation.asarray(condlist)
    if aval(conds).ndim == aval(x).ndim:
        conds = conds[None]
    nc, nf = aval(conds).shape[0], len(funclist)
    if nf == nc + 1:
        default = funclist[-1]
        funclist = funclist[:-1]
    elif nf == nc:
        default = 0
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )

    def ev(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return _creation.asarray(v, dtype=aval(x).dtype)

    res = _shape.broadcast_to(ev(default), aval(x).shape)
    for i in range(nc):
        res = _ufuncs.where(conds[i], ev(funclist[i]), res)
    return out(res)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Any:
    """Roll ``axis`` backwards until it lies before ``start``."""
    a = as_array(a, "rollaxis")
    nd = aval(a).ndim
    ax = normalize_axis(axis, nd, "rollaxis")
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd} <= start <= {nd}")
    start = start + nd if start < 0 else start
    if ax < start:
        start -= 1
    return _shape.moveaxis(a, ax, start)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """Split along the third axis."""
    if _info.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _shape.split(ary, indices_or_sections, axis=2)


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Any:
    """``a`` flattened, repeated cyclically and reshaped to ``new_shape``."""
    a = _shape.ravel(a)
    shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    if any(s < 0 for s in shape):
        raise ValueError("All elements of `new_shape` must be non-negative")
    total = int(np.prod(shape, dtype=np.int64))
    n = aval(a).shape[0]
    if n == 0 or total == 0:
        return out(_creation.zeros(shape, aval(a).dtype))
    reps = -(-total // n)
    return out(_shape.reshape(_shape.tile(a, reps)[:total], shape))


def geomspace(
    start: ArrayLike,
    stop: ArrayLike,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop``."""
    s, e = _creation.asarray(start), _creation.asarray(stop)
    dt = dtypes.to_inexact(dtypes.result_type((aval(s).dtype, False), (aval(e).dtype, False))[0])
    s, e = convert(s, dt), convert(e, dt)
    sign = _ufuncs.sign(s)
    res = sign * _creation.logspace(
        _ufuncs.log10(s * sign),
        _ufuncs.log10(e * sign),
        num,
        endpoint=endpoint,
        base=10.0,
        dtype=dt,
        axis=axis,
    )
    if num > 0:
        res = _shape.moveaxis(res, axis, 0)
        res = res.at[0].set(s)
        if endpoint and num > 1:
            res = res.at[-1].set(e)
        res = _shape.moveaxis(res, 0, axis)
    return out(res if dtype is None else _creation.asarray(res, dtype=dtype))


def compress(
    condition: ArrayLike,
    a: ArrayLike,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: ArrayLike = 0,
    out: None = None,
) -> Any:
    """The slices of ``a`` along ``axis`` where ``condition`` holds (``size``: a static
    length padded with ``fill_value``)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    c = _shape.ravel(condition)
    arr = _creation.asarray(a)
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    ax = normalize_axis(axis, aval(arr).ndim, "compress")
    n = aval(arr).shape[ax]
    if aval(c).shape[0] > n:
        c = c[:n]
    elif aval(c).shape[0] < n:
        c = _shape.concatenate([c, _creation.zeros((n - aval(c).shape[0],), aval(c).dtype)])
    (idx,) = _setops.nonzero(c, size=size, fill_value=n)
    res = _shape.moveaxis(
        _indexing.take(arr, idx, axis=ax, mode="fill", fill_value=fill_value), ax, 0
    )
    return _shape.moveaxis(res, 0, ax)


def extract(
    condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0
) -> Any:
    """Entries of ``ravel(arr)`` where ``ravel(condition)`` is non-zero."""
    return compress(_shape.ravel(condition), _shape.ravel(arr), size=size, fill_value=fill_value)


def choose(a: ArrayLike, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Entry ``i`` taken from ``choices[a[i]]`` (all broadcast together)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = _creation.asarray(a)
    if dtypes.kind(aval(a).dtype) > 1:
        raise TypeError("choose: a must be an integer array")
    n = len(choices)
    if mode == "raise":
        if isinstance(a, Tracer):
            raise ValueError(
                "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use mode='wrap' or mode='clip' instead."
            )
        if np.any((np.asarray(a) < 0) | (np.asarray(a) >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = _ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrs = _shape.broadcast_arrays(a, *choices)
    a, cs = arrs[0], _shape.stack(arrs[1:])
    return _indexing.take_along_axis(cs, a[None], axis=0)[0]


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


def fromfunction(
    function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any
) -> Any:
    """``function`` evaluated on the index grids of ``shape``."""
    grids = indices(shape, dtype=dtype, sparse=False)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


def _window(name: str, m: int, f: Callable[[np.ndarray], np.ndarray]) -> Any:
    m = operator.index(m)
    dt = dtypes.default_dtype(2)
    if m <= 1:
        return out(np.ones((builtins.max(m, 0),), dt))
    return out(np.asarray(f(np.arange(m)), dt))


def bartlett(M: int) -> Any:
    """Bartlett (triangular) window of length ``M``."""
    return _window("bartlett", M, lambda n: 1 - np.abs(2 * n / (M - 1) - 1))


def blackman(M: int) -> Any:
    """Blackman window of length ``M``."""
    return _window(
        "blackman",
        M,
        lambda n: (
            0.42 - 0.5 * np.cos(2 * np.pi * n / (M - 1)) + 0.08 * np.cos(4 * np.pi * n / (M - 1))
        ),
    )


def hamming(M: int) -> Any:
    """Hamming window of length ``M``."""
    return _window("hamming", M, lambda n: 0.54 - 0.46 * np.cos(2 * np.pi * n / (M - 1)))


def hanning(M: int) -> Any:
    """Hann window of length ``M``."""
    return _window("hanning", M, lambda n: 0.5 - 0.5 * np.cos(2 * np.pi * n / (M - 1)))


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Batched matrix-vector product ``x1 @ x2[..., None]`` (broadcast batch axes)."""
    return _linalg.matmul(x1, _creation.asarray(x2)[..., None])[..., 0]


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Batched vector-matrix product ``conj(x1)[..., None, :] @ x2``."""
    return _linalg.matmul(_ufuncs.conj(_creation.asarray(x1))[..., None, :], x2)[..., 0, :]


_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f" or d == dtypes.bfloat16,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d == dtypes.bfloat16,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (an array-API kind name, a dtype, or a tuple)."""
    dt = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized {k=!r}")
            if _KINDS[k](dt):
                return True
        elif dt == np.dtype(k):
            return True
    return False


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


_ = here


index_exp = np.index_exp
s_ = np.s_


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    import re

    def dims(group: str) -> list[tuple[str, ...]]:
        return [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([\w,]*)\)", group)]

    if "->" not in signature:
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.replace(" ", "").split("->")
    return dims(ins), dims(outs)


def vectorize(
    pyfunc: Callable, *, excluded: Any = frozenset(), signature: str | None = None
) -> Callable:
    """A function that maps ``pyfunc`` over the broadcast leading (loop) axes of its array
    arguments with ``vmap``; ``signature`` (``"(n),(n)->()"``) names each argument's core
    axes; positional indices or keyword names in ``excluded`` are passed through."""
    import functools

    in_core = None if signature is None else _parse_signature(signature)[0]

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        static = {i: a for i, a in enumerate(args) if i in excluded}
        skw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw = [k for k in kwargs if k not in excluded]
        dyn = [_creation.asarray(a) for i, a in enumerate(args) if i not in excluded]
        dyn += [_creation.asarray(kwargs[k]) for k in dyn_kw]
        core = in_core if in_core is not None else [()] * len(dyn)
        if len(core) != len(dyn):
            raise TypeError(
                f"wrong number of positional arguments: expected {len(core)}, got {len(dyn)}"
            )
        loops = [aval(a).shape[: aval(a).ndim - len(c)] for a, c in zip(dyn, core)]
        loop = np.broadcast_shapes(*loops) if loops else ()
        dyn = [
            _shape.broadcast_to(a, (*loop, *aval(a).shape[len(s) :])) for a, s in zip(dyn, loops)
        ]

        def call(*xs: Any) -> Any:
            full, it = [], iter(xs[: len(xs) - len(dyn_kw)])
            for i in range(len(args)):
                full.append(static[i] if i in static else next(it))
            kw = dict(skw, **dict(zip(dyn_kw, xs[len(xs) - len(dyn_kw) :])))
            return pyfunc(*full, **kw)

        f = call
        for _ in loop:
            f = vmap(f)
        return f(*dyn)

    return wrapped
