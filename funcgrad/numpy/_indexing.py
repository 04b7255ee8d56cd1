"""NumPy indexing (``x[idx]``), ``take`` and ``take_along_axis``.

Basic indices (ints, slices with any step, ``None``, ``...``) become ``slice``/
``rev``/``reshape``; integer-array indices become one ``gather`` of the
indexed axes flattened together (placed as NumPy places them: in front when
the advanced indices are separated, in place otherwise); boolean masks must
be concrete (the result's shape depends on their values) and become integer
indices. Negative indices wrap and out-of-bounds ones clamp, static or traced, as
in JAX (an index into a zero-size axis raises ``IndexError``).

``x.at[idx]`` (``_at.py``) reads its index checks and placement of axes from here.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.errors import NonConcreteBooleanIndexError
from funcgrad.core.interp import Tracer
from funcgrad.core.symbolic import SymDim
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    broadcast_shapes,
    broadcast_to_shape,
    check_arraylike,
    convert,
    fmt,
    here,
    index,
    normalize_axis,
    out,
    prep,
    unsupported,
)
from funcgrad.numpy._core import out as _out
from funcgrad.numpy._ufuncs import add, multiply, remainder, where
from funcgrad.primitives import checks
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh

_I32 = np.dtype("int32")


def _is_int(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_adv(i: Any) -> bool:
    return isinstance(i, (Tracer, jax.Array, np.ndarray))


def _concrete(i: Any) -> bool:
    return isinstance(i, (jax.Array, np.ndarray)) and not isinstance(i, Tracer)


def _normalize(idx: Any, shape: tuple[int, ...]) -> list:
    """Index items with lists made arrays, bool masks made integer arrays and ``...`` expanded."""
    ndim = len(shape)
    if not isinstance(idx, tuple):
        idx = (idx,)
    items: list = []
    for i in idx:
        if isinstance(i, (list, tuple)):  # (a sequence inside the index tuple: an array)
            i = prep(i, "indexing", sequences=True) if i else np.zeros((0,), np.int32)
        if isinstance(i, (bool, np.bool_)):
            raise unsupported("indexing with a Python bool (x[True])")
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got bool{list(i.shape)} (boolean "
                "mask indexing with a traced mask: the result's shape would depend on the "
                "mask's values). Use funcgrad.numpy.where(mask, x, 0), or the size= argument "
                f"of funcgrad.numpy.nonzero, instead.{here()}"
            )
        if _concrete(i) and i.dtype == np.bool_:
            m = np.asarray(i)
            if m.ndim == 0:
                raise unsupported("indexing with a 0-d boolean mask")
            items.append(("mask", m))
            continue
        if isinstance(i, (float, complex)) or (
            _is_adv(i) and not dtypes.is_integer(np.dtype(i.dtype))
        ):  # (JAX's TypeError and words; NumPy raises IndexError)
            dt = np.result_type(type(i)) if isinstance(i, (float, complex)) else i.dtype
            raise TypeError(
                f"Indexer must have integer or boolean type, got indexer with type "
                f"{np.dtype(dt).name} (indexing: only integers, slices, ellipsis, None and "
                f"integer or boolean arrays are valid indices, got {fmt(i)}){here()}"
            )
        if not (i is None or i is Ellipsis or isinstance(i, slice) or _is_int(i) or _is_adv(i)):
            raise IndexError(
                f"indexing: only integers, slices (`:`), ellipsis (`...`), None (`newaxis`) and "
                f"integer or boolean arrays are valid indices, got {i!r}{here()}"
            )
        items.append(i)
    n_ell = sum(1 for i in items if i is Ellipsis)
    if n_ell > 1:
        raise IndexError(f"indexing: an index can only have a single ellipsis ('...'){here()}")
    used = sum(_consumed(i) for i in items)
    if used > ndim:
        raise IndexError(
            f"indexing: too many indices for array: array is {ndim}-dimensional, but {used} "
            f"were indexed{here()}"
        )
    if n_ell:
        k = next(j for j, i in enumerate(items) if i is Ellipsis)  # (arrays: no ==)
        items[k : k + 1] = [slice(None)] * (ndim - used)
    else:
        items.extend([slice(None)] * (ndim - used))
    # masks → integer arrays (checked against the dims they cover)
    res, d = [], 0
    for i in items:
        if isinstance(i, tuple) and i[0] == "mask":
            m = i[1]
            if m.shape != tuple(shape[d : d + m.ndim]):
                raise IndexError(
                    f"indexing: boolean index of shape {m.shape} does not match the indexed "
                    f"dimensions {tuple(shape[d : d + m.ndim])}{here()}"
                )
            res.extend(np.nonzero(m))
            d += m.ndim
            continue
        res.append(i)
        d += _consumed(i)
    return res


def _consumed(i: Any) -> int:
    if i is None or i is Ellipsis:
        return 0
    if isinstance(i, tuple) and i[0] == "mask":
        return i[1].ndim
    return 1


def getitem(x: ArrayLike, idx: Any) -> Any:
    """``x[idx]`` with NumPy semantics (static result shapes)."""
    x = as_array(x, "indexing")
    items = _normalize(idx, aval(x).shape)
    if any(i is None for i in items):
        # insert the new axes first, then index them with full slices
        it = iter(aval(x).shape)
        x = sh.reshape(x, tuple(1 if i is None else next(it) for i in items))
        items = [slice(None) if i is None else i for i in items]
    if checks.index_checks_on():  # (only while checkify traces)
        ints = [(i, d) for d, i in enumerate(items) if _is_adv(i) or _is_int(i)]
        checks.index_check("gather", aval(x).shape, ints, wrap=True)
    if any(_is_adv(i) for i in items):
        return out(_advanced(x, items))
    return out(_basic(x, items))


def _static_slice(s: slice) -> slice:
    def conv(v: Any, what: str) -> Any:
        if v is None:
            return None
        if isinstance(v, Tracer):  # (JAX's IndexError and words)
            raise IndexError(
                f"Slice entries must be static integers. Got a traced slice {what} {v.aval} "
                f"(indexing: use lax.dynamic_slice, take, or x[i] with a traced integer i, "
                f"or mark it static){here()}"
            )
        if type(v) is SymDim:  # (a shape template's symbolic bound: compared, not read)
            return v
        return index(v, f"slice {what}", "indexing")

    return slice(conv(s.start, "start"), conv(s.stop, "stop"), conv(s.step, "step"))


def _basic(x: Any, items: list) -> Any:
    shape = aval(x).shape
    start, limit, strides, out_shape, rev_dims = [], [], [], [], []
    for d, i in enumerate(items):
        n = shape[d]
        if _is_int(i):
            j = int(i)
            if n == 0:
                raise IndexError(
                    f"indexing: index {j} is out of bounds for axis {d} with size {n}{here()}"
                )
            # negative counts from the end; out of range clamps (gather semantics, as
            # jax.numpy does eagerly and under jit)
            j = builtins.min(builtins.max(j + n if j < 0 else j, 0), n - 1)
            start.append(j)
            limit.append(j + 1)
            strides.append(1)
            continue
        s = _static_slice(i)
        if s.step == 0:
            raise ValueError(f"indexing: slice step cannot be zero{here()}")
        lo, hi, st = _slice_indices(s, n)
        cnt = _slice_count(lo, hi, st)
        if st > 0:
            first = lo if cnt else 0
        else:
            rev_dims.append(d)
            first = n - 1 - lo if cnt else 0
        start.append(first)
        limit.append(first + (cnt - 1) * abs(st) + 1 if cnt else first)
        strides.append(abs(st))
        out_shape.append(cnt)
    x = sh.rev(x, tuple(rev_dims))
    x = sh.slice(x, tuple(start), tuple(limit), tuple(strides))
    return sh.reshape(x, tuple(out_shape))


def _index_dtype(n: int) -> np.dtype:
    return _I32 if n < 2**31 else dtypes.canonicalize(np.dtype("int64"))


def _index_array(i: Any, n: int, d: int, dt: np.dtype) -> Any:
    """An index array of dtype ``dt`` for an axis of size ``n``: negatives wrapped, then
    clamped into range (gather semantics, as jax.numpy), static or traced."""
    if _is_int(i) or _concrete(i):
        a = np.asarray(i)
        if a.size and n == 0:
            raise IndexError(
                f"indexing: index {a.flat[0]} is out of bounds for axis {d} with size {n}{here()}"
            )
        return np.asarray(np.clip(np.where(a < 0, a + n, a), 0, builtins.max(n - 1, 0)), dt)
    i = convert(i, dt)
    zero = np.asarray(0, dt)
    i = ew.select_n(ew.lt(i, zero), i, ew.add(i, np.asarray(n, dt)))
    return ew.min(ew.max(i, zero), np.asarray(max(n - 1, 0), dt))


def _advanced(x: Any, items: list) -> Any:

    basic = [slice(None) if (_is_adv(i) or _is_int(i)) else i for i in items]
    x = _basic(x, basic)
    shape = aval(x).shape
    adv_pos = [d for d, i in enumerate(items) if _is_adv(i) or _is_int(i)]
    rest = [d for d in range(len(shape)) if d not in adv_pos]
    sizes = [shape[d] for d in adv_pos]
    flat_n = int(np.prod(sizes, dtype=np.int64))
    dt = _index_dtype(flat_n)
    idxs = [_index_array(items[d], shape[d], d, dt) for d in adv_pos]

    bshape = broadcast_shapes("indexing", *idxs)
    if any(s == 0 for s in sizes) and int(np.prod(bshape, dtype=np.int64)):
        raise IndexError(f"indexing: cannot index into a zero-size axis of {fmt(x)}{here()}")
    x = sh.transpose(x, tuple(adv_pos + rest))
    x = sh.reshape(x, (flat_n, *[shape[d] for d in rest]))
    lin: Any = None
    stride = 1
    for i, n in reversed(list(zip(idxs, sizes))):
        term = i if stride == 1 else multiply(i, np.asarray(stride, dt))
        lin = term if lin is None else add(lin, term)
        stride *= n
    lin = broadcast_to_shape(as_array(lin, "indexing"), bshape, "indexing")
    if flat_n == 0:
        res = sh.full((*bshape, *[shape[d] for d in rest]), 0, aval(x).dtype)
    else:
        res = ix.gather(x, lin, axis=0)
    contiguous = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    if contiguous and adv_pos[0] != 0:
        nb, k = len(bshape), adv_pos[0]
        order = list(range(nb, nb + k)) + list(range(nb)) + list(range(nb + k, nb + len(rest)))
        res = sh.transpose(res, tuple(order))
    return res


# --------------------------------------------------------------------------- take


def _fill_value(dt: np.dtype) -> Any:
    if dtypes.is_inexact(dt):
        return np.nan
    if dt == np.bool_:
        return True
    info = np.iinfo(dt)
    return info.min if dt.kind == "i" else info.max


def take(
    a: ArrayLike,
    indices: ArrayLike,
    axis: int | None = None,
    out: Any = None,
    mode: str | None = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: Any = None,
) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when ``None``).

    ``mode``: ``"fill"`` (default: negative indices count from the end, out-of-range ones
    give ``fill_value``, NaN for floats), ``"clip"`` (clamp into range) or ``"wrap"``.
    """

    check_arraylike("take", a, indices)
    if out is not None:
        raise unsupported("take(..., out=...)")
    a = as_array(a, "take")
    if axis is None:
        a, axis = sh.reshape(a, (aval(a).size,)), 0
    av = aval(a)
    ax = normalize_axis(axis, av.ndim, "take")
    n = av.shape[ax]
    i = as_array(indices, "take")
    if not dtypes.is_integer(aval(i).dtype):
        raise TypeError(f"take: indices must be integers, got {fmt(i)}{here()}")
    dt = _index_dtype(n)
    i = convert(i, dt)
    mode = mode or "fill"
    if mode == "wrap":
        return _out(ix.gather(a, remainder(i, max(n, 1)), axis=ax))
    if mode == "clip":  # clamped into [0, n - 1]; negative indices are not wrapped (as jnp)
        return _out(ix.gather(a, i, axis=ax))
    zero = np.asarray(0, dt)
    wrapped = ew.select_n(ew.lt(i, zero), i, ew.add(i, np.asarray(n, dt)))
    if mode not in ("fill", "promise_in_bounds"):
        raise unsupported(f"take with mode={mode!r}")
    g = (
        ix.gather(a, wrapped, axis=ax)
        if n
        else sh.full(_take_shape(av.shape, aval(i).shape, ax), 0, av.dtype)
    )
    if mode == "promise_in_bounds":
        return _out(g)
    ok = ew.bitwise_and(ew.ge(wrapped, zero), ew.lt(wrapped, np.asarray(n, dt)))
    ishape = aval(i).shape
    ok = sh.broadcast_in_dim(ok, aval(g).shape, tuple(range(ax, ax + len(ishape))))
    fv = _fill_value(av.dtype) if fill_value is None else fill_value
    return where(ok, g, np.asarray(fv, av.dtype))


def _take_shape(shape: tuple, ishape: tuple, ax: int) -> tuple:
    return (*shape[:ax], *ishape, *shape[ax + 1 :])


def _one_hot_take(a: Any, i: Any, ax: int) -> Any:
    """``take_along_axis`` as JAX's ``mode="one_hot"``: each index a one-hot row over
    the axis (none for an index out of range: 0), contracted with ``arr`` (a product
    and a sum, so a NaN or inf elsewhere on the axis shows through, as in JAX)."""
    n = aval(a).shape[ax]
    ishape = aval(i).shape
    hot = ew.eq(
        sh.broadcast_in_dim(i, (*ishape, n), tuple(range(len(ishape)))),
        sh.iota(aval(i).dtype, (*ishape, n), len(ishape)),
    )
    moved = _expand_at(sh.transpose(a, _to_last(aval(a).ndim, ax)), ax)
    shape = np.broadcast_shapes(aval(moved).shape, (*ishape, n))
    prod = ew.mul(
        sh.broadcast_in_dim(convert(hot, aval(a).dtype), shape, tuple(range(len(shape)))),
        sh.broadcast_in_dim(moved, shape, tuple(range(len(shape)))),
    )
    return rd.reduce_sum(prod, (len(shape) - 1,))


def _to_last(nd: int, ax: int) -> tuple[int, ...]:
    return (*(d for d in range(nd) if d != ax), ax)


def _expand_at(x: Any, ax: int) -> Any:
    shape = aval(x).shape
    return sh.reshape(x, (*shape[:ax], 1, *shape[ax:]))


def take_along_axis(
    arr: ArrayLike,
    indices: ArrayLike,
    axis: int | None = -1,
    mode: str | None = None,
    fill_value: Any = None,
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    wrap_negative_indices: bool | None = None,
) -> Any:
    """``arr`` gathered along ``axis`` (the last by default, as JAX 0.10.2 and NumPy 2)
    with ``indices`` of the same rank (other axes broadcast).

    Negative indices count from the end when ``wrap_negative_indices`` (by default unless
    ``mode="promise_in_bounds"``, as JAX); then ``mode``
    ``"fill"`` (default) gives ``fill_value`` (NaN for floats) out of range, ``"clip"``
    clamps into range and ``"promise_in_bounds"`` trusts the indices (clamped, as a
    gather)."""
    check_arraylike("take_along_axis", arr, indices)
    a = as_array(arr, "take_along_axis")
    i = as_array(indices, "take_along_axis")
    if axis is None:
        a = sh.reshape(a, (aval(a).size,))
        i = sh.reshape(i, (aval(i).size,))
        axis = 0
    shape = aval(a).shape
    nd = len(shape)
    if aval(i).ndim != nd:
        raise ValueError(
            f"take_along_axis: indices and arr must have the same number of dimensions, got "
            f"{fmt(i, a)}{here()}"
        )
    if not dtypes.is_integer(aval(i).dtype):
        raise TypeError(
            f"take_along_axis indices must be of integer type, got {aval(i).dtype} "
            f"(indices {fmt(i)}){here()}"
        )
    mode = mode or "fill"
    if mode not in ("fill", "clip", "promise_in_bounds", "one_hot"):
        raise ValueError(
            f"take_along_axis: mode must be 'fill', 'clip', 'promise_in_bounds' or "
            f"'one_hot', got {mode!r}{here()}"
        )
    ax = normalize_axis(axis, nd, "take_along_axis")
    n = shape[ax]
    dt = _index_dtype(n)
    i = convert(i, dt)
    zero, size = np.asarray(0, dt), np.asarray(n, dt)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:
        i = ew.select_n(ew.lt(i, zero), i, ew.add(i, size))
    if mode == "one_hot":
        return out(_one_hot_take(a, i, ax))
    ok = ew.bitwise_and(ew.ge(i, zero), ew.lt(i, size)) if mode == "fill" else None
    i = ew.min(ew.max(i, zero), np.asarray(max(n - 1, 0), dt))
    items: list = []
    for d in range(nd):
        if d == ax:
            items.append(i)
        else:
            s = [1] * nd
            s[d] = shape[d]
            items.append(np.arange(shape[d], dtype=np.int32).reshape(s))
    g = getitem(a, tuple(items))
    if ok is None:
        return g
    ok = broadcast_to_shape(ok, aval(g).shape, "take_along_axis")
    fv = _fill_value(aval(a).dtype) if fill_value is None else fill_value
    fill = np.asarray(fv, aval(a).dtype)
    # a weakly typed operand stays weak: the fill joins it as a Python scalar
    return where(ok, g, fill.item() if aval(a).weak_type else fill)


def _clamp_index(i: Any, n: Any, low: int, high: Any) -> Any:
    """A slice bound ``i`` on an axis of size ``n``: counted from the end when negative,
    then clamped to ``[low, high]`` (as ``slice.indices`` does)."""
    if i < 0:
        i = i + n
        return low if i < low else i
    return high if i > high else i


def _slice_indices(s: slice, n: Any) -> tuple[Any, Any, int]:
    """``s.indices(n)`` in Python, so that a symbolic size ``n`` is compared, not read
    as a plain int (:mod:`funcgrad.core.symbolic`)."""
    if type(n) is int and type(s.start) is not SymDim and type(s.stop) is not SymDim:
        return s.indices(n)
    st = 1 if s.step is None else operator.index(s.step)
    start, stop = _bound(s.start), _bound(s.stop)
    if st > 0:
        lo = 0 if start is None else _clamp_index(start, n, 0, n)
        hi = n if stop is None else _clamp_index(stop, n, 0, n)
    else:
        lo = n - 1 if start is None else _clamp_index(start, n, -1, n - 1)
        hi = -1 if stop is None else _clamp_index(stop, n, -1, n - 1)
    return lo, hi, st


def _bound(v: Any) -> Any:
    return v if v is None or type(v) is SymDim else operator.index(v)


def _slice_count(lo: Any, hi: Any, st: int) -> Any:
    """``len(range(lo, hi, st))`` without reading symbolic bounds as plain ints."""
    if type(lo) is int and type(hi) is int:
        return len(range(lo, hi, st))
    if st > 0:
        return (hi - lo + st - 1) // st if hi > lo else 0
    return (lo - hi - st - 1) // (-st) if lo > hi else 0
