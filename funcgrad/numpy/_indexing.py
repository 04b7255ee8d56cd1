"""NumPy indexing (``x[idx]``) and JAX-style indexed updates (``x.at[idx].add(v)``).

Basic indices (ints, slices, ``None``, ``...``) become ``slice``/``rev``/
``reshape``; integer-array indices become one ``gather`` on the indexed axes
flattened together; boolean masks must be concrete (their result shape
depends on their values) and become integer indices.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.errors import ConcretizationError, user_frame, where
from funcgrad.core.interp import Tracer
from funcgrad.numpy._core import aval, broadcast_shapes, broadcast_to_shape, cast, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh


def _is_int_scalar(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_array_index(i: Any) -> bool:
    return isinstance(i, (Tracer, jax.Array, np.ndarray, list)) and not _is_int_scalar(i)


def _normalize(idx: Any, ndim: int) -> list:
    if not isinstance(idx, tuple):
        idx = (idx,)
    out: list = []
    for i in idx:
        if isinstance(i, list):
            i = np.asarray(i)
        if isinstance(i, (np.ndarray, jax.Array)) and i.dtype == np.bool_:
            i = np.asarray(i)
            out.extend(np.nonzero(i))
            continue
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise ConcretizationError(
                f"boolean mask indexing with a traced mask of shape {i.shape}: the result's "
                "shape would depend on the mask's values. Use funcgrad.numpy.where(mask, x, 0) "
                f"instead.{where(user_frame())}"
            )
        if isinstance(i, (bool, np.bool_)):
            raise NotImplementedError("indexing with a Python bool")
        if isinstance(i, (Tracer, jax.Array, np.ndarray)) and not dtypes.is_integer(
            np.dtype(i.dtype)
        ):
            raise IndexError(f"arrays used as indices must be of integer type, got {i.dtype}")
        out.append(i)
    n_ell = sum(1 for i in out if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in out if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed"
        )
    if n_ell:
        k = out.index(Ellipsis)
        out[k : k + 1] = [slice(None)] * (ndim - used)
    else:
        out.extend([slice(None)] * (ndim - used))
    return out


def getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` with NumPy semantics (static shapes)."""
    x = prep(x, "getitem")
    if type(x) in (bool, int, float, complex):
        x = np.asarray(x, dtypes.python_scalar_dtype(x))
    shape = aval(x).shape
    items = _normalize(idx, len(shape))
    if any(_is_array_index(i) for i in items):
        return _advanced(x, items)
    return _basic(x, items)


def _basic(x: Any, items: list) -> Any:
    shape = aval(x).shape
    start, limit, strides, out_shape, rev_dims = [], [], [], [], []
    d = 0
    for i in items:
        if i is None:
            out_shape.append(1)
            continue
        n = shape[d]
        if _is_int_scalar(i):
            j = int(i)
            if not -n <= j < n:
                raise IndexError(
                    f"index {j} is out of bounds for axis {d} with size {n}{where(user_frame())}"
                )
            j %= n
            start.append(j)
            limit.append(j + 1)
            strides.append(1)
        elif isinstance(i, slice):
            lo, hi, st = i.indices(n)
            if st > 0:
                cnt = max(0, (hi - lo + st - 1) // st)
                start.append(lo)
                limit.append(lo + (cnt - 1) * st + 1 if cnt else lo)
                strides.append(st)
            else:
                cnt = max(0, (lo - hi - st - 1) // (-st))
                # take lo, lo+st, ... : reverse the covered range then stride
                first = lo + (cnt - 1) * st if cnt else lo
                rev_dims.append(d)
                start.append(n - 1 - lo)
                limit.append(n - 1 - first + 1 if cnt else n - 1 - lo)
                strides.append(-st)
            out_shape.append(cnt)
        else:
            raise IndexError(f"unsupported index {i!r}")
        d += 1
    if rev_dims:
        x = sh.rev(x, tuple(rev_dims))
    if start != [0] * len(shape) or limit != list(shape) or any(s != 1 for s in strides):
        x = sh.slice(x, tuple(start), tuple(limit), tuple(strides))
    if tuple(out_shape) != aval(x).shape:
        x = sh.reshape(x, tuple(out_shape))
    return x


def _index_array(i: Any, n: int) -> Any:
    """An int32 index array with negative indices wrapped."""
    if _is_int_scalar(i):
        j = int(i)
        if not -n <= j < n:
            raise IndexError(f"index {j} is out of bounds for size {n}")
        return np.asarray(j % n, np.int32)
    if isinstance(i, (np.ndarray, jax.Array)) and not isinstance(i, Tracer):
        a = np.asarray(i)
        if a.size and (a.max() >= n or a.min() < -n):
            raise IndexError(f"index {a.max() if a.max() >= n else a.min()} is out of bounds "
                             f"for axis with size {n}")
        return np.asarray(np.where(a < 0, a + n, a), np.int32)
    i = cast(i, np.dtype("int32"))
    zero = np.asarray(0, np.int32)
    return ew.select_n(ew.lt(i, zero), i, ew.add(i, np.asarray(n, np.int32)))


def _advanced(x: Any, items: list) -> Any:
    if any(i is None for i in items):
        raise NotImplementedError("mixing None (newaxis) with integer-array indexing")
    shape = aval(x).shape
    # basic slices first, keeping advanced axes whole
    basic = [slice(None) if (_is_array_index(i) or _is_int_scalar(i)) else i for i in items]
    x = _basic(x, basic)
    shape = aval(x).shape
    adv_pos = [d for d, i in enumerate(items) if _is_array_index(i) or _is_int_scalar(i)]
    idxs = [_index_array(items[d], shape[d]) for d in adv_pos]
    bshape = broadcast_shapes("indexing", *[aval(i).shape for i in idxs])
    contiguous = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    rest = [d for d in range(len(shape)) if d not in adv_pos]
    perm = adv_pos + rest
    if perm != list(range(len(shape))):
        x = sh.transpose(x, tuple(perm))
    sizes = [shape[d] for d in adv_pos]
    flat_n = int(np.prod(sizes, dtype=np.int64))
    x = sh.reshape(x, (flat_n, *[shape[d] for d in rest]))
    lin: Any = None
    stride = 1
    for i, n in reversed(list(zip(idxs, sizes))):
        term = i if stride == 1 else _mul_idx(i, stride)
        lin = term if lin is None else _add_idx(lin, term)
        stride *= n
    if isinstance(lin, np.ndarray):
        lin = np.broadcast_to(lin, bshape).astype(np.int32)
    elif aval(lin).shape != bshape:
        lin = broadcast_to_shape(lin, bshape)
    out = sh.gather(x, lin, axis=0)
    if contiguous and adv_pos[0] != 0:
        nb = len(bshape)
        k = adv_pos[0]
        out_nd = nb + len(rest)
        order = list(range(nb, nb + k)) + list(range(nb)) + list(range(nb + k, out_nd))
        out = sh.transpose(out, tuple(order))
    return out


def _mul_idx(i: Any, k: int) -> Any:
    if isinstance(i, np.ndarray):
        return i * np.int32(k)
    return ew.mul(i, np.asarray(k, np.int32))


def _add_idx(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a + b
    shp = broadcast_shapes("indexing", aval(a).shape, aval(b).shape)
    a = broadcast_to_shape(a, shp) if aval(a).shape != shp and aval(a).shape != () else a
    b = broadcast_to_shape(b, shp) if aval(b).shape != shp and aval(b).shape != () else b
    return ew.add(a, b)


# --------------------------------------------------------------------------- .at[]


def _positions(shape: tuple[int, ...], idx: Any) -> Any:
    """Flat positions selected by ``idx`` in an array of ``shape``."""
    size = int(np.prod(shape, dtype=np.int64))
    pos = sh.reshape(sh.iota(dtype=np.dtype("int32"), shape=(size,), dimension=0), shape) if (
        any(isinstance(i, Tracer) for i in (idx if isinstance(idx, tuple) else (idx,)))
    ) else np.arange(size, dtype=np.int32).reshape(shape)
    if isinstance(pos, np.ndarray):
        try:
            return np.asarray(pos[_np_index(idx)], np.int32)
        except (IndexError, TypeError):
            pass
    return getitem(pos, idx)


def _np_index(idx: Any) -> Any:
    def conv(i: Any) -> Any:
        if isinstance(i, jax.Array):
            return np.asarray(i)
        return i

    return tuple(conv(i) for i in idx) if isinstance(idx, tuple) else conv(idx)


class _IndexUpdateRef:
    def __init__(self, x: Any, idx: Any) -> None:
        self.x, self.idx = x, idx

    def get(self) -> Any:
        return getitem(self.x, self.idx)

    def _scatter(self, values: Any, mode: str) -> Any:
        x = prep(self.x, "at")
        av = aval(x)
        pos = _positions(av.shape, self.idx)
        pshape = aval(pos).shape
        v = prep(values, "at")
        v = cast(v, av.dtype) if type(v) not in (bool, int, float, complex) else np.asarray(v, av.dtype)
        v = broadcast_to_shape(v, pshape) if aval(v).shape != pshape else v
        flat = sh.reshape(x, (av.size,))
        if mode == "add":
            out = sh.scatter_add(flat, pos, v, axis=0)
        elif mode == "set":
            ones = sh.full(pshape, 1, av.dtype if av.dtype.kind != "b" else np.dtype("int32"))
            zeros_flat = sh.full((av.size,), 0, aval(ones).dtype)
            hit = ew.gt(sh.scatter_add(zeros_flat, pos, ones, axis=0), np.asarray(0, aval(ones).dtype))
            if av.dtype.kind == "b":
                vi = ew.convert_element_type(v, np.dtype("int32"))
                z = sh.full((av.size,), 0, np.dtype("int32"))
                new = ew.ne(sh.scatter_add(z, pos, vi, axis=0), np.asarray(0, np.int32))
            else:
                new = sh.scatter_add(sh.full((av.size,), 0, av.dtype), pos, v, axis=0)
            out = ew.select_n(hit, flat, new)
        elif mode in ("multiply", "min", "max"):
            cur = sh.gather(flat, pos if not isinstance(pos, np.ndarray) else pos, axis=0)
            op = {"multiply": ew.mul, "min": ew.min, "max": ew.max}[mode]
            return _IndexUpdateRef(self.x, self.idx).set(op(cur, v))
        else:  # pragma: no cover
            raise ValueError(mode)
        return sh.reshape(out, av.shape)

    def set(self, values: Any) -> Any:
        """``x`` with ``x[idx] = values`` (functional)."""
        return self._scatter(values, "set")

    def add(self, values: Any) -> Any:
        """``x`` with ``x[idx] += values``; repeated indices accumulate."""
        return self._scatter(values, "add")

    def multiply(self, values: Any) -> Any:
        return self._scatter(values, "multiply")

    def min(self, values: Any) -> Any:  # noqa: A003
        return self._scatter(values, "min")

    def max(self, values: Any) -> Any:  # noqa: A003
        return self._scatter(values, "max")


class _At:
    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, idx: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.x, idx)


def at(x: Any) -> _At:
    return _At(x)


def take(a: Any, indices: Any, axis: int | None = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when ``None``)."""
    from funcgrad.numpy._shape import ravel

    a = prep(a, "take")
    if axis is None:
        a, axis = ravel(a), 0
    nd = aval(a).ndim
    ax = axis % nd
    idx = _index_array(prep(indices, "take"), aval(a).shape[ax])
    return sh.gather(a, idx, axis=ax)


def take_along_axis(arr: Any, indices: Any, axis: int) -> Any:
    """``arr`` gathered with ``indices`` of the same rank along ``axis``."""
    arr = prep(arr, "take_along_axis")
    indices = prep(indices, "take_along_axis")
    shape = aval(arr).shape
    nd = len(shape)
    ax = axis % nd
    ishape = aval(indices).shape
    items: list = []
    for d in range(nd):
        if d == ax:
            items.append(indices)
        else:
            s = [1] * nd
            s[d] = shape[d]
            items.append(np.arange(shape[d], dtype=np.int32).reshape(s))
    del ishape
    return getitem(arr, tuple(items))
