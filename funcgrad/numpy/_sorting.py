"""Sorting: ``sort``, ``argsort``, ``lexsort``, ``sort_complex``, ``partition``/
``argpartition`` and ``median``, on the ``sort`` primitive."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy import _creation, _shape
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    check_arraylike,
    convert,
    here,
    normalize_axes,
    normalize_axis,
    out,
    promote,
    unsupported,
    user_dtype,
)
from funcgrad.numpy._core import out as _out
from funcgrad.numpy._reductions import any as _any
from funcgrad.numpy._ufuncs import isnan, where
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh
from funcgrad.primitives.sort import sort as _sort


def _prim_sort(*operands: Any, dimension: int, num_keys: int = 1) -> list:
    return _sort(*operands, dimension=dimension, is_stable=True, num_keys=num_keys)


def _prepare(name: str, a: ArrayLike, axis: int | None) -> tuple[Any, int]:
    a = as_array(a, name)
    if axis is None:
        a = sh.reshape(a, (aval(a).size,))
        axis = 0
    if aval(a).ndim == 0:
        raise ValueError(f"{name}: cannot sort a 0-d array{here()}")
    return convert(a, aval(a).dtype), normalize_axis(axis, aval(a).ndim, name)


def sort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: str | None = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    """Sorted copy of ``a`` along ``axis`` (flattened when ``None``); NaNs sort last."""
    if order is not None:
        raise unsupported("sort with order= (structured arrays)")
    a, ax = _prepare("sort", a, axis)
    (res,) = _prim_sort(a, dimension=ax)
    return out(sh.rev(res, (ax,)) if descending else res)


def argsort(
    a: ArrayLike,
    axis: int | None = -1,
    *,
    kind: str | None = None,
    order: Any = None,
    stable: bool = True,
    descending: bool = False,
    dtype: Any = None,
) -> Any:
    """Indices that sort ``a`` along ``axis`` (stable: ties keep their order), of the
    default integer dtype or ``dtype``."""
    if order is not None:
        raise unsupported("argsort with order= (structured arrays)")
    a, ax = _prepare("argsort", a, axis)
    av = aval(a)
    idx_dt = dtypes.default_dtype(1) if dtype is None else user_dtype(dtype, "argsort")
    if not dtypes.is_integer(idx_dt):
        raise ValueError(f"argsort: dtype must be an integer dtype, got {idx_dt}{here()}")
    n = av.shape[ax]
    if descending:
        a = sh.rev(a, (ax,))
    iota = sh.iota(idx_dt, av.shape, ax)
    idx = _prim_sort(a, iota, dimension=ax)[1]
    if descending:
        idx = ew.sub(np.asarray(n - 1, idx_dt), sh.rev(idx, (ax,)))
    return out(idx)


def msort(a: ArrayLike) -> Any:
    """``sort(a, axis=0)``."""
    return sort(a, axis=0)


def median(
    a: ArrayLike,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    """Median along ``axis`` (int, tuple or ``None``): the mean of the two middle values for
    even counts; NaN if the slice holds a NaN."""

    if out is not None:
        raise unsupported("median(..., out=...)")
    x = as_array(a, "median")
    (x,) = promote("median", x, to="inexact")
    dt, weak = aval(x).dtype, aval(x).weak_type
    if weak:  # jnp computes quantile(a, 0.5): a weak ``a`` meets the weak float 0.5
        dt = dtypes.result_type((dt, True), (dtypes.default_dtype(2), True))[0]
    x = convert(as_array(x, "median"), dt)
    shape = aval(x).shape
    axes = normalize_axes(axis, len(shape), "median")
    rest = [d for d in range(len(shape)) if d not in axes]
    n = int(np.prod([shape[d] for d in axes], dtype=np.int64))
    if n == 0:
        raise ValueError(f"median: cannot take the median over an empty axis{here()}")
    y = sh.reshape(sh.transpose(x, (*rest, *axes)), (*[shape[d] for d in rest], n))
    ax = len(rest)
    (s,) = _prim_sort(y, dimension=ax)
    dt = aval(s).dtype

    def take(i: int) -> Any:
        ss = aval(s).shape
        return sh.reshape(sh.slice(s, (0,) * ax + (i,), (*ss[:-1], i + 1)), ss[:-1])

    if n % 2:
        mid = take(n // 2)
    else:
        mid = ew.div(ew.add(take(n // 2 - 1), take(n // 2)), np.asarray(2, dt))

    mid = where(_any(isnan(y), axis=ax), np.asarray(np.nan, dt), mid)
    if keepdims:  # (a 0-d input gives shape (1,), as jnp.median)
        kept = tuple(1 if d in axes else k for d, k in enumerate(shape))
        mid = sh.reshape(mid, kept or (1,))
    return _out(mid)


def _int() -> np.dtype:
    return dtypes.default_dtype(1)


def lexsort(keys: Sequence[ArrayLike], axis: int = -1) -> Any:
    """Indices that sort by the last key, then the one before it, and so on (stable)."""
    check_arraylike("lexsort", *keys)
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
    res = _sort(*keys[::-1], iota, dimension=ax, is_stable=True, num_keys=len(keys))
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
    return out(_halves(sort(a, axis=ax), ax, kth))


def sort_complex(a: ArrayLike) -> Any:
    """Sort by real part, then imaginary part; the result is complex."""
    a = as_array(a, "sort_complex")
    dt = dtypes.to_inexact(aval(a).dtype)

    return out(convert(sort(a, axis=-1), ew.complex_dtype(dt)))


def argpartition(a: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Indices that partition ``a`` around its ``kth`` element (here all in ascending
    order, a valid partition; ties in stable order)."""
    check_arraylike("partition", a)
    a, ax, kth = _partition_order("argpartition", a, kth, axis)
    return out(convert(argsort(a, axis=ax), np.dtype(np.int32)))
