"""Indexing primitives: ``gather``/``scatter_add`` along one axis and
``dynamic_slice``/``dynamic_update_slice`` at traced start indices.

Each is linear in its array operands (indices are integer operands that carry
no derivative), so JVPs apply the primitive to the tangents and VJPs are the
transposed data movement: ``gather`` ↔ ``scatter_add``, ``dynamic_slice`` ↔
``dynamic_update_slice``.

Index semantics (shared by the eager lowering, the batching rules and the
VJPs, so that every rule is exact): ``dynamic_slice``/``dynamic_update_slice``
clamp each start index into ``[0, size - slice_size]`` as XLA does (no
wrap-around of negative starts: ``funcgrad.numpy`` normalises those), and
``gather``/``scatter_add`` clamp out-of-range indices to ``[0, size - 1]``.
With clamping on both sides ``scatter_add`` is the exact transpose of
``gather`` for every index.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import scatter as sc
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import rand
from funcgrad.primitives.scatter_host import host_clamp
from funcgrad.primitives.sharding import typed_as

FAMILY = "indexing"


def _check_index(name: str, what: str, a: Aval, scalar: bool = False) -> None:
    if dtypes.kind(a.dtype) != 1:
        raise TypeError(f"{name}: {what} must have an integer dtype, got {a}")
    if scalar and a.shape != ():
        raise TypeError(f"{name}: {what} must be 0-d integers, got {a}")


def _clamp(i: Any, lo: int, hi: int) -> Any:
    """``min(max(i, lo), hi)`` with funcgrad ops (``lo <= hi``)."""
    dt = to_aval(i).dtype
    return ew.min(ew.max(i, sh._c(lo, dt)), sh._c(hi, dt))


def _to_index(i: Any, lo: int, hi: int, dtype: np.dtype) -> Any:
    """(rules) clamp an integer ``i`` into ``[lo, hi]`` in its own dtype, then cast."""
    a = to_aval(i)
    info = np.iinfo(a.dtype)
    i = _clamp(i, max(lo, int(info.min)), min(hi, int(info.max)))
    return ew.convert_element_type(i, dtype)


def _lower_index(i: Any, hi: int, dtype: np.dtype) -> Any:
    """(lowering) clamp a start index into ``[0, hi]`` in its own dtype, then cast."""
    if isinstance(i, sh._SCALARS):
        return np.asarray(min(max(int(i), 0), hi), dtype)
    info = np.iinfo(i.dtype)
    i = lax.clamp(np.asarray(0, i.dtype), i, np.asarray(min(hi, int(info.max)), i.dtype))
    return lax.convert_element_type(i, dtype)


# --------------------------------------------------------------------------- gather / scatter_add


def _gather_dnums(x_ndim: int, idx_ndim: int, axis: int) -> tuple[tuple, tuple]:
    """Offset dims of the output and the operand's (collapsed) axis, for lax gather/scatter."""
    offset = tuple(range(axis)) + tuple(range(axis + idx_ndim, x_ndim - 1 + idx_ndim))
    return offset, (axis,)


def _take_shape(x: Aval, idx: Aval, axis: int) -> tuple[int, ...]:
    return (*x.shape[:axis], *idx.shape, *x.shape[axis + 1 :])


gather_p = Primitive("gather", family=FAMILY)


@gather_p.def_abstract_eval
def _gather_abstract_eval(x: Aval, indices: Aval, *, axis: int) -> Aval:
    _check_index("gather", "indices", indices)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"gather: axis {axis} out of range for an operand of type {x}")
    if x.shape[axis] == 0 and indices.size:
        raise ValueError(f"gather: cannot take {indices} from the empty axis {axis} of {x}")
    return Aval(_take_shape(x, indices, axis), x.dtype, x.weak_type)


def _gather_lower(x: Any, indices: Any, *, axis: int) -> Any:
    xa, ia = to_aval(x), to_aval(indices)
    offset, collapsed = _gather_dnums(xa.ndim, ia.ndim, axis)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=collapsed
    )
    sizes = tuple(1 if i == axis else s for i, s in enumerate(xa.shape))
    return lax.gather(
        x,
        lax.expand_dims(indices, (ia.ndim,)),
        dnums,
        sizes,
        mode=lax.GatherScatterMode.CLIP,
    )


gather_p.lower = _gather_lower
gather_p.sharding_rule = sharding_types.take_rule


@gather_p.def_host
def _gather_host(x: Any, indices: Any, *, axis: int) -> Any:
    if getattr(indices, "dtype", None) == np.uint64:  # (NumPy's clip would wrap them first)
        indices = np.minimum(indices, x.shape[axis])
    return x.take(indices, axis, mode="clip")


@gather_p.def_jvp
def _gather_jvp(primals: list, tangents: list, *, axis: int) -> tuple:
    (x, idx), (t, _) = primals, tangents
    return gather(x, idx, axis=axis), gather(t, idx, axis=axis)


@gather_p.def_vjp
def _gather_vjp(ct: Any, x: Any, idx: Any, *, out: Any, axis: int) -> tuple:
    zeros = typed_as(sh._zeros(to_aval(x)), sharding_types.cotangent_sharding(to_aval(x).sharding))
    return scatter_add(zeros, idx, ct, axis=axis), None


def _batched_take_dnums(n: int, k: int, axis: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The window dims (gather's ``offset_dims``, scatter's ``update_window_dims``) of a
    take along ``axis`` of an ``n``-d operand at ``k``-d indices, both with a leading batch
    dimension paired as a batching dimension: the result (and updates) laid out as ``[B,
    *x.shape[:axis], *idx.shape, *x.shape[axis+1:]]``; and the operand's collapsed axis."""
    window = tuple(range(1, axis + 1)) + tuple(range(axis + 1 + k, n + k))
    return window, (axis + 1,)


def _batched_take(x: Any, xd: int | None, idx: Any, idd: int, axis: int) -> Any:
    """``gather`` of a batched operand at batched indices as one general gather whose
    operand and indices batch dimensions are batching dimensions (JAX's batching rule):
    a batch dimension split over a mesh's explicit axes stays split, which folding the
    batch into the gathered axis (offset indices) lost. The result's batch is in front."""
    size = to_aval(idx).shape[idd]
    x = sh._bcast_batch(x, xd, size, 0)
    idx = rules.moveaxis(idx, idd, 0)
    xa, ia = to_aval(x), to_aval(idx)
    n, k = xa.ndim - 1, ia.ndim - 1
    out_shape = (size, *xa.shape[1 : axis + 1], *ia.shape[1:], *xa.shape[axis + 2 :])
    if size == 0 or xa.shape[axis + 1] == 0:  # (no element: abstract eval allowed it)
        return sh.full(out_shape, 0, xa.dtype)
    window, collapsed = _batched_take_dnums(n, k, axis)
    dn = sc.GatherDimensionNumbers(window, collapsed, collapsed, (0,), (0,))
    sizes = (1, *(1 if d == axis else s for d, s in enumerate(xa.shape[1:])))
    ii = sh.expand_dims(idx, (ia.ndim,))
    return sc._gather(x, ii, dn, sizes, "clip")


def _gather_batched(x: Any, xd: int | None, idx: Any, idd: int | None, axis: int):
    """Batched ``gather`` of logical ``axis``: ``(out, out_dim)``; one gather, no loop."""
    ia = to_aval(idx)
    if xd is None and idd is None:
        return gather(x, idx, axis=axis), None
    if idd is None:
        ax = axis + (axis >= xd)
        out_dim = xd if xd < ax else xd + ia.ndim - 1
        return gather(x, idx, axis=ax), out_dim
    if xd is None:
        return gather(x, idx, axis=axis), axis + idd
    return _batched_take(x, xd, idx, idd, axis), 0


@gather_p.def_batch
def _gather_batch(args: list, dims: list, *, axis: int) -> tuple:
    (x, idx), (xd, idd) = args, dims
    return _gather_batched(x, xd, idx, idd, axis)


@gather_p.def_examples
def _gather_examples(rng: np.random.Generator) -> list[Example]:
    i32 = np.int32
    return [
        Example([rand(rng, (5, 3)), np.array([0, 4, 2, 2], i32)], {"axis": 0}, diff_argnums=(0,)),
        Example(
            [rand(rng, (2, 5)), np.array([[1, 3, 1], [0, 4, 4]], i32)],
            {"axis": 1},
            diff_argnums=(0,),
        ),
        Example([rand(rng, (3, 4, 2)), np.array(2, i32)], {"axis": 1}, diff_argnums=(0,)),
        # out-of-range indices clamp (and the VJP clamps the same way)
        Example([rand(rng, (4,)), np.array([-2, 1, 7], i32)], {"axis": 0}, diff_argnums=(0,)),
    ]


def gather(x: Any, indices: Any, *, axis: int) -> Any:
    """Take ``x`` along ``axis`` at integer ``indices`` of any shape (clamped into range).

    The result has shape ``x.shape[:axis] + indices.shape + x.shape[axis+1:]``.

    Example:
        >>> gather(np.arange(5.0), np.array([4, 0]), axis=0).tolist()
        [4.0, 0.0]
    """
    return bind(gather_p, x, indices, axis=operator.index(axis))


scatter_add_p = Primitive("scatter_add", family=FAMILY)


@scatter_add_p.def_abstract_eval
def _scatter_add_abstract_eval(x: Aval, indices: Aval, updates: Aval, *, axis: int) -> Aval:
    _check_index("scatter_add", "indices", indices)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"scatter_add: axis {axis} out of range for an operand of type {x}")
    want = _take_shape(x, indices, axis)
    if updates.shape != want:
        raise TypeError(
            f"scatter_add: updates {updates} must have shape {want} for operand {x}, "
            f"indices {indices} and axis {axis}"
        )
    if x.shape[axis] == 0 and indices.size:
        raise ValueError(f"scatter_add: cannot add at {indices} into the empty axis of {x}")
    dtype, weak = rules.join_dtypes("scatter_add", x, updates)
    return Aval(x.shape, dtype, weak)


def _scatter_add_lower(x: Any, indices: Any, updates: Any, *, axis: int) -> Any:
    xa, ia = to_aval(x), to_aval(indices)
    dtype, _ = rules.join_dtypes("scatter_add", xa, to_aval(updates))
    offset, collapsed = _gather_dnums(xa.ndim, ia.ndim, axis)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=offset,
        inserted_window_dims=collapsed,
        scatter_dims_to_operand_dims=collapsed,
    )
    return lax.scatter_add(
        sh._as_dtype(x, dtype),
        lax.expand_dims(indices, (ia.ndim,)),
        sh._as_dtype(updates, dtype),
        dnums,
        mode=lax.GatherScatterMode.CLIP,
    )


scatter_add_p.lower = _scatter_add_lower


@scatter_add_p.def_host
def _scatter_add_host(x: Any, indices: Any, updates: Any, *, axis: int) -> Any:
    out = np.array(x, np.result_type(x, updates), order="C")
    idx = host_clamp(indices, max(out.shape[axis] - 1, 0)).reshape(-1)
    if out.ndim == 1:
        np.add.at(out, idx, np.broadcast_to(updates, np.shape(indices)).reshape(-1))
        return out
    # on the flat buffer, one index per element: NumPy's add.at loops over a subspace per
    # index otherwise (rows of 16 floats: ~3x slower); the same additions in the same
    # order, so the same values
    pre, post = math.prod(out.shape[:axis]), math.prod(out.shape[axis + 1 :])
    flat = (np.arange(pre)[:, None, None] * out.shape[axis] + idx[None, :, None]) * post
    flat = flat + np.arange(post)[None, None, :]
    u = np.broadcast_to(
        np.asarray(updates, out.dtype),
        (*out.shape[:axis], *np.shape(indices), *out.shape[axis + 1 :]),
    )
    np.add.at(out.reshape(-1), flat.reshape(-1), u.reshape(-1))
    return out


@scatter_add_p.def_jvp
def _scatter_add_jvp(primals: list, tangents: list, *, axis: int) -> tuple:
    (x, idx, u), (tx, _, tu) = primals, tangents
    out = scatter_add(x, idx, u, axis=axis)
    if is_zero(tu):
        return out, tx
    dt = to_aval(out).dtype
    tx = rules.instantiate(tx, Aval(to_aval(x).shape, dt))
    return out, scatter_add(tx, idx, tu, axis=axis)


@scatter_add_p.def_vjp
def _scatter_add_vjp(ct: Any, x: Any, idx: Any, u: Any, *, out: Any, axis: int) -> tuple:
    return ct, None, gather(ct, idx, axis=axis)


@scatter_add_p.def_batch
def _scatter_add_batch(args: list, dims: list, *, axis: int) -> tuple:
    (x, idx, u), (xd, idd, ud) = args, dims
    size = rules.batch_size(args, dims)
    if idd is None:
        x = rules.bdim_to_front(x, xd, size)
        u = rules.bdim_to_front(u, ud, size)
        return scatter_add(x, idx, u, axis=axis + 1), 0
    # batched indices: one general scatter-add whose batch dimensions are batching
    # dimensions (as gather's rule: a split batch dimension stays split)
    x = sh._bcast_batch(x, xd, size, 0)
    idx = rules.moveaxis(idx, idd, 0)
    u = sh._bcast_batch(u, ud, size, 0)
    xa, ia = to_aval(x), to_aval(idx)
    dtype, _ = rules.join_dtypes("scatter_add", xa, to_aval(u))
    x, u = (v if to_aval(v).dtype == dtype else ew.convert_element_type(v, dtype) for v in (x, u))
    if size == 0 or ia.size == 0:
        return x, 0
    window, collapsed = _batched_take_dnums(xa.ndim - 1, ia.ndim - 1, axis)
    dn = sc.ScatterDimensionNumbers(window, collapsed, collapsed, (0,), (0,))
    ii = sh.expand_dims(idx, (ia.ndim,))
    return sc._scatter(sc.scatter_add_general_p, x, ii, u, dn, "clip"), 0


@scatter_add_p.def_examples
def _scatter_add_examples(rng: np.random.Generator) -> list[Example]:
    i32 = np.int32
    return [
        Example(
            [rand(rng, (5, 3)), np.array([0, 4, 2, 2], i32), rand(rng, (4, 3))],
            {"axis": 0},
            diff_argnums=(0, 2),
        ),
        Example(
            [rand(rng, (2, 5)), np.array([[1, 3, 1], [0, 4, 4]], i32), rand(rng, (2, 2, 3))],
            {"axis": 1},
            diff_argnums=(0, 2),
        ),
        Example(
            [rand(rng, (4,)), np.array([-2, 1, 7], i32), rand(rng, (3,))],
            {"axis": 0},
            diff_argnums=(0, 2),
        ),
    ]


def scatter_add(x: Any, indices: Any, updates: Any, *, axis: int) -> Any:
    """Add ``updates`` into ``x`` at ``indices`` along ``axis`` (duplicates accumulate).

    The transpose of :func:`gather`: ``updates`` has the shape ``gather(x, indices,
    axis=axis)`` would have, and out-of-range indices clamp as in ``gather``.
    """
    return bind(scatter_add_p, x, indices, updates, axis=operator.index(axis))


# --------------------------------------------------------------------------- dynamic_slice

dynamic_slice_p = Primitive("dynamic_slice", family=FAMILY)


def _check_starts(name: str, x: Aval, starts: tuple[Aval, ...]) -> None:
    if len(starts) != x.ndim:
        raise TypeError(
            f"{name}: needs one start index per dimension of the operand {x}, "
            f"got {len(starts)} ({sh._fmt(*starts)})"
        )
    for s in starts:
        _check_index(name, "start indices", s, scalar=True)


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(x: Aval, *starts: Aval, slice_sizes: tuple[int, ...]) -> Aval:
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, x.shape)):
        raise TypeError(
            f"dynamic_slice: slice_sizes {slice_sizes} must fit the operand {x} (one per dimension)"
        )
    return Aval(slice_sizes, x.dtype, x.weak_type)


def _lower_starts(starts: tuple, shape: tuple, sizes: tuple) -> list:
    dt = sh._index_dtype(max(shape, default=0))
    return [_lower_index(s, n - k, dt) for s, n, k in zip(starts, shape, sizes)]


def _dynamic_slice_lower(x: Any, *starts: Any, slice_sizes: tuple) -> Any:
    starts = _lower_starts(starts, to_aval(x).shape, slice_sizes)
    return lax.dynamic_slice(x, starts, slice_sizes)


dynamic_slice_p.lower = _dynamic_slice_lower
dynamic_slice_p.sharding_rule = sharding_types.varying_shape_rule


def _host_window(starts: tuple, shape: tuple, sizes: tuple) -> tuple:
    """The slices of a window of ``sizes`` at ``starts`` clamped into ``shape``."""
    out = []
    for s, n, k in zip(starts, shape, sizes):
        s = min(max(int(s), 0), n - k)
        out.append(builtins.slice(s, s + k))
    return tuple(out)


dynamic_slice_p.host = lambda x, *starts, slice_sizes: np.asarray(x)[
    _host_window(starts, np.shape(x), slice_sizes)
]


@dynamic_slice_p.def_jvp
def _dynamic_slice_jvp(primals: list, tangents: list, *, slice_sizes: tuple) -> tuple:
    x, *starts = primals
    t = tangents[0]
    return (
        dynamic_slice(x, *starts, slice_sizes=slice_sizes),
        dynamic_slice(t, *starts, slice_sizes=slice_sizes),
    )


@dynamic_slice_p.def_vjp
def _dynamic_slice_vjp(ct: Any, x: Any, *starts: Any, out: Any, slice_sizes: tuple) -> tuple:
    s = sharding_types.cotangent_sharding(to_aval(x).sharding)
    g = dynamic_update_slice(typed_as(sh._zeros(to_aval(x)), s), typed_as(ct, s), *starts)
    return (g, *([None] * len(starts)))


@dynamic_slice_p.def_batch
def _dynamic_slice_batch(args: list, dims: list, *, slice_sizes: tuple) -> tuple:
    x, *starts = args
    xd, *sds = dims
    size = rules.batch_size(args, dims)
    xa = to_aval(x)
    shape = xa.shape if xd is None else (*xa.shape[:xd], *xa.shape[xd + 1 :])
    dt = sh._index_dtype(max((*shape, size), default=0))
    zero = sh._c(0, dt)
    if all(sd is None for sd in sds):
        st = [*starts[:xd], zero, *starts[xd:]]
        sizes = (*slice_sizes[:xd], size, *slice_sizes[xd:])
        return dynamic_slice(x, *st, slice_sizes=sizes), xd
    # 1) slice the dimensions whose start is unbatched (full extent elsewhere)
    st = [s if sd is None else zero for s, sd in zip(starts, sds)]
    sizes = tuple(k if sd is None else n for k, n, sd in zip(slice_sizes, shape, sds))
    if sizes != shape:
        if xd is not None:
            st.insert(xd, zero)
            sizes = (*sizes[:xd], size, *sizes[xd:])
        x = dynamic_slice(x, *st, slice_sizes=sizes)
    # 2) each dimension with a batched start: a batched gather of start + iota
    for k, (s, sd) in enumerate(zip(starts, sds)):
        if sd is None:
            continue
        n, m = shape[k], slice_sizes[k]
        sv = _to_index(s, 0, n - m, dt)  # a batched 0-d start is a (B,) vector
        idx = ew.add(sh.broadcast_in_dim(sv, (size, m), (0,)), sh.iota(dt, (size, m), 1))
        x, xd = _gather_batched(x, xd, idx, 0, k)
    return x, xd


@dynamic_slice_p.def_examples
def _dynamic_slice_examples(rng: np.random.Generator) -> list[Example]:
    i32 = np.int32
    return [
        Example([rand(rng, (5,)), np.asarray(1, i32)], {"slice_sizes": (3,)}, diff_argnums=(0,)),
        Example(
            [rand(rng, (4, 5)), np.asarray(1, i32), np.asarray(2, i32)],
            {"slice_sizes": (2, 3)},
            diff_argnums=(0,),
        ),
        # starts out of range clamp
        Example(
            [rand(rng, (4, 5)), np.asarray(3, i32), np.asarray(-1, i32)],
            {"slice_sizes": (2, 2)},
            diff_argnums=(0,),
        ),
    ]


def dynamic_slice(x: Any, *start_indices: Any, slice_sizes: Sequence[int]) -> Any:
    """Slice of ``slice_sizes`` at traced 0-d int ``start_indices`` (clamped so it fits)."""
    return bind(dynamic_slice_p, x, *start_indices, slice_sizes=sh._ints(slice_sizes))


# --------------------------------------------------------------------------- dynamic_update_slice

dynamic_update_slice_p = Primitive("dynamic_update_slice", family=FAMILY)


@dynamic_update_slice_p.def_abstract_eval
def _dus_abstract_eval(x: Aval, update: Aval, *starts: Aval) -> Aval:
    _check_starts("dynamic_update_slice", x, starts)
    if update.ndim != x.ndim or any(u > n for u, n in zip(update.shape, x.shape)):
        raise TypeError(
            f"dynamic_update_slice: update {update} must have the rank of the operand {x} "
            "and fit inside it"
        )
    dtype, _ = rules.join_dtypes("dynamic_update_slice", x, update)
    return Aval(x.shape, dtype, x.weak_type and update.weak_type)


def _dus_lower(x: Any, update: Any, *starts: Any) -> Any:
    xa, ua = to_aval(x), to_aval(update)
    dtype, _ = rules.join_dtypes("dynamic_update_slice", xa, ua)
    starts = _lower_starts(starts, xa.shape, ua.shape)
    return lax.dynamic_update_slice(sh._as_dtype(x, dtype), sh._as_dtype(update, dtype), starts)


dynamic_update_slice_p.lower = _dus_lower
dynamic_update_slice_p.sharding_rule = sharding_types.operand_rule


@dynamic_update_slice_p.def_host
def _dus_host(x: Any, update: Any, *starts: Any) -> Any:
    out = np.array(x, np.result_type(x, update))
    out[_host_window(starts, out.shape, np.shape(update))] = update
    return out


@dynamic_update_slice_p.def_jvp
def _dus_jvp(primals: list, tangents: list) -> tuple:
    x, u, *starts = primals
    tx, tu = tangents[:2]
    out = dynamic_update_slice(x, u, *starts)
    dt = to_aval(out).dtype
    tx = rules.instantiate(tx, Aval(to_aval(x).shape, dt))
    tu = rules.instantiate(tu, Aval(to_aval(u).shape, dt))
    return out, dynamic_update_slice(tx, tu, *starts)


@dynamic_update_slice_p.def_vjp
def _dus_vjp(ct: Any, x: Any, u: Any, *starts: Any, out: Any) -> tuple:
    ua = to_aval(u)
    cs = to_aval(ct).sharding
    if cs is not None:  # (as JAX's: the cotangent typed as the operand's, unsplit if it is)
        unsplit = type(cs)(cs.mesh, cs.spec.update(partitions=(None,) * len(ua.shape)))
        ct = typed_as(ct, sharding_types.cotangent_sharding(to_aval(x).sharding) or unsplit)
    zeros = typed_as(sh._zeros(Aval(ua.shape, to_aval(ct).dtype)), to_aval(ct).sharding)
    gx = dynamic_update_slice(ct, zeros, *starts)
    gu = dynamic_slice(ct, *starts, slice_sizes=ua.shape)
    return (gx, gu, *([None] * len(starts)))


@dynamic_update_slice_p.def_batch
def _dus_batch(args: list, dims: list) -> tuple:
    x, u, *starts = args
    xd, ud, *sds = dims
    size = rules.batch_size(args, dims)
    xa, ua = to_aval(x), to_aval(u)
    shape = xa.shape if xd is None else (*xa.shape[:xd], *xa.shape[xd + 1 :])
    ushape = ua.shape if ud is None else (*ua.shape[:ud], *ua.shape[ud + 1 :])
    dt = sh._index_dtype(max((*shape, size), default=0))
    if all(sd is None for sd in sds):
        bd = xd if xd is not None else ud
        x, u = sh._bcast_batch(x, xd, size, bd), sh._bcast_batch(u, ud, size, bd)
        st = [*starts[:bd], sh._c(0, dt), *starts[bd:]]
        return dynamic_update_slice(x, u, *st), bd
    # batched starts: spread the update over x's shape with gathers, then select by a mask
    xf = rules.bdim_to_front(x, xd, size)
    full_shape = (size, *shape)
    mask = None
    for k, (s, sd) in enumerate(zip(starts, sds)):
        n, m = shape[k], ushape[k]
        if m == n:
            continue  # the start clamps to 0: the update covers this dimension
        if sd is None:
            pos = sh.iota(dt, (n,), 0)
            s = _to_index(s, 0, n - m, dt)
            mdims: tuple[int, ...] = (k + 1,)
        else:
            pos = sh.iota(dt, (size, n), 1)
            s = sh.broadcast_in_dim(_to_index(s, 0, n - m, dt), (size, n), (0,))
            mdims = (0, k + 1)
        rel = ew.sub(pos, s)
        inside = ew.bitwise_and(ew.ge(rel, sh._c(0, dt)), ew.lt(rel, sh._c(m, dt)))
        inside = sh.broadcast_in_dim(inside, full_shape, mdims)
        mask = inside if mask is None else ew.bitwise_and(mask, inside)
        u, ud = _gather_batched(u, ud, _clamp(rel, 0, m - 1), None if sd is None else 0, k)
    uf = rules.bdim_to_front(u, ud, size)
    if mask is None:
        return uf, 0
    return ew.select_n(mask, xf, uf), 0


@dynamic_update_slice_p.def_examples
def _dus_examples(rng: np.random.Generator) -> list[Example]:
    i32 = np.int32
    return [
        Example([rand(rng, (5,)), rand(rng, (2,)), np.asarray(2, i32)], diff_argnums=(0, 1)),
        Example(
            [rand(rng, (4, 5)), rand(rng, (2, 3)), np.asarray(1, i32), np.asarray(4, i32)],
            diff_argnums=(0, 1),
        ),
        Example(
            [rand(rng, (3, 4)), rand(rng, (3, 2)), np.asarray(0, i32), np.asarray(1, i32)],
            diff_argnums=(0, 1),
        ),
        # a negative start clamps to 0
        Example([rand(rng, (5,)), rand(rng, (2,)), np.asarray(-3, i32)], diff_argnums=(0, 1)),
    ]


def dynamic_update_slice(x: Any, update: Any, *start_indices: Any) -> Any:
    """``x`` with ``update`` written at traced 0-d int ``start_indices`` (clamped so it fits)."""
    return bind(dynamic_update_slice_p, x, update, *start_indices)
