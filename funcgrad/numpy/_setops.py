"""Value-dependent shapes made static: ``nonzero``/``argwhere``/``flatnonzero``, ``unique``,
set operations, ``bincount``, ``searchsorted``/``digitize`` and ``isin``.

Functions whose output length depends on the values take ``size=`` (and ``fill_value=``),
as in ``jax.numpy``: with it they trace under ``jit``; without it they need a concrete
input and raise :class:`~funcgrad.errors.ConcretizationTypeError` on a traced one. They are
composites of ``sort`` (stable, lexicographic over several keys), ``cumsum``, gathers and
``scatter_add``: sorting a mask puts the selected positions first, in order.
"""

from __future__ import annotations

import operator
from collections import namedtuple
from typing import Any

import numpy as np

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.core.errors import ConcretizationTypeError, ShardingTypeError
from funcgrad.core.interp import Tracer
from funcgrad.numpy import _creation, _indexing, _info, _reductions, _shape, _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    check_arraylike,
    convert,
    here,
    normalize_axis,
    out,
    promote,
)
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import public_forms
from funcgrad.primitives import shape as sh
from funcgrad.primitives.sort import sort
from funcgrad.sharding import auto_axes


def _int() -> np.dtype:
    return dtypes.default_dtype(1)


def _sort(*operands: Any, num_keys: int = 1) -> list:
    return sort(*operands, dimension=0, is_stable=True, num_keys=num_keys)


def _static_size(name: str, mask: Any, size: Any) -> int:
    """``size`` as an int, or the concrete number of true entries of ``mask``."""
    if size is not None:
        return operator.index(size)
    if isinstance(mask, Tracer):
        raise ConcretizationTypeError(
            f"The size argument of jnp.{name} must be statically specified to use "
            f"jnp.{name} within JAX transformations (got a traced operand {mask.aval})."
            f"{here()}"
        )
    return int(np.count_nonzero(np.asarray(mask)))


def _compact(mask: Any, size: int) -> tuple[Any, Any]:
    """Positions of the true entries of the 1-D ``mask`` (first ``size`` of them, padded
    with 0) and a mask of which of the ``size`` outputs are real."""
    n = aval(mask).shape[0]
    if n == 0:
        return _creation.zeros((size,), _int()), _creation.zeros((size,), bool)
    keys = ew.convert_element_type(_ufuncs.logical_not(mask), np.int32)
    idx = _sort(keys, sh.iota(_int(), (n,), 0))[1]
    if size <= n:
        idx = sh.slice(idx, (0,), (size,))
    else:
        idx = sh.pad(idx, np.zeros((), _int()), [(0, size - n, 0)])
    count = _reductions.sum(mask, dtype=_int())
    valid = _ufuncs.less(sh.iota(_int(), (size,), 0), count)
    return idx, valid


# --------------------------------------------------------------------------- nonzero


def nonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the non-zero entries, one array per dimension (``size`` pads or cuts)."""
    a = as_array(a, "nonzero")
    shape = aval(a).shape
    if not shape:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
            f"instead.{here()}"
        )
    mask = _shape.reshape(_ufuncs.not_equal(a, 0) if aval(a).dtype != np.bool_ else a, (-1,))
    size = _static_size("nonzero", mask, size)
    flat, valid = _compact(mask, size)
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
    if len(fills) != len(shape):
        raise ValueError(
            f"nonzero: fill_value must be a scalar or a tuple of length {len(shape)}; "
            f"got {fill_value}{here()}"
        )
    outs = []
    stride = 1
    for d in reversed(range(len(shape))):
        i = flat // stride % shape[d] if shape[d] else flat
        stride *= shape[d]
        if fills[d] is not None:
            f = _creation.asarray(fills[d])
            if _info.ndim_of(f):
                raise ValueError(f"nonzero: fill_value must be a scalar; got {fill_value}")
            i = _ufuncs.where(valid, i, convert(f, _int()))
        outs.append(out(convert(i, _int())))
    return tuple(reversed(outs))


def argwhere(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero entries as a ``(count, ndim)`` array."""
    a = as_array(a, "argwhere")
    nd = aval(a).ndim
    if nd == 0:
        a = _shape.reshape(a, (1,))
    idx = nonzero(a, size=size, fill_value=fill_value)
    res = _shape.stack(idx, axis=1)
    return res[:, :0] if nd == 0 else res


def flatnonzero(a: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero entries of ``ravel(a)``."""
    check_arraylike("ravel", a)
    return nonzero(_shape.ravel(a), size=size, fill_value=fill_value)[0]


#: the forms of the ternary rows whose call with the first operand alone is ``nonzero``
#: (``where``'s row, ``_ufuncs.WHERE``: ``where(condition)`` is ``nonzero(condition)``)
DECLARED = {
    name: _ufuncs.declared_form(name, row, alone=nonzero)
    for name, row in public_forms("numpy").items()
    if row.arity == 3 and row.alone == "nonzero"
}
globals().update(DECLARED)


# --------------------------------------------------------------------------- unique


def _lt(x: Any, y: Any) -> Any:
    """``x < y`` in sort order (NaN last)."""
    lt = _ufuncs.less(x, y)
    if dtypes.is_inexact(aval(x).dtype):
        lt = _ufuncs.logical_or(
            lt, _ufuncs.logical_and(_ufuncs.isnan(y), _ufuncs.logical_not(_ufuncs.isnan(x)))
        )
    return lt


def _differs(x: Any, y: Any, equal_nan: bool) -> Any:
    d = _ufuncs.not_equal(x, y)
    if equal_nan and dtypes.is_inexact(aval(x).dtype):
        d = _ufuncs.logical_and(
            d, _ufuncs.logical_not(_ufuncs.logical_and(_ufuncs.isnan(x), _ufuncs.isnan(y)))
        )
    return d


def _unique_sorted(cols: list, n: int, equal_nan: bool) -> tuple[list, Any, Any]:
    """Sort rows given as ``cols`` lexicographically: sorted cols, permutation, first-of-run
    mask."""
    res = _sort(*cols, sh.iota(_int(), (n,), 0), num_keys=len(cols))
    scols, perm = res[:-1], res[-1]
    if n == 0:
        return scols, perm, _creation.zeros((0,), bool)
    diff = None
    for c in scols:
        d = _differs(c[1:], c[:-1], equal_nan)
        diff = d if diff is None else _ufuncs.logical_or(diff, d)
    first = _shape.concatenate([_creation.ones((1,), bool), diff])
    return scols, perm, first


def unique(
    ar: ArrayLike,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value: ArrayLike | None = None,
    sorted: bool = True,
) -> Any:
    """Sorted unique values (rows/slices along ``axis``), optionally with the index of each
    one's first occurrence, the inverse map and the counts; ``size`` fixes the length (padded
    with ``fill_value``, by default the smallest value) so it traces under ``jit``."""
    x = as_array(ar, "unique")
    if dtypes.kind(aval(x).dtype) == 3:
        # a NaN in either part is one NaN, sorted last (NumPy's order of complex NaNs;
        # lexicographic sorting would place ``0 + nan*j`` among the zeros), as jax.numpy
        nan = _creation.asarray(complex(np.nan, 0), dtype=aval(x).dtype)
        x = _ufuncs.where(_ufuncs.isnan(x), nan, x)
    if axis is None:
        shape_in = aval(x).shape
        x = _shape.reshape(x, (-1,))
        ax = 0
    else:
        ax = normalize_axis(axis, aval(x).ndim, "unique")
        shape_in = None
    moved = _shape.moveaxis(x, ax, 0)
    slice_shape = aval(moved).shape[1:]
    n = aval(moved).shape[0]
    ncol = int(np.prod(slice_shape, dtype=np.int64))  # explicit: ``-1`` is ambiguous when n == 0
    rows = _shape.reshape(moved, (n, ncol))
    cols = [rows[:, j] for j in range(ncol)] if ncol else [_creation.zeros((n,), _int())]
    scols, perm, first = _unique_sorted(cols, n, equal_nan)
    k = _static_size("unique", first, size)
    pos, valid = _compact(first, k)
    srows = _shape.stack(scols, axis=1) if ncol else rows
    vals = _indexing.take(srows, pos, axis=0)  # rows at the first of each run
    if n and size is not None:
        if fill_value is None:
            fill = srows[0]
        else:
            fill = _shape.broadcast_to(_creation.asarray(fill_value, dtype=aval(x).dtype), (ncol,))
        vals = _ufuncs.where(valid[:, None], vals, fill[None, :] if ncol else fill)
    values = _shape.moveaxis(_shape.reshape(vals, (k, *slice_shape)), 0, ax)
    results = [out(convert(values, aval(x).dtype, aval(x).weak_type))]
    gid = _reductions.cumsum(first, dtype=_int()) - 1 if n else _creation.zeros((0,), _int())
    if return_index:
        idx = (
            _ufuncs.where(valid, _indexing.take(perm, pos), perm[0])
            if n
            else _creation.zeros((k,), _int())
        )
        results.append(out(idx))
    if return_inverse:
        inv = ix.scatter_add(_creation.zeros((n,), _int()), perm, gid, axis=0) if n else gid
        results.append(out(_shape.reshape(inv, shape_in) if shape_in is not None else inv))
    if return_counts:
        results.append(bincount(gid, length=k))
    return results[0] if len(results) == 1 else tuple(results)


UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Unique values with their first indices, inverse indices and counts (array API)."""
    check_arraylike("unique_all", x)
    r = unique(x, True, True, True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueAllResult(*r)


def unique_counts(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Unique values and their counts (array API)."""
    check_arraylike("unique_counts", x)
    r = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueCountsResult(*r)


def unique_inverse(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Unique values and the inverse map, shaped like ``x`` (array API)."""
    check_arraylike("unique_inverse", x)
    r = unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueInverseResult(*r)


def unique_values(x: ArrayLike, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Unique values (array API)."""
    check_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# --------------------------------------------------------------------------- set operations


def isin(
    element: ArrayLike,
    test_elements: ArrayLike,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    method: str = "auto",
) -> Any:
    """Whether each entry of ``element`` occurs in ``test_elements`` (shape of ``element``)."""
    check_arraylike("isin", element, test_elements)
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: unrecognized method {method!r}{here()}")
    e = _creation.asarray(element)
    t = _shape.ravel(test_elements)
    if aval(t).shape[0] == 0:
        res = _creation.zeros(aval(e).shape, bool)
    else:
        res = _reductions.any(_ufuncs.equal(e[..., None], t), axis=-1)
    return out(_ufuncs.logical_not(res) if invert else res)


ArrayRow(
    isin,
    torch=TorchArrayForm(
        None,
        (
            TorchParam("test_elements", "test_elements", "tensor"),
            TorchParam("assume_unique", "assume_unique", "bool", False, keyword_only=True),
            TorchParam("invert", "invert", "bool", False, keyword_only=True),
        ),
        input="elements",
        method=False,
        numbers=True,
        dtype_error=("bc", "Unsupported input type encountered for isin(): {dtype}"),
        exact_out="Expected out tensor to have dtype {want_c}, but got {got_c} instead",
        samples=(((6,), ((3,),)), ((2, 3), ((2, 2),))),
    ),
)


def _fill_default(name: str, vals: Any, valid: Any, fill_value: Any, default: Any) -> Any:
    f = default if fill_value is None else _creation.asarray(fill_value, dtype=aval(vals).dtype)
    return out(_ufuncs.where(valid, vals, f))


def union1d(
    ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None
) -> Any:
    """Sorted unique values of either array."""
    check_arraylike("union1d", ar1, ar2)
    both = _shape.concatenate([_shape.ravel(ar1), _shape.ravel(ar2)])
    return unique(both, size=size, fill_value=fill_value)


def _masked_unique(name: str, x: Any, keep: Any, size: Any, fill_value: Any, default: Any) -> Any:
    """Entries of sorted 1-D ``x`` where ``keep`` holds, compacted to ``size``."""
    k = _static_size(name, keep, size)
    pos, valid = _compact(keep, k)
    vals = _indexing.take(x, pos) if aval(x).shape[0] else _creation.zeros((k,), aval(x).dtype)
    return _fill_default(name, vals, valid, fill_value, default(vals, x))


def setdiff1d(
    ar1: ArrayLike,
    ar2: ArrayLike,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: ArrayLike | None = None,
) -> Any:
    """Sorted unique values of ``ar1`` that are not in ``ar2`` (``size``: padded with
    ``fill_value``, by default 0)."""
    check_arraylike("setdiff1d", ar1, ar2)
    a1 = _shape.ravel(ar1)
    s, _, first = _unique_sorted([a1], aval(a1).shape[0], True)
    (s,) = s
    keep = _ufuncs.logical_and(first, _ufuncs.logical_not(isin(s, ar2)))
    return _masked_unique(
        "setdiff1d", s, keep, size, fill_value, lambda v, x: _creation.zeros_like(v)
    )


def intersect1d(
    ar1: ArrayLike,
    ar2: ArrayLike,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size: int | None = None,
    fill_value: ArrayLike | None = None,
) -> Any:
    """Sorted unique values in both arrays (``return_indices``: where each first occurs in
    each input)."""
    check_arraylike("intersect1d", ar1, ar2)
    a1, a2 = _shape.ravel(ar1), _shape.ravel(ar2)
    (s,), perm, first = _unique_sorted([a1], aval(a1).shape[0], True)
    keep = _ufuncs.logical_and(first, isin(s, a2))
    k = _static_size("intersect1d", keep, size)
    pos, valid = _compact(keep, k)
    vals = _indexing.take(s, pos) if aval(s).shape[0] else _creation.zeros((k,), aval(s).dtype)
    default = vals[0] if k else 0
    res = _fill_default("intersect1d", vals, valid, fill_value, default)
    if not return_indices:
        return res
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    i1 = _indexing.take(perm, pos) if n1 else _creation.zeros((k,), _int())
    # first occurrence in ar2 of each value: argmax of equality (rows of (k, n2))
    eq = _ufuncs.equal(vals[:, None], a2[None, :])
    i2 = _reductions.argmax(eq, axis=1) if n2 else _creation.zeros((k,), _int())
    i1 = _ufuncs.where(valid, convert(i1, _int()), n1)
    i2 = _ufuncs.where(valid, convert(i2, _int()), n2)
    return res, out(i1), out(i2)


def setxor1d(
    ar1: ArrayLike,
    ar2: ArrayLike,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: ArrayLike | None = None,
) -> Any:
    """Sorted unique values in exactly one of the arrays (``size``: padded with
    ``fill_value``, by default the smallest result, or 0 when there is none).

    With ``assume_unique`` the arrays are not made unique first: as NumPy and JAX, a value
    is kept when it occurs exactly once in the two arrays together (a value repeated
    within one array, against the assumption, is dropped)."""
    check_arraylike("setxor1d", ar1, ar2)
    a1, a2 = _shape.ravel(ar1), _shape.ravel(ar2)
    both = _shape.concatenate([a1, a2])
    n = aval(both).shape[0]
    if assume_unique:
        (s,) = _sort(both)[:1]
        if n:
            d = _ufuncs.not_equal(s[1:], s[:-1])
            edge = _creation.ones((1,), bool)
            flag = _shape.concatenate([edge, d, edge])
            keep = _ufuncs.logical_and(flag[1:], flag[:-1])
        else:
            keep = _creation.zeros((0,), bool)
    else:
        in1 = isin(both, a1)
        in2 = isin(both, a2)
        (s,), perm, first = _unique_sorted([both], n, True)
        only = _ufuncs.logical_xor(_indexing.take(in1, perm), _indexing.take(in2, perm))
        keep = _ufuncs.logical_and(first, only)

    def smallest(v: Any, x: Any) -> Any:
        if not aval(v).shape[0]:
            return 0
        return _ufuncs.where(_reductions.any(keep), v[0], _creation.zeros((), aval(v).dtype))

    return _masked_unique("setxor1d", s, keep, size, fill_value, smallest)


# --------------------------------------------------------------------------- counting, search


def bincount(
    x: ArrayLike,
    weights: ArrayLike | None = None,
    minlength: int = 0,
    *,
    length: int | None = None,
    out_sharding: Any = None,
) -> Any:
    """Count (or sum ``weights`` of) each non-negative integer in ``x``; ``length`` fixes the
    output length (larger values are dropped) so it traces under ``jit``; ``out_sharding``
    (replicated, or unreduced over every mesh axis: each device's count of its own share)
    computes the counts with the mesh's axes automatic, as JAX's."""
    x = as_array(x, "bincount")
    if dtypes.kind(aval(x).dtype) > 1:
        raise TypeError(f"bincount: x argument must have an integer type; got {aval(x).dtype}")
    if aval(x).ndim != 1:
        raise ValueError(f"bincount: only 1-dimensional input supported; got shape {aval(x).shape}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError(f"minlength must not be negative, got {minlength}")
    if length is None:
        if isinstance(x, Tracer):
            raise ConcretizationTypeError(
                "The error occurred because of argument 'length' of jnp.bincount: it must be "
                f"given (a static int) to use jnp.bincount on a traced array {x.aval}.{here()}"
            )
        xs = np.asarray(x)
        length = max(minlength, int(xs.max()) + 1 if xs.size else 0)
    else:
        length = operator.index(length)
    if weights is None:
        w = _creation.ones(aval(x).shape, _int())
    else:
        w = _creation.asarray(weights)
        if aval(w).shape != aval(x).shape:
            w = _shape.broadcast_to(w, aval(x).shape)
    if out_sharding is not None:
        target = sharding_types.named(out_sharding)
        spec = target.spec
        if (
            spec.partitions
            or spec.reduced
            or (spec.unreduced and set(spec.unreduced) != set(target.mesh.axis_names))
        ):
            raise ShardingTypeError(
                "out_sharding passed to `jnp.bincount` can only be fully replicated or fully "
                "unreduced along all mesh axes"
            )
        return auto_axes(lambda x, w: _counts(x, w, length), out_sharding=target)(x, w)
    return _counts(x, w, length)


def _counts(x: Any, w: Any, length: int) -> Any:
    """``bincount``'s scatter: the weights ``w`` added at ``x`` (clipped at 0; those at or
    past ``length`` dropped)."""
    idx = _ufuncs.maximum(convert(x, _int()), 0)
    w = _ufuncs.where(_ufuncs.less(idx, length), w, _creation.zeros((), aval(w).dtype))
    base = _creation.zeros((length,), aval(w).dtype)
    if length == 0:
        return out(base)
    return out(ix.scatter_add(base, idx, w, axis=0))


def searchsorted(
    a: ArrayLike,
    v: ArrayLike,
    side: str = "left",
    sorter: ArrayLike | None = None,
    *,
    method: str = "scan",
) -> Any:
    """Insertion indices of ``v`` in the sorted 1-D ``a`` (``side="left"``: before equal
    entries; ``"right"``: after). A vectorised binary search (``log2(n)`` gathers)."""
    check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(
            f"{side!r} is an invalid value for keyword 'side'. Expected one of ['left', 'right']"
        )
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(
            f"method={method!r} not recognized; expected one of 'scan', 'scan_unrolled', "
            "'sort', or 'compare_all'"
        )
    a, v = _creation.asarray(a), _creation.asarray(v)
    if aval(a).ndim != 1:
        raise ValueError(f"a should be 1-dimensional; got shape {aval(a).shape}")

    a, v = promote("searchsorted", a, v)
    a, v = _creation.asarray(a), _creation.asarray(v)
    if sorter is not None:
        a = _indexing.take(a, sorter)
    n = aval(a).shape[0]
    i32 = np.dtype(np.int32)
    lo = _creation.zeros(aval(v).shape, i32)
    hi = _creation.full(aval(v).shape, n, i32)
    for _ in range(int(n).bit_length()):
        mid = (lo + hi) // 2
        am = _indexing.take(a, _ufuncs.minimum(mid, max(n - 1, 0)))
        go = _lt(am, v) if side == "left" else _ufuncs.logical_not(_lt(v, am))
        active = _ufuncs.less(lo, hi)
        lo = _ufuncs.where(_ufuncs.logical_and(go, active), mid + 1, lo)
        hi = _ufuncs.where(_ufuncs.logical_and(_ufuncs.logical_not(go), active), mid, hi)
    return out(convert(lo, i32))


def digitize(
    x: ArrayLike, bins: ArrayLike, right: bool = False, *, method: str | None = None
) -> Any:
    """Index of the bin each ``x`` falls in; ``bins`` increasing or decreasing."""
    check_arraylike("digitize", x, bins)
    x, bins = _creation.asarray(x), _creation.asarray(bins)
    if aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got {aval(bins).shape}")
    n = aval(bins).shape[0]
    if n == 0:
        return out(_creation.zeros(aval(x).shape, np.int32))
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    inc = searchsorted(bins, x, side=side, **kw)
    dec = n - searchsorted(bins[::-1], x, side=side, **kw)
    return out(_ufuncs.where(bins[-1] >= bins[0], inc, dec))
