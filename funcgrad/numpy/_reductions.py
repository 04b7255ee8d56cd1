"""Reductions with NumPy's ``axis``/``keepdims`` conventions and JAX's result dtypes."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy._core import ArrayLike, aval, cast, normalize_axes, normalize_axis, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh


def _arr(x: ArrayLike, name: str) -> Any:
    x = prep(x, name)
    if type(x) in (bool, int, float, complex):
        x = np.asarray(x, dtypes.python_scalar_dtype(x))
    return x


def _keep(out: Any, in_shape: tuple, axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(in_shape))
    return sh.reshape(out, shape)


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "b":
        return dtypes.default_dtype(1)
    if dtype.kind in "iu" and dtype.itemsize < dtypes.default_dtype(1).itemsize:
        return dtypes.canonicalize("uint64" if dtype.kind == "u" else "int64")
    return dtype


def sum(  # noqa: A001
    a: ArrayLike, axis: Any = None, dtype: Any = None, keepdims: bool = False
) -> Any:
    """Sum over ``axis`` (all axes by default)."""
    a = _arr(a, "sum")
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, "sum")
    dt = dtypes.canonicalize(dtype) if dtype is not None else _sum_dtype(av.dtype)
    a = cast(a, dt)
    return _keep(rd.reduce_sum(a, axes), av.shape, axes, keepdims)


def prod(a: ArrayLike, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Product over ``axis``."""
    a = _arr(a, "prod")
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, "prod")
    dt = dtypes.canonicalize(dtype) if dtype is not None else _sum_dtype(av.dtype)
    return _keep(rd.reduce_prod(cast(a, dt), axes), av.shape, axes, keepdims)


def _minmax(name: str, prim_fn: Any, a: ArrayLike, axis: Any, keepdims: bool) -> Any:
    a = _arr(a, name)
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, name)
    if builtins.any(av.shape[i] == 0 for i in axes):
        raise ValueError(f"{name}: zero-size array to reduction operation which has no identity")
    if av.dtype.kind == "b":
        fn = rd.reduce_or if name == "max" else rd.reduce_and
        return _keep(fn(a, axes), av.shape, axes, keepdims)
    return _keep(prim_fn(a, axes), av.shape, axes, keepdims)


def max(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Maximum over ``axis``."""
    return _minmax("max", rd.reduce_max, a, axis, keepdims)


def min(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Minimum over ``axis``."""
    return _minmax("min", rd.reduce_min, a, axis, keepdims)


amax, amin = max, min


def _bool(a: Any) -> Any:
    if aval(a).dtype == np.dtype("bool"):
        return a
    return ew.ne(a, np.asarray(0, aval(a).dtype))


def any(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether any element along ``axis`` is true."""
    a = _bool(_arr(a, "any"))
    axes = normalize_axes(axis, aval(a).ndim, "any")
    return _keep(rd.reduce_or(a, axes), aval(a).shape, axes, keepdims)


def all(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether every element along ``axis`` is true."""
    a = _bool(_arr(a, "all"))
    axes = normalize_axes(axis, aval(a).ndim, "all")
    return _keep(rd.reduce_and(a, axes), aval(a).shape, axes, keepdims)


def _count(shape: tuple, axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def _float(a: Any) -> Any:
    if not dtypes.is_inexact(aval(a).dtype):
        return cast(a, dtypes.default_dtype(2))
    return a


def mean(a: ArrayLike, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Arithmetic mean over ``axis``."""
    a = _arr(a, "mean")
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, "mean")
    a = _float(a) if dtype is None else cast(a, dtypes.canonicalize(dtype))
    s = rd.reduce_sum(a, axes)
    out = ew.div(s, np.asarray(_count(av.shape, axes), aval(s).dtype))
    return _keep(out, av.shape, axes, keepdims)


def var(
    a: ArrayLike, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False
) -> Any:
    """Variance over ``axis`` (``ddof`` as in NumPy)."""
    a = _arr(a, "var")
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, "var")
    a = _float(a) if dtype is None else cast(a, dtypes.canonicalize(dtype))
    m = mean(a, axis=axes, keepdims=True)
    from funcgrad.numpy._ufuncs import subtract

    d = subtract(a, m)
    s = rd.reduce_sum(ew.mul(d, d), axes)
    out = ew.div(s, np.asarray(_count(av.shape, axes) - ddof, aval(s).dtype))
    return _keep(out, av.shape, axes, keepdims)


def std(
    a: ArrayLike, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False
) -> Any:
    """Standard deviation over ``axis``."""
    return ew.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _arg(name: str, fn: Any, a: ArrayLike, axis: Any, keepdims: bool) -> Any:
    a = _arr(a, name)
    av = aval(a)
    if axis is None:
        a = sh.reshape(a, (av.size,))
        out = fn(a, axis=0, index_dtype=dtypes.default_dtype(1))
        return sh.reshape(out, (1,) * av.ndim) if keepdims else out
    ax = normalize_axis(axis, av.ndim, name)
    out = fn(a, axis=ax, index_dtype=dtypes.default_dtype(1))
    return _keep(out, av.shape, (ax,), keepdims)


def argmax(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the maximum (first one on ties)."""
    return _arg("argmax", rd.argmax, a, axis, keepdims)


def argmin(a: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the minimum (first one on ties)."""
    return _arg("argmin", rd.argmin, a, axis, keepdims)


def _cum(name: str, fn: Any, a: ArrayLike, axis: int | None, dtype: Any) -> Any:
    a = _arr(a, name)
    av = aval(a)
    if axis is None:
        a = sh.reshape(a, (av.size,))
        axis = 0
    ax = normalize_axis(axis, aval(a).ndim, name)
    dt = dtypes.canonicalize(dtype) if dtype is not None else _sum_dtype(av.dtype)
    return fn(cast(a, dt), axis=ax)


def cumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """Cumulative sum along ``axis`` (flattened when ``None``)."""
    return _cum("cumsum", rd.cumsum, a, axis, dtype)


def cumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """Cumulative product along ``axis``."""
    return _cum("cumprod", rd.cumprod, a, axis, dtype)


def count_nonzero(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements."""
    return sum(_bool(_arr(a, "count_nonzero")), axis=axis, keepdims=keepdims)


def average(a: ArrayLike, axis: Any = None, weights: ArrayLike | None = None) -> Any:
    """(Weighted) average."""
    if weights is None:
        return mean(a, axis=axis)
    from funcgrad.numpy._ufuncs import divide, multiply

    return divide(sum(multiply(a, weights), axis=axis), sum(weights, axis=axis))
