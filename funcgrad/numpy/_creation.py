"""Array creation: zeros, ones, full, arange, linspace, eye, and ``asarray``."""

from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer
from funcgrad.numpy._core import ArrayLike, aval, cast, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _dtype(dtype: Any, default_kind: int = 2) -> np.dtype:
    return dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_dtype(default_kind)


def asarray(a: ArrayLike, dtype: Any = None) -> Any:
    """Convert to an array (a ``jax.Array`` outside transforms; tracers pass through)."""
    x = prep(a, "asarray")
    if type(x) in (bool, int, float, complex):
        x = np.asarray(x, dtypes.python_scalar_dtype(x))
    if dtype is not None:
        x = cast(x, dtypes.canonicalize(dtype))
    if isinstance(x, (np.ndarray, np.generic)):
        return jax.device_put(np.asarray(x))
    return x


def array(a: ArrayLike, dtype: Any = None, copy: bool = True) -> Any:
    """Like :func:`asarray` (arrays are immutable, so copies are free)."""
    return asarray(a, dtype)


def full(shape: Any, fill_value: ArrayLike, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value``."""
    shape = _shape(shape)
    if isinstance(fill_value, Tracer) or (hasattr(fill_value, "shape") and fill_value.shape):
        v = prep(fill_value, "full")
        if dtype is not None:
            v = cast(v, dtypes.canonicalize(dtype))
        from funcgrad.numpy._shape import broadcast_to

        return broadcast_to(v, shape)
    if dtype is None:
        dt = aval(prep(fill_value, "full")).dtype
    else:
        dt = dtypes.canonicalize(dtype)
    return sh.full(shape, fill_value, dt)


def zeros(shape: Any, dtype: Any = None) -> Any:
    """An array of zeros (float by default)."""
    return sh.full(_shape(shape), 0, _dtype(dtype))


def ones(shape: Any, dtype: Any = None) -> Any:
    """An array of ones (float by default)."""
    return sh.full(_shape(shape), 1, _dtype(dtype))


def empty(shape: Any, dtype: Any = None) -> Any:
    """Same as :func:`zeros` (arrays are immutable)."""
    return zeros(shape, dtype)


def _like(a: ArrayLike, dtype: Any, shape: Any) -> tuple[tuple, np.dtype]:
    av = aval(prep(a, "zeros_like"))
    return (_shape(shape) if shape is not None else av.shape), (
        dtypes.canonicalize(dtype) if dtype is not None else av.dtype
    )


def zeros_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with the shape and dtype of ``a``."""
    s, d = _like(a, dtype, shape)
    return sh.full(s, 0, d)


def ones_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    """Ones with the shape and dtype of ``a``."""
    s, d = _like(a, dtype, shape)
    return sh.full(s, 1, d)


def full_like(a: ArrayLike, fill_value: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    """``fill_value`` with the shape and dtype of ``a``."""
    s, d = _like(a, dtype, shape)
    return full(s, fill_value, d)


def empty_like(a: ArrayLike, dtype: Any = None, shape: Any = None) -> Any:
    return zeros_like(a, dtype, shape)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values in ``[start, stop)`` (static bounds)."""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise TypeError(
                "arange requires concrete (static) bounds; got a traced value. "
                "Mark it static with jit(static_argnums=...)"
            )
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    n = max(int(math.ceil((stop - start) / step)), 0)
    if dtype is None:
        is_float = any(isinstance(v, float) or (hasattr(v, "dtype") and v.dtype.kind == "f")
                       for v in (start, stop, step))
        dt = dtypes.default_dtype(2 if is_float else 1)
    else:
        dt = dtypes.canonicalize(dtype)
    idx = sh.iota(dtype=dt if dt.kind in "iu" else np.dtype("int32"), shape=(n,), dimension=0)
    if start == 0 and step == 1 and dt.kind in "iu":
        return idx
    idx = cast(idx, dt)
    return ew.add(ew.mul(idx, np.asarray(step, dt)), np.asarray(start, dt))


def linspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None
) -> Any:
    """``num`` evenly spaced samples from ``start`` to ``stop``."""
    dt = _dtype(dtype)
    if num == 1:
        return full((1,), start, dt)
    div = (num - 1) if endpoint else num
    idx = cast(sh.iota(dtype=np.dtype("int32"), shape=(num,), dimension=0), dt)
    start_a = np.asarray(start, dt)
    step = (np.asarray(stop, np.float64) - np.asarray(start, np.float64)) / div
    out = ew.add(ew.mul(idx, np.asarray(step, dt)), start_a)
    if endpoint:
        from funcgrad.numpy._ufuncs import where

        last = ew.eq(sh.iota(dtype=np.dtype("int32"), shape=(num,), dimension=0), np.int32(num - 1))
        out = where(last, np.asarray(stop, dt), out)
    return out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    """Identity-like matrix with ones on the ``k``-th diagonal."""
    M = N if M is None else M  # noqa: N806
    dt = _dtype(dtype)
    i = sh.iota(dtype=np.dtype("int32"), shape=(N, M), dimension=0)
    j = sh.iota(dtype=np.dtype("int32"), shape=(N, M), dimension=1)
    mask = ew.eq(ew.sub(j, i), np.asarray(k, np.int32))
    return ew.convert_element_type(mask, dt)


def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    M = N if M is None else M  # noqa: N806
    i = sh.iota(dtype=np.dtype("int32"), shape=(N, M), dimension=0)
    j = sh.iota(dtype=np.dtype("int32"), shape=(N, M), dimension=1)
    return ew.convert_element_type(ew.le(ew.sub(j, i), np.asarray(k, np.int32)), _dtype(dtype))


def meshgrid(*xi: ArrayLike, indexing: str = "xy") -> list[Any]:
    """Coordinate matrices from coordinate vectors."""
    from funcgrad.numpy._shape import broadcast_to, reshape

    arrs = [asarray(x) for x in xi]
    shape = [aval(a).shape[0] for a in arrs]
    if indexing == "xy" and len(arrs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrs):
        pos = i
        if indexing == "xy" and len(arrs) >= 2 and i < 2:
            pos = 1 - i
        s = [1] * len(arrs)
        s[pos] = aval(a).shape[0]
        out.append(broadcast_to(reshape(a, tuple(s)), tuple(shape)))
    return out


def diag(v: ArrayLike, k: int = 0) -> Any:
    """Diagonal of a matrix, or a diagonal matrix from a vector."""
    from funcgrad.numpy._reductions import sum as _sum
    from funcgrad.numpy._ufuncs import multiply

    v = asarray(v)
    av = aval(v)
    if av.ndim == 1:
        n = av.shape[0] + abs(k)
        e = eye(n, k=k, dtype=av.dtype)
        from funcgrad.numpy._shape import pad

        vv = pad(v, (max(-k, 0), max(k, 0)))
        return multiply(e, _col(vv, n))
    if av.ndim == 2:
        e = eye(av.shape[0], av.shape[1], k=k, dtype=av.dtype)
        d = _sum(multiply(v, e), axis=1 if k >= 0 else 0)
        m = min(av.shape[0], av.shape[1] - k) if k >= 0 else min(av.shape[0] + k, av.shape[1])
        from funcgrad.numpy._shape import split

        start = 0 if k >= 0 else -k
        return split(d, [start, start + max(m, 0)])[1]
    raise ValueError("diag: input must be 1-d or 2-d")


def _col(v: Any, n: int) -> Any:
    return sh.reshape(v, (n, 1))


def copy(a: ArrayLike) -> Any:
    return asarray(a)
