"""JAX-style indexed updates of tracers: ``x.at[idx].set/add/multiply/min/max/apply/get``.

The updates work on the flat positions of ``x`` that ``idx`` selects (a NumPy array
when ``idx`` is concrete, traced otherwise), so every update kind shares one index
computation with ``x[idx]``'s checks and placement of axes. Out-of-bounds indices follow
``jax.numpy``'s ``mode=``: updates are dropped by default (``"drop"``/``"fill"``/
``"promise_in_bounds"``) or clamped (``"clip"``); ``get`` clamps by default and fills
with ``mode="fill"``. Negative indices count from the end unless
``wrap_negative_indices=False``, when they are out of bounds. A dropped update has a
zero derivative, as it has in JAX.

Out-of-bounds integer or array components are sent to a sentinel: each axis they index
is padded with one extra slot whose position is ``x.size``, so an element of ``x[idx]``
is out of bounds exactly when its position is the sentinel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from funcgrad.control_flow import fori_loop
from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    broadcast_to_shape,
    convert,
    fmt,
    here,
    out,
    prep,
    unsupported,
)
from funcgrad.numpy._indexing import (
    _concrete,
    _fill_value,
    _index_dtype,
    _is_adv,
    _is_int,
    _normalize,
    getitem,
)
from funcgrad.numpy._ufuncs import negative, power
from funcgrad.primitives import checks
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh
from funcgrad.primitives.scatter import GatherScatterMode
from funcgrad.primitives.sharding import typed_as
from funcgrad.sharding import auto_axes

_I32 = np.dtype("int32")


def _update_mode(mode: Any) -> str:
    """``"clip"`` or ``"drop"`` for an update's ``mode=`` (JAX's default drops)."""
    if mode is None:
        return "drop"
    return "clip" if GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP else "drop"


def _get_mode(mode: Any) -> str:
    """``"clip"`` or ``"fill"`` for ``get``'s ``mode=`` (JAX's default clamps)."""
    if mode is None:
        return "clip"
    m = GatherScatterMode.from_any(mode)
    return "fill" if m is GatherScatterMode.FILL_OR_DROP else "clip"


def _bound(i: Any, n: int, drop: bool, wrap: bool, dt: np.dtype) -> Any:
    """An integer index component of an axis of size ``n`` brought into ``[0, n)``:
    negatives wrapped if ``wrap``, then out-of-range entries sent to ``n`` (``drop``)
    or clamped."""
    if _is_int(i) or _concrete(i):
        a = np.asarray(i).astype(np.int64)
        if wrap:
            a = np.where(a < 0, a + n, a)
        a = np.where((a >= 0) & (a < n), a, n) if drop else np.clip(a, 0, max(n - 1, 0))
        return int(a) if _is_int(i) else a.astype(dt)
    i = convert(i, dt)
    zero, size = np.asarray(0, dt), np.asarray(n, dt)
    if wrap:
        i = ew.select_n(ew.lt(i, zero), i, ew.add(i, size))
    if drop:
        ok = ew.bitwise_and(ew.ge(i, zero), ew.lt(i, size))
        return ew.select_n(ok, sh.full(aval(i).shape, n, dt), i)
    return ew.min(ew.max(i, zero), np.asarray(max(n - 1, 0), dt))


def _locate(
    shape: tuple[int, ...], idx: Any, *, drop: bool, wrap: bool, full: tuple | None = None
) -> tuple[Any, Any]:
    """Flat positions selected by ``idx`` (an int array of the shape of ``x[idx]``) and
    where they are in bounds (``None`` when all are; a bool array or tracer otherwise).
    ``full``: the whole operand's shape where ``shape`` is its leading dimensions (for
    the messages of checkify's index checks)."""
    size = int(np.prod(shape, dtype=np.int64))
    dt = _index_dtype(size + 1)
    items = _normalize(idx, shape)
    if checks.index_checks_on():  # (only while checkify traces)
        real = [i for i in items if i is not None]
        ints = [(i, d) for d, i in enumerate(real) if _is_int(i) or _is_adv(i)]
        checks.index_check("scatter", full or shape, ints, wrap=wrap)
    padded, new, d = list(shape), [], 0
    for i in items:
        if i is None:
            new.append(None)
            continue
        if _is_int(i) or _is_adv(i):
            i = _bound(i, shape[d], drop, wrap, dt)
            padded[d] = shape[d] + int(drop)
        new.append(i)
        d += 1
    traced = any(isinstance(i, Tracer) for i in new)
    if traced and size:
        pos = _traced_positions(shape, tuple(padded), new, dt)
    elif traced:
        pos = getitem(_position_table(shape, tuple(padded), dt), tuple(new))
    else:
        table = np.full(padded, size, dt)
        table[tuple(slice(0, n) for n in shape)] = np.arange(size, dtype=dt).reshape(shape)
        pos = np.asarray(table[tuple(new)])
    if not drop or tuple(padded) == tuple(shape):
        return pos, None
    if isinstance(pos, np.ndarray):
        ok = np.asarray(pos < size)
        return pos, (None if ok.all() else ok)
    return pos, ew.lt(pos, np.asarray(size, dt))


def _traced_positions(shape: tuple[int, ...], padded: tuple[int, ...], new: list, dt: np.dtype):
    """(traced) the flat positions ``getitem(_position_table(shape, padded), new)`` would
    read, computed from the index components (``stride * i`` summed, the sentinel
    ``size`` where a component is in a padded slot) beside a static table of the sliced
    dimensions' positions, laid out as ``getitem`` lays out advanced indexing. No gather
    of a constant table at traced indices: under ``vmap`` over a batch split over a
    mesh's explicit axes such a gather has no type JAX can infer, elementwise work does."""
    size = int(np.prod(shape, dtype=np.int64))
    strides = [int(np.prod(shape[d + 1 :], dtype=np.int64)) for d in range(len(shape))]
    dims, d = [], 0  # (item, padded size, stride, size) per result-side dimension
    for i in new:
        if i is None:
            dims.append((slice(None), 1, 0, 1))
            continue
        dims.append((i, padded[d], strides[d], shape[d]))
        d += 1
    adv = [k for k, dim in enumerate(dims) if _is_int(dim[0]) or _is_adv(dim[0])]
    rest = [k for k in range(len(dims)) if k not in adv]
    bshape = np.broadcast_shapes(*(aval(dims[k][0]).shape for k in adv))
    lin: Any = None
    oob: Any = None
    for k in adv:
        i, n, st, real = dims[k]
        i = broadcast_to_shape(as_array(convert(i, dt), "at[]"), bshape, "at[]")
        term = ew.mul(i, np.asarray(st, dt))
        lin = term if lin is None else ew.add(lin, term)
        if n != real:
            hit = ew.ge(i, np.asarray(real, dt))
            oob = hit if oob is None else ew.bitwise_or(oob, hit)
    coords = [np.arange(dims[k][1], dtype=np.int64)[dims[k][0]] * dims[k][2] for k in rest]
    table = np.zeros([len(c) for c in coords], np.int64)
    for j, c in enumerate(coords):
        table = table + c.reshape([-1 if q == j else 1 for q in range(len(coords))])
    full = (*bshape, *table.shape)
    nb = len(bshape)
    pos = ew.add(
        sh.broadcast_in_dim(lin, full, tuple(range(nb))),
        sh.broadcast_in_dim(table.astype(dt), full, tuple(range(nb, len(full)))),
    )
    if oob is not None:
        oob = sh.broadcast_in_dim(oob, full, tuple(range(nb)))
        pos = ew.select_n(oob, pos, sh.full(full, size, dt))
    if adv == list(range(adv[0], adv[0] + len(adv))) and adv[0] != 0:
        k = adv[0]
        order = [*range(nb, nb + k), *range(nb), *range(nb + k, len(full))]
        pos = sh.transpose(pos, tuple(order))
    return pos


def _position_table(shape: tuple[int, ...], padded: tuple[int, ...], dt: np.dtype) -> Any:
    """(traced) ``arange(size).reshape(shape)`` padded to ``padded`` with ``size``."""
    size = int(np.prod(shape, dtype=np.int64))
    if padded == shape:
        return sh.reshape(sh.iota(dt, (size,), 0), shape)
    lin: Any = sh.full(padded, 0, dt)
    inside: Any = sh.full(padded, True, np.dtype(bool))
    stride = 1
    for d in reversed(range(len(shape))):
        io = sh.iota(dt, padded, d)
        lin = ew.add(lin, ew.mul(io, np.asarray(stride, dt)))
        inside = ew.bitwise_and(inside, ew.lt(io, np.asarray(shape[d], dt)))
        stride *= shape[d]
    return ew.select_n(inside, sh.full(padded, size, dt), lin)


def _full_slice(i: Any) -> bool:
    return isinstance(i, slice) and i.start is None and i.stop is None and i.step in (None, 1)


def _split_window(shape: tuple[int, ...], idx: Any) -> tuple[tuple, tuple, tuple]:
    """The index items of ``x.at[idx]`` split into those of the leading dimensions and
    the trailing full slices (``x.at[i]`` of a matrix: row ``i``), with the leading
    dimensions' shape and the trailing window's: updates then move whole windows (one
    index per row, not per element), and a window dimension split over a mesh's
    explicit axes stays split (flattening it into positions has no type JAX can infer).
    At least one leading dimension stays; a window with no element is not split off."""
    items = _normalize(idx, shape)
    t = 0
    while t < len(shape) - 1 and _full_slice(items[len(items) - 1 - t]):
        t += 1
    win = tuple(shape[len(shape) - t :])
    if 0 in win or 0 in shape[: len(shape) - t]:
        return tuple(items), shape, ()
    return tuple(items[: len(items) - t]), shape[: len(shape) - t], win


def _zeros_as(flat: Any, dtype: np.dtype) -> Any:
    """Zeros of ``flat``'s shape and type (split as it is over explicit axes: a scatter of
    split windows into unsplit zeros has no type JAX can infer), the base a ``set``
    scatter-adds its values into: ``-0.0`` for inexact types (the exact identity of ``+``:
    ``0.0 + -0.0`` is ``0.0``, so ``x.at[i].set(-0.0)`` lost its sign)."""
    return typed_as(sh.full(aval(flat).shape, _zero(dtype), dtype), aval(flat).sharding)


def _zero(dtype: np.dtype) -> Any:
    """The additive identity of ``dtype`` that keeps signs: ``-0.0`` (both parts of a
    complex one) if inexact, else 0."""
    if not dtypes.is_inexact(dtype):
        return 0
    return complex(-0.0, -0.0) if np.dtype(dtype).kind == "c" else -0.0


def _rows(a: Any, win: tuple[int, ...]) -> Any:
    """``a`` (one entry per row) broadcast over the window ``win`` (static stays static)."""
    if not win:
        return a
    if isinstance(a, np.ndarray):
        return np.broadcast_to(a.reshape(a.shape + (1,) * len(win)), a.shape + win)
    return sh.broadcast_in_dim(a, (*aval(a).shape, *win), tuple(range(aval(a).ndim)))


class _IndexUpdateRef:
    """``x.at[idx]``: functional updates of the elements ``x[idx]``."""

    def __init__(self, x: Any, idx: Any) -> None:
        self.x, self.idx = x, idx

    def _placed(self, out_sharding: Any, run: Callable, values: Any = None) -> Any:
        """JAX's ``out_sharding``: ``run(ref, values)`` with the mesh's axes automatic (a
        gather or scatter over split dimensions has no type JAX can infer), the result
        placed by ``out_sharding``."""
        idx = self.idx
        items = idx if isinstance(idx, tuple) else (idx,)
        traced = [isinstance(i, (Tracer, jax.Array)) for i in items]

        def region(x: Any, v: Any, arrays: list) -> Any:
            # (traced index arrays enter the region as operands: their types are
            # converted to its mesh with the operand's, as JAX's auto_axes takes them)
            it = iter(arrays)
            new = tuple(next(it) if t else i for i, t in zip(items, traced))
            return run(_IndexUpdateRef(x, new if isinstance(idx, tuple) else new[0]), v)

        arrays = [i for i, t in zip(items, traced) if t]
        return auto_axes(region, out_sharding=out_sharding)(self.x, values, arrays)

    def get(
        self,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        fill_value: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x[idx]``; out-of-bounds indices clamped, or filled with ``fill_value`` for
        ``mode="fill"`` (NaN, the most negative integer, the largest unsigned, True)."""
        if out_sharding is not None:
            return self._placed(
                out_sharding,
                lambda r, _: r.get(
                    mode=mode, fill_value=fill_value, wrap_negative_indices=wrap_negative_indices
                ),
            )
        m = _get_mode(mode)
        if m == "clip" and wrap_negative_indices:
            return getitem(self.x, self.idx)
        x = as_array(self.x, "at[].get")
        av = aval(x)
        items, lead, win = _split_window(av.shape, self.idx)
        pos, ok = _locate(lead, items, drop=m == "fill", wrap=wrap_negative_indices, full=av.shape)
        n = int(np.prod(lead, dtype=np.int64))
        if av.size == 0:
            res = sh.full((*aval(pos).shape, *win), 0, av.dtype)
        else:
            flat = sh.reshape(x, (n, *win))
            safe = np.minimum(pos, n - 1) if isinstance(pos, np.ndarray) else pos
            res = ix.gather(flat, safe, axis=0)  # (a traced sentinel is clamped by gather)
        if ok is not None:
            fv = _fill_value(av.dtype) if fill_value is None else fill_value
            res = ew.select_n(_rows(ok, win), sh.full(aval(res).shape, fv, av.dtype), res)
        return out(convert(res, av.dtype, av.weak_type))

    def _prepare(
        self, values: Any, name: str, mode: Any, wrap: bool, windows: bool = True
    ) -> tuple:
        """The operand ``x``, its aval, ``x`` as ``flat`` rows of the trailing window
        ``win`` (single elements unless ``windows``), the ``k`` rows' positions ``pos``,
        the values as ``k`` rows, and where the rows are in bounds (``ok``, or ``None``)."""
        x = as_array(self.x, f"at[].{name}")
        av = aval(x)
        if windows:
            items, lead, win = _split_window(av.shape, self.idx)
        else:
            items, lead, win = self.idx, av.shape, ()
        drop = _update_mode(mode) == "drop"
        pos, ok = _locate(lead, items, drop=drop, wrap=wrap, full=av.shape)
        pshape = (*aval(pos).shape, *win)
        v = prep(values, f"at[].{name}", sequences=True)
        vdt = np.dtype("int32") if av.dtype == np.bool_ and name in ("add", "set") else av.dtype
        v = as_array(convert(v, vdt), f"at[].{name}")
        try:
            np.broadcast_shapes(aval(v).shape, pshape)
            if aval(v).ndim > len(pshape):
                raise ValueError
        except ValueError:
            raise ValueError(
                f"at[].{name}: values {fmt(v)} cannot be broadcast to the indexed shape {pshape} "
                f"of {fmt(x)}{here()}"
            ) from None
        v = broadcast_to_shape(v, pshape, f"at[].{name}")
        k = int(np.prod(aval(pos).shape, dtype=np.int64))
        flat = sh.reshape(x, (int(np.prod(lead, dtype=np.int64)), *win))
        pos = pos.reshape(k) if isinstance(pos, np.ndarray) else sh.reshape(pos, (k,))
        v = sh.reshape(v, (k, *win))
        if isinstance(ok, np.ndarray):  # static: the dropped updates leave
            keep = np.nonzero(ok.reshape(k))[0].astype(pos.dtype)
            v, pos, k, ok = ix.gather(v, keep, axis=0), pos[keep], keep.size, None
        elif ok is not None:
            ok = sh.reshape(ok, (k,))
        return x, av, flat, pos, v, k, ok, win

    def _finish(self, res: Any, av: Any) -> Any:
        return out(convert(sh.reshape(res, av.shape), av.dtype, av.weak_type))

    def set(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] = values`` (for repeated indices the last value wins;
        ``unique_indices=True`` promises there are none, as JAX's: then traced indices
        skip the search for the last write)."""
        if out_sharding is not None:
            run = lambda r, v: r.set(v, mode=mode, wrap_negative_indices=wrap_negative_indices)
            return self._placed(out_sharding, run, values)
        x, av, flat, pos, v, k, ok, win = self._prepare(values, "set", mode, wrap_negative_indices)
        if k == 0:
            return out(x)
        n = aval(flat).shape[0]
        if isinstance(pos, np.ndarray):
            last = _last_occurrence(pos)
            if not last.all():
                keep = np.nonzero(last)[0].astype(pos.dtype)
                v, pos = ix.gather(v, keep, axis=0), pos[keep]
            hit = np.zeros((n,), bool)
            hit[pos] = True
        else:
            # (traced positions: which write is the last at its place costs O(k^2) unless
            # the caller promises distinct places, as JAX's ``unique_indices``)
            keep = sh.full((k,), True, np.bool_) if unique_indices else _kept(pos)
            if ok is not None:
                keep = ew.bitwise_and(keep, ok)
            hits = ix.scatter_add(sh.full((n,), 0, _I32), pos, convert(keep, _I32), axis=0)
            hit = ew.gt(hits, np.asarray(0, _I32))
            dt = aval(v).dtype
            v = ew.select_n(_rows(keep, win), sh.full((k, *win), _zero(dt), dt), v)
        new = ix.scatter_add(_zeros_as(flat, aval(v).dtype), pos, v, axis=0)
        if av.dtype == np.bool_:
            new = ew.ne(new, np.asarray(0, aval(new).dtype))
        return self._finish(ew.select_n(_rows(hit, win), flat, new), av)

    def add(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] += values``; repeated indices accumulate."""
        if out_sharding is not None:
            run = lambda r, v: r.add(v, mode=mode, wrap_negative_indices=wrap_negative_indices)
            return self._placed(out_sharding, run, values)
        x, av, flat, pos, v, k, ok, win = self._prepare(values, "add", mode, wrap_negative_indices)
        if k == 0:
            return out(x)
        if ok is not None:  # (a dropped update adds zero at the clamped sentinel)
            v = ew.select_n(_rows(ok, win), sh.full((k, *win), 0, aval(v).dtype), v)
        if av.dtype == np.bool_:
            acc = ix.scatter_add(convert(flat, _I32), pos, v, axis=0)
            return self._finish(ew.ne(acc, np.asarray(0, _I32)), av)
        return self._finish(ix.scatter_add(convert(flat, av.dtype), pos, v, axis=0), av)

    def subtract(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] -= values``."""
        x = as_array(self.x, "at[].subtract")
        neg = negative(convert(prep(values, "at[].subtract", sequences=True), aval(x).dtype))
        return self.add(
            neg, mode=mode, out_sharding=out_sharding, wrap_negative_indices=wrap_negative_indices
        )

    def _combine(
        self,
        values: Any,
        name: str,
        op: Callable,
        ident: Any,
        reduce: Any,
        mode: Any,
        out_sharding: Any,
        wrap: bool,
    ) -> Any:
        if out_sharding is not None:
            return self._placed(
                out_sharding,
                lambda r, v: r._combine(v, name, op, ident, reduce, mode, None, wrap),
                values,
            )
        x, av, flat, pos, v, k, _, win = self._prepare(values, name, mode, wrap)
        if k == 0:
            return out(x)
        n = aval(flat).shape[0]
        if isinstance(pos, np.ndarray) and _last_occurrence(pos).all():
            cur = ix.gather(flat, pos, axis=0)
            return self._finish(_set_unique(flat, pos, op(cur, v), n, win), av)
        if reduce is None:
            raise unsupported(f"at[].{name} with repeated or traced indices")
        # repeated (or traced) indices: combine all updates of a row densely (a dropped
        # update's sentinel position matches no row)
        cols = sh.iota(aval(pos).dtype, (k, n), 1)
        hit = ew.eq(sh.broadcast_in_dim(pos, (k, n), (0,)), cols)
        dense = (k, n, *win)
        vals = ew.select_n(
            _rows(hit, win),
            sh.full(dense, ident, av.dtype),
            sh.broadcast_in_dim(v, dense, (0, *range(2, 2 + len(win)))),
        )
        return self._finish(op(flat, reduce(vals, (0,))), av)

    def multiply(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] *= values``."""
        return self._combine(
            values, "multiply", _mul, 1, rd.reduce_prod, mode, out_sharding, wrap_negative_indices
        )

    mul = multiply

    def divide(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] /= values`` (inexact arrays)."""
        if not dtypes.is_inexact(aval(as_array(self.x, "at[].divide")).dtype):
            raise TypeError(f"at[].divide requires an inexact array, got {fmt(self.x)}{here()}")
        return self._combine(
            values, "divide", ew.div, 1, rd.reduce_prod, mode, out_sharding, wrap_negative_indices
        )

    def power(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] **= values``: ``x`` to the power of ones multiplied at
        ``idx`` by ``values``, as JAX's (a position indexed several times, or by traced
        indices, takes the product of its values as exponent)."""
        x = as_array(self.x, "at[].power")
        ones = typed_as(sh.full(aval(x).shape, 1, aval(x).dtype), aval(x).sharding)
        exponents = _IndexUpdateRef(ones, self.idx).multiply(
            values,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            out_sharding=out_sharding,
            wrap_negative_indices=wrap_negative_indices,
        )
        return out(power(x, exponents))

    def min(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] = minimum(x[idx], values)``."""
        dt = aval(as_array(self.x, "at[].min")).dtype
        return self._combine(
            values,
            "min",
            _min,
            _extreme(dt, True),
            _rmin,
            mode,
            out_sharding,
            wrap_negative_indices,
        )

    def max(
        self,
        values: ArrayLike,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        out_sharding: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] = maximum(x[idx], values)``."""
        dt = aval(as_array(self.x, "at[].max")).dtype
        return self._combine(
            values,
            "max",
            _max,
            _extreme(dt, False),
            _rmax,
            mode,
            out_sharding,
            wrap_negative_indices,
        )

    def apply(
        self,
        func: Callable[[Any], Any],
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
        wrap_negative_indices: bool = True,
    ) -> Any:
        """``x`` with ``x[idx] = func(x[idx])``; a position indexed several times gets
        ``func`` once per occurrence, in order, as ``jax.numpy`` (NumPy's ``ufunc.at``)."""
        x, av, flat, pos, _, k, ok, _ = self._prepare(
            0, "apply", mode, wrap_negative_indices, windows=False
        )
        if k == 0:
            return out(x)
        if isinstance(pos, np.ndarray) and _last_occurrence(pos).all():
            cur = ix.gather(flat, pos, axis=0)
            new = convert(func(out(cur)), av.dtype)
            return self._finish(_set_unique(flat, pos, new, av.size), av)
        # repeated or traced indices: one element at a time (XLA's scatter is serial too)
        okv = sh.full((k,), True, np.dtype(bool)) if ok is None else ok

        def step(j: Any, acc: Any) -> Any:
            p = sh.reshape(ix.dynamic_slice(pos, j, slice_sizes=(1,)), ())
            keep = ix.dynamic_slice(okv, j, slice_sizes=(1,))
            cur = ix.dynamic_slice(acc, p, slice_sizes=(1,))
            new = ew.select_n(keep, cur, convert(func(out(cur)), av.dtype))
            return ix.dynamic_update_slice(acc, new, p)

        return self._finish(fori_loop(0, k, step, flat), av)


def _mul(a: Any, b: Any) -> Any:
    return ew.bitwise_and(a, b) if aval(a).dtype == np.bool_ else ew.mul(a, b)


def _min(a: Any, b: Any) -> Any:
    return ew.bitwise_and(a, b) if aval(a).dtype == np.bool_ else ew.min(a, b)


def _max(a: Any, b: Any) -> Any:
    return ew.bitwise_or(a, b) if aval(a).dtype == np.bool_ else ew.max(a, b)


def _rmin(x: Any, axes: tuple) -> Any:
    return rd.reduce_and(x, axes) if aval(x).dtype == np.bool_ else rd.reduce_min(x, axes)


def _rmax(x: Any, axes: tuple) -> Any:
    return rd.reduce_or(x, axes) if aval(x).dtype == np.bool_ else rd.reduce_max(x, axes)


def _extreme(dt: np.dtype, high: bool) -> Any:
    if dt == np.bool_:
        return high
    if dtypes.is_inexact(dt):
        return np.inf if high else -np.inf
    info = np.iinfo(dt)
    return info.max if high else info.min


def _last_occurrence(pos: np.ndarray) -> np.ndarray:
    """Mask of the entries of ``pos`` not repeated later (the ones a ``set`` keeps)."""
    rev = pos[::-1]
    _, first_in_rev = np.unique(rev, return_index=True)
    keep = np.zeros(pos.shape, bool)
    keep[pos.shape[0] - 1 - first_in_rev] = True
    return keep


def _kept(pos: Any) -> Any:
    """(traced) True where no later entry of ``pos`` writes the same position: O(k^2)."""
    k = aval(pos).shape[0]
    a = sh.broadcast_in_dim(pos, (k, k), (0,))
    b = sh.broadcast_in_dim(pos, (k, k), (1,))
    later = ew.lt(sh.iota(_I32, (k, k), 0), sh.iota(_I32, (k, k), 1))
    return ew.bitwise_not(rd.reduce_or(ew.bitwise_and(ew.eq(a, b), later), (1,)))


def _set_unique(flat: Any, pos: np.ndarray, v: Any, size: int, win: tuple = ()) -> Any:
    hit = np.zeros((size,), bool)
    hit[pos] = True
    dt = aval(v).dtype
    if dt == np.bool_:
        new = ew.ne(
            ix.scatter_add(_zeros_as(flat, _I32), pos, convert(v, _I32), axis=0),
            np.asarray(0, _I32),
        )
    else:
        new = ix.scatter_add(_zeros_as(flat, dt), pos, v, axis=0)
    return ew.select_n(_rows(hit, win), flat, new)


class _At:
    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, idx: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.x, idx)


def at(x: Any) -> _At:
    """The ``.at`` property of tracers."""
    return _At(x)
