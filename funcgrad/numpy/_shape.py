"""Shape manipulation: reshape, transpose, stacking and unstacking, splitting, ``flip``,
padding, rolling (``fliplr``, ``flipud`` and ``rot90`` are in ``_rotations.py``).

All of these move data without arithmetic, so they keep the operand's dtype and
weak type (``jnp.reshape(2.0, (1,))`` is a weakly typed ``float``); joins of
several arrays promote them on JAX's lattice first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import sharding_types
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchJoinForm, TorchParam
from funcgrad.core.errors import ConcretizationTypeError, ShardingTypeError
from funcgrad.core.interp import Tracer
from funcgrad.core.symbolic import SymDim
from funcgrad.numpy import _info
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    broadcast_to_shape,
    check_arraylike,
    convert,
    fmt,
    here,
    index,
    normalize_axes,
    normalize_axis,
    out,
    prep,
    promote,
    unsupported,
    user_dtype,
)
from funcgrad.numpy._core import broadcast_shapes as _bshapes
from funcgrad.numpy._pad_modes import pad_linear_ramp, pad_stat
from funcgrad.numpy._ufuncs import remainder, subtract, where
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh
from funcgrad.primitives.split import split as split_pieces
from funcgrad.sharding import auto_axes, reshard


def _ints(name: str, what: str, v: Any) -> tuple[int, ...]:
    if isinstance(v, (int, np.integer, Tracer)):
        return (index(v, what, name),)
    # (a symbolic dimension of a shape template stays symbolic: its value is not read)
    return tuple(s if type(s) is SymDim else index(s, what, name) for s in v)


def reshape(
    a: ArrayLike,
    shape: Any = None,
    order: str = "C",
    *,
    newshape: Any = None,
    copy: bool | None = None,
    out_sharding: Any = None,
) -> Any:
    """Reshape in row-major (``order="C"``) or column-major (``"F"``) order; one
    dimension may be ``-1`` (inferred); ``out_sharding`` types the result over explicit
    mesh axes (as ``lax.reshape``'s)."""
    del copy
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError(f"reshape: missing the new shape{here()}")
    if order == "F":
        # column-major: reverse the axes, reshape row-major to the reversed shape (and spec)
        dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        rev = None if out_sharding is None else sharding_types.reversed_spec(out_sharding)
        return transpose(reshape(transpose(as_array(a, "reshape")), dims[::-1], out_sharding=rev))
    if order == "A":
        raise unsupported("reshape with order='A' (as jnp.reshape)")
    if order != "C":
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}{here()}")
    a = as_array(a, "reshape")
    av = aval(a)
    new = list(_ints("reshape", "new shape", shape))
    # TypeErrors, as jnp's (lax's shape check)
    if new.count(-1) > 1:
        raise TypeError(
            f"reshape: can only specify one unknown dimension, got {tuple(new)} for an array "
            f"{fmt(a)}{here()}"
        )
    if any(s < -1 for s in new):
        raise TypeError(f"reshape: negative dimension in {tuple(new)} for {fmt(a)}{here()}")
    shape = sh.infer_minus_one(new, av.size)
    if shape is None or math.prod(shape) != av.size:
        raise TypeError(
            f"reshape: cannot reshape an array {fmt(a)} of size {av.size} into shape "
            f"{tuple(new)}{here()}"
        )
    return out(sh.reshape(a, shape, out_sharding=out_sharding))


def ravel(a: ArrayLike, order: str = "C", *, out_sharding: Any = None) -> Any:
    """Flatten to 1-D (``out_sharding``: the result's type, as ``reshape``'s)."""
    check_arraylike("ravel", a)
    return reshape(a, (-1,), order, out_sharding=out_sharding)


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Any:
    """Permute axes (reverse them by default)."""
    a = as_array(a, "transpose")
    nd = aval(a).ndim
    if axes is None:
        perm = tuple(range(nd))[::-1]
    else:
        axes = tuple(axes)
        perm = tuple(normalize_axis(ax, nd, "transpose") for ax in axes)
        _check_perm("transpose", axes, perm, a)
    return out(sh.transpose(a, perm))


def _check_perm(name: str, axes: Any, perm: tuple[int, ...], a: Any) -> None:
    """A ``TypeError`` (as ``jnp``) unless ``perm`` permutes all of ``a``'s axes."""
    if len(perm) != aval(a).ndim or len(set(perm)) != len(perm):
        what = "repeats an axis" if len(set(perm)) != len(perm) else "has the wrong length"
        raise TypeError(
            f"{name}: axes {tuple(axes)} is not a permutation of the axes of an array "
            f"{fmt(a)} of shape {aval(a).shape} (it {what}){here()}"
        )


def permute_dims(a: ArrayLike, /, axes: Sequence[int]) -> Any:
    """Permute axes (Array API name of :func:`transpose`)."""
    return transpose(a, axes)


def matrix_transpose(x: ArrayLike, /) -> Any:
    """Swap the last two axes."""
    x = as_array(x, "matrix_transpose")
    if aval(x).ndim < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 dimensions, got {fmt(x)}{here()}")
    return swapaxes(x, -1, -2)


def moveaxis(a: ArrayLike, source: Any, destination: Any) -> Any:
    """Move axes ``source`` to positions ``destination``."""
    a = as_array(a, "moveaxis")
    nd = aval(a).ndim
    src, dst = (
        tuple(normalize_axis(ax, nd, "moveaxis") for ax in v)
        if isinstance(v, (Sequence, np.ndarray))
        else (normalize_axis(v, nd, "moveaxis"),)
        for v in (source, destination)
    )
    if len(src) != len(dst):
        raise ValueError(
            f"moveaxis: source {source!r} and destination {destination!r} must have the same "
            f"number of elements{here()}"
        )
    for v, name in ((src, "source"), (dst, "destination")):
        if len(set(v)) != len(v):
            raise TypeError(
                f"moveaxis: repeated axis in {name} {v} for an array {fmt(a)} of shape "
                f"{aval(a).shape}{here()}"
            )
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return out(sh.transpose(a, tuple(order)))


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Any:
    """Interchange two axes."""
    a = as_array(a, "swapaxes")
    nd = aval(a).ndim
    i, j = normalize_axis(axis1, nd, "swapaxes"), normalize_axis(axis2, nd, "swapaxes")
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return out(sh.transpose(a, tuple(perm)))


def expand_dims(a: ArrayLike, axis: Any) -> Any:
    """Insert size-1 axes at positions ``axis`` of the result."""
    a = as_array(a, "expand_dims")
    av = aval(a)
    n_new = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    axes = normalize_axes(axis, av.ndim + n_new, "expand_dims")
    shape = list(av.shape)
    for x in sorted(axes):
        shape.insert(x, 1)
    return out(sh.reshape(a, tuple(shape)))


def squeeze(a: ArrayLike, axis: Any = None) -> Any:
    """Remove size-1 axes (all of them, or those in ``axis``)."""
    a = as_array(a, "squeeze")
    av = aval(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(av.shape) if s == 1)
    else:
        axes = normalize_axes(axis, av.ndim, "squeeze")
        bad = [i for i in axes if av.shape[i] != 1]
        if bad:
            raise ValueError(
                f"squeeze: cannot select an axis to squeeze out which has size not equal to "
                f"one: axis {bad[0]} of {fmt(a)}{here()}"
            )
    return out(sh.reshape(a, tuple(s for i, s in enumerate(av.shape) if i not in axes)))


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape NumPy broadcasting gives arrays of ``shapes``."""
    try:
        return tuple(
            int(s)
            for s in np.broadcast_shapes(*[_ints("broadcast_shapes", "shape", s) for s in shapes])
        )
    except ValueError:
        raise ValueError(
            f"broadcast_shapes: shapes {', '.join(map(str, shapes))} are incompatible{here()}"
        ) from None


def broadcast_to(array: ArrayLike, shape: Any, *, out_sharding: Any = None) -> Any:
    """Broadcast ``array`` to ``shape`` by NumPy's rules (``out_sharding``: resharded)."""
    a = as_array(array, "broadcast_to")
    shape = _ints("broadcast_to", "shape", shape)
    res = broadcast_to_shape(a, shape, "broadcast_to")
    return out(res if out_sharding is None else reshard(res, out_sharding))


def broadcast_arrays(*args: ArrayLike) -> list[Any]:
    """Broadcast arrays against each other."""

    check_arraylike("broadcast_arrays", *args)
    arrs = [as_array(a, "broadcast_arrays") for a in args]
    shape = _bshapes("broadcast_arrays", *arrs)
    return [out(broadcast_to_shape(a, shape, "broadcast_arrays")) for a in arrs]


def _atleast(name: str, nd: int, arys: tuple) -> Any:
    res = []
    for x in arys:
        a = as_array(x, name)
        s = aval(a).shape
        if len(s) < nd:
            if nd == 3 and len(s) == 1:
                s = (1, s[0], 1)
            elif nd == 3 and len(s) == 2:
                s = (*s, 1)
            else:
                s = (1,) * (nd - len(s)) + s
            a = sh.reshape(a, s)
        res.append(out(a))
    return res[0] if len(res) == 1 else res


def atleast_1d(*arys: ArrayLike) -> Any:
    """Views with at least one dimension (a list for several inputs)."""
    check_arraylike("atleast_1d", *arys)
    return _atleast("atleast_1d", 1, arys)


def atleast_2d(*arys: ArrayLike) -> Any:
    """Views with at least two dimensions."""
    check_arraylike("atleast_2d", *arys)
    return _atleast("atleast_2d", 2, arys)


def atleast_3d(*arys: ArrayLike) -> Any:
    """Views with at least three dimensions (``(n,)`` → ``(1, n, 1)``)."""
    check_arraylike("atleast_3d", *arys)
    return _atleast("atleast_3d", 3, arys)


def _seq(name: str, arrays: Any) -> list[Any]:
    if isinstance(arrays, (Tracer, np.ndarray)) or hasattr(arrays, "shape"):
        a = as_array(arrays, name)
        return [
            sh.reshape(
                sh.slice(a, (i,) + (0,) * (aval(a).ndim - 1), (i + 1, *aval(a).shape[1:])),
                aval(a).shape[1:],
            )
            for i in range(aval(a).shape[0])
        ]
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{name}: need at least one array{here()}")
    return [as_array(x, name) for x in arrays]


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0, dtype: Any = None) -> Any:
    """Join arrays along an existing axis (flattened first when ``axis`` is ``None``)."""
    check_arraylike("concatenate", *arrays)
    arrs = _seq("concatenate", arrays)
    if axis is None:
        arrs = [sh.reshape(a, (aval(a).size,)) for a in arrs]
        axis = 0
    arrs = promote("concatenate", *arrs)
    if dtype is not None:
        dt = user_dtype(dtype, "concatenate")
        arrs = [convert(a, dt) for a in arrs]
    arrs = [as_array(a, "concatenate") for a in arrs]
    nd = aval(arrs[0]).ndim
    if nd == 0:
        raise ValueError(f"concatenate: zero-dimensional arrays cannot be concatenated{here()}")
    if any(aval(a).ndim != nd for a in arrs):
        raise TypeError(
            f"concatenate: all the input arrays must have the same number of dimensions, got "
            f"{fmt(*arrs)}{here()}"
        )
    ax = normalize_axis(axis, nd, "concatenate")
    for a in arrs:
        if any(
            s != t for i, (s, t) in enumerate(zip(aval(a).shape, aval(arrs[0]).shape)) if i != ax
        ):
            raise TypeError(
                f"concatenate: all the input array dimensions except for the concatenation axis "
                f"{ax} must match exactly, got {fmt(*arrs)}{here()}"
            )
    return out(sh.concatenate(*arrs, dimension=ax))


concat = concatenate


def stack(arrays: Sequence[ArrayLike], axis: int = 0, dtype: Any = None) -> Any:
    """Join arrays of one shape along a new axis."""
    arrs = _seq("stack", arrays)
    shapes = {aval(a).shape for a in arrs}
    if len(shapes) != 1:
        raise ValueError(
            f"stack: all input arrays must have the same shape, got {fmt(*arrs)}{here()}"
        )
    ax = normalize_axis(axis, aval(arrs[0]).ndim + 1, "stack")
    return concatenate([expand_dims(a, ax) for a in arrs], axis=ax, dtype=dtype)


def vstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Any:
    """Stack arrays vertically (row-wise)."""
    arrs = _seq("vstack", tup)
    return concatenate([atleast_2d(a) for a in arrs], axis=0, dtype=dtype)


def hstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Any:
    """Stack arrays horizontally (column-wise)."""
    arrs = [atleast_1d(a) for a in _seq("hstack", tup)]
    return concatenate(arrs, axis=0 if aval(arrs[0]).ndim == 1 else 1, dtype=dtype)


def dstack(tup: Sequence[ArrayLike], dtype: Any = None) -> Any:
    """Stack arrays along the third axis."""
    return concatenate([atleast_3d(a) for a in _seq("dstack", tup)], axis=2, dtype=dtype)


def column_stack(tup: Sequence[ArrayLike]) -> Any:
    """Stack 1-D arrays as columns of a 2-D array."""
    arrs = []
    for a in _seq("column_stack", tup):
        arrs.append(reshape(a, (-1, 1)) if aval(a).ndim < 2 else a)
    return concatenate(arrs, axis=1)


def _split_at(name: str, a: Any, bounds: list[int], ax: int) -> list[Any]:
    av = aval(a)
    n = av.shape[ax]
    cut = [min(max(b, 0), n) for b in bounds]
    sizes = [hi - lo for lo, hi in itertools.pairwise(cut)]
    if cut[0] == 0 and cut[-1] == n and min(sizes) >= 0:  # a partition: one split
        return [out(p) for p in split_pieces(a, sizes, ax)]
    res = []
    for lo, hi in itertools.pairwise(cut):
        start = [0] * av.ndim
        limit = list(av.shape)
        start[ax], limit[ax] = lo, max(lo, hi)
        res.append(out(sh.slice(a, tuple(start), tuple(limit))))
    return res


def _split(name: str, ary: ArrayLike, sections: Any, axis: int, equal: bool) -> list[Any]:
    a = as_array(ary, name)
    av = aval(a)
    ax = normalize_axis(axis, av.ndim, name)
    n = av.shape[ax]
    if isinstance(sections, (int, np.integer)):
        k = int(sections)
        if k <= 0:
            raise ValueError(f"{name}: number sections must be larger than 0, got {k}{here()}")
        if equal and n % k:
            raise ValueError(
                f"{name}: array split does not result in an equal division: axis {ax} of "
                f"{fmt(a)} into {k} sections{here()}"
            )
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = [0, *np.cumsum(sizes).tolist()]
    else:
        bounds = [0]
        for i in sections:
            i = index(i, "split index", name)
            bounds.append(i + n if i < 0 else i)
        bounds.append(n)
    return _split_at(name, a, bounds, ax)


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections, or at the given indices, along ``axis``."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like :func:`split`, but sections may differ in size by one."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def hsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    a = as_array(ary, "hsplit")
    return split(a, indices_or_sections, axis=1 if aval(a).ndim > 1 else 0)


def vsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """Split along axis 0."""
    check_arraylike("vsplit", ary)
    return split(ary, indices_or_sections, axis=0)


def flip(m: ArrayLike, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    a = as_array(m, "flip")
    axes = normalize_axes(axis, aval(a).ndim, "flip")
    return out(sh.rev(a, tuple(sorted(axes))))


def _pad_widths(name: str, pad_width: Any, nd: int) -> list[tuple[int, int]]:
    if isinstance(pad_width, Tracer):
        raise unsupported(f"{name} with a traced pad_width")
    try:
        pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (nd, 2))
    except ValueError:
        raise ValueError(
            f"{name}: pad_width {pad_width!r} does not fit an array of {nd} dimensions{here()}"
        ) from None
    if (pw < 0).any():
        raise ValueError(f"{name}: pad_width {pad_width!r} must be non-negative{here()}")
    return [(int(lo), int(hi)) for lo, hi in pw]


def _pad_index(mode: str, n: int, lo: int, hi: int) -> np.ndarray:
    i = np.arange(-lo, n + hi)
    if mode == "edge":
        j = np.clip(i, 0, n - 1)
    elif mode == "wrap":
        j = i % n
    elif mode == "reflect":
        if n == 1:
            j = np.zeros_like(i)
        else:
            p = 2 * (n - 1)
            j = i % p
            j = np.where(j >= n, p - j, j)
    else:  # symmetric
        p = 2 * n
        j = i % p
        j = np.where(j >= n, p - 1 - j, j)
    return j.astype(np.int32)


#: the keyword arguments each ``pad`` mode takes (as NumPy's)
_PAD_OPTIONS: dict[str, set[str]] = {
    "edge": set(),
    "wrap": set(),
    "linear_ramp": {"end_values"},
    "maximum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
    "minimum": {"stat_length"},
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
}


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array. Modes ``constant`` (``constant_values``), ``empty`` (zeros, as
    JAX), ``edge``, ``wrap``, ``reflect`` and ``symmetric``."""
    a = as_array(array, "pad")
    av = aval(a)
    widths = _pad_widths("pad", pad_width, av.ndim)
    if mode == "empty":
        # NumPy leaves the padding uninitialised; JAX fills it with zeros, as here
        if kwargs:
            raise ValueError(
                f"unsupported keyword arguments for mode 'empty': {set(kwargs)}{here()}"
            )
        zero = convert(np.zeros((), av.dtype), av.dtype, av.weak_type)
        return out(sh.pad(a, zero, [(lo, hi, 0) for lo, hi in widths]))
    if mode == "constant":
        cv = kwargs.pop("constant_values", 0)
        if kwargs:
            raise ValueError(
                f"unsupported keyword arguments for mode 'constant': {set(kwargs)}{here()}"
            )
        if isinstance(cv, Tracer) or (hasattr(cv, "shape") and not isinstance(cv, np.ndarray)):
            vals = convert(prep(cv, "pad"), av.dtype)
            if aval(vals).shape != ():
                raise unsupported("pad with a non-scalar traced constant_values")
            return out(sh.pad(a, vals, [(lo, hi, 0) for lo, hi in widths]))
        cvs = np.broadcast_to(np.asarray(cv), (av.ndim, 2)) if av.ndim else np.zeros((0, 2))
        if av.ndim and np.all(cvs == cvs.flat[0]):
            v = convert(np.asarray(cvs.flat[0]).astype(av.dtype), av.dtype, av.weak_type)
            return out(sh.pad(a, v, [(lo, hi, 0) for lo, hi in widths]))
        for d, (lo, hi) in enumerate(widths):
            for side, w in ((0, lo), (1, hi)):
                if w:
                    cfg = [(0, 0, 0)] * av.ndim
                    cfg[d] = (w, 0, 0) if side == 0 else (0, w, 0)
                    v = np.asarray(cvs[d, side]).astype(av.dtype)
                    a = sh.pad(a, convert(v, av.dtype, av.weak_type), cfg)
        return out(a)
    if not isinstance(mode, str) or mode not in _PAD_OPTIONS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.{here()}")
    allowed = _PAD_OPTIONS.get(mode)
    if allowed is not None and set(kwargs) - allowed:
        raise ValueError(
            f"unsupported keyword arguments for mode '{mode}': {set(kwargs) - allowed}{here()}"
        )
    if mode in ("maximum", "minimum", "mean", "median"):
        return out(pad_stat(a, widths, mode, kwargs.get("stat_length")))
    if mode == "linear_ramp":
        return out(pad_linear_ramp(a, widths, kwargs.get("end_values", 0)))
    if mode not in ("edge", "wrap", "reflect", "symmetric"):
        raise unsupported(f"pad with mode={mode!r}")
    if mode in ("reflect", "symmetric") and kwargs.get("reflect_type", "even") == "even":
        kwargs.pop("reflect_type", None)
    if kwargs:
        raise unsupported(f"pad mode={mode!r} with options {sorted(kwargs)}")
    for d, (lo, hi) in enumerate(widths):
        if lo or hi:
            n = aval(a).shape[d]
            if n == 0:
                raise ValueError(f"pad: can't extend the empty axis {d} of {fmt(a)}{here()}")
            a = ix.gather(a, _pad_index(mode, n, lo, hi), axis=d)
    return out(a)


def tile(A: ArrayLike, reps: Any) -> Any:
    """Repeat the whole array ``reps`` times along each axis."""
    a = as_array(A, "tile")
    reps = _ints("tile", "reps", reps)
    av = aval(a)
    nd = max(av.ndim, len(reps))
    shape = (1,) * (nd - av.ndim) + av.shape
    reps = (1,) * (nd - len(reps)) + tuple(reps)
    a = sh.reshape(a, shape)
    inter = tuple(x for r, s in zip(reps, shape) for x in (r, s))
    b = sh.broadcast_in_dim(a, inter, tuple(range(1, 2 * nd, 2)))
    return out(sh.reshape(b, tuple(r * s for r, s in zip(reps, shape))))


def repeat(
    a: ArrayLike,
    repeats: Any,
    axis: int | None = None,
    *,
    total_repeat_length: int | None = None,
    out_sharding: Any = None,
) -> Any:
    """Repeat each element ``repeats`` times along ``axis`` (flattened when ``None``);
    ``out_sharding`` places the result over explicit mesh axes (computed with them
    automatic, as JAX's)."""
    check_arraylike("repeat", a, repeats)
    a = as_array(a, "repeat")
    if out_sharding is not None:  # (array repeats enter the region as operands)
        run = lambda v, r: repeat(v, r, axis, total_repeat_length=total_repeat_length)
        if total_repeat_length is not None and getattr(repeats, "ndim", 0) > 0:
            return auto_axes(run, out_sharding=out_sharding)(a, repeats)
        return auto_axes(lambda v: run(v, repeats), out_sharding=out_sharding)(a)
    if axis is None or aval(a).ndim == 0:
        a = sh.reshape(a, (aval(a).size,))
        axis = 0
    av = aval(a)
    ax = normalize_axis(axis, av.ndim, "repeat")
    if isinstance(repeats, Tracer) or (
        total_repeat_length is not None and np.ndim(repeats) == 1 and np.size(repeats) > 1
    ):
        return out(_repeat_dynamic(a, repeats, ax, total_repeat_length))
    reps = np.asarray(repeats)
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.reshape(()))
        if r < 0:
            raise ValueError(f"repeat: repeats may not be negative, got {r}{here()}")
        shape = av.shape[: ax + 1] + (r,) + av.shape[ax + 1 :]
        dims = tuple(i for i in range(len(shape)) if i != ax + 1)
        b = sh.broadcast_in_dim(a, shape, dims)
        res = sh.reshape(b, av.shape[:ax] + (av.shape[ax] * r,) + av.shape[ax + 1 :])
    else:
        if reps.shape != (av.shape[ax],):
            raise ValueError(
                f"repeat: repeats of shape {reps.shape} do not match axis {ax} of {fmt(a)}{here()}"
            )
        idx = np.repeat(np.arange(av.shape[ax], dtype=np.int32), reps.astype(np.int64))
        res = ix.gather(a, idx, axis=ax)
    if total_repeat_length is not None and aval(res).shape[ax] != total_repeat_length:
        return out(_repeat_dynamic(a, repeats, ax, total_repeat_length))
    return out(res)


def _repeat_dynamic(a: Any, repeats: Any, ax: int, total: int | None) -> Any:
    """``repeat`` with (possibly traced) per-element ``repeats`` and a static output length
    ``total``: output ``j`` takes the element whose cumulative repeat count first exceeds
    ``j`` (the last element pads a short total, as jnp). That element's index is the number
    of cumulative counts ``<= j``: one mark per element at its end position (clamped to
    ``total``), summed cumulatively."""
    if total is None:
        raise ConcretizationTypeError(
            "jnp.repeat with non-constant repeats requires total_repeat_length to be given "
            f"(a static int){here()}"
        )
    n = aval(a).shape[ax]
    i32 = np.dtype("int32")
    reps = convert(broadcast_to(as_array(repeats, "repeat"), (n,)), i32)
    if n == 0 or total == 0:
        return ix.gather(a, np.zeros((total,), i32), axis=ax)
    ends = ew.min(rd.cumsum(reps, axis=0), np.full((n,), total, i32))
    marks = ix.scatter_add(np.zeros((total + 1,), i32), ends, np.ones((n,), i32), axis=0)
    idx = rd.cumsum(sh.slice(marks, (0,), (total,)), axis=0)
    idx = ew.min(idx, np.full((total,), n - 1, i32))
    return ix.gather(a, idx, axis=ax)


def _roll1(a: Any, shift: Any, ax: int) -> Any:
    n = aval(a).shape[ax]
    if n == 0:
        return a
    if isinstance(shift, Tracer):
        idx = remainder(
            subtract(np.arange(n, dtype=np.int32), convert(shift, np.dtype("int32"))), n
        )
        return ix.gather(a, idx, axis=ax)
    k = index(shift, "shift", "roll") % n
    if k == 0:
        return a
    lo, hi = _split_at("roll", a, [0, n - k, n], ax)
    return sh.concatenate(hi, lo, dimension=ax)


def roll(a: ArrayLike, shift: Any, axis: Any = None) -> Any:
    """Roll elements along ``axis`` (of the flattened array when ``None``)."""
    a = as_array(a, "roll")
    av = aval(a)
    if axis is None:
        return out(sh.reshape(_roll1(sh.reshape(a, (av.size,)), shift, 0), av.shape))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length{here()}")
    for s, ax in zip(shifts, axes):
        a = _roll1(a, s, normalize_axis(ax, av.ndim, "roll"))
    return out(a)


def _tri_mask(name: str, m: ArrayLike, k: int, lower: bool) -> Any:

    a = as_array(m, name)
    av = aval(a)
    if av.ndim < 2:
        raise ValueError(f"{name}: input must be at least 2-d, got {fmt(a)}{here()}")
    k = index(k, "k", name)
    n_r, n_c = av.shape[-2:]
    i = sh.iota(np.dtype("int32"), (n_r, n_c), 0)
    j = sh.iota(np.dtype("int32"), (n_r, n_c), 1)
    d = ew.sub(j, i)
    kk = np.asarray(k, np.int32)
    mask = ew.le(d, kk) if lower else ew.ge(d, kk)
    return where(mask, a, convert(0, av.dtype, av.weak_type))


def tril(m: ArrayLike, k: int = 0) -> Any:
    """Lower triangle (zero above the ``k``-th diagonal) of the last two axes."""
    return _tri_mask("tril", m, k, lower=True)


def triu(m: ArrayLike, k: int = 0) -> Any:
    """Upper triangle (zero below the ``k``-th diagonal) of the last two axes."""
    return _tri_mask("triu", m, k, lower=False)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset`` diagonal of the ``axis1``/``axis2`` planes, as the last axis."""
    a = as_array(a, "diagonal")
    av = aval(a)
    if av.ndim < 2:
        raise ValueError(f"diagonal: input must be at least 2-d, got {fmt(a)}{here()}")
    a1, a2 = normalize_axis(axis1, av.ndim, "diagonal"), normalize_axis(axis2, av.ndim, "diagonal")
    if a1 == a2:
        raise TypeError(
            f"diagonal: axis1 and axis2 cannot be the same ({a1}), got {fmt(a)}{here()}"
        )
    offset = index(offset, "offset", "diagonal")
    rest = [i for i in range(av.ndim) if i not in (a1, a2)]
    x = sh.transpose(a, (*rest, a1, a2))
    n, m = av.shape[a1], av.shape[a2]
    rows = (
        np.arange(max(0, -offset), min(n, m - offset))
        if min(n, m - offset) > max(0, -offset)
        else np.arange(0)
    )
    flat_idx = (rows * m + rows + offset).astype(np.int32)
    x = sh.reshape(x, (*[av.shape[i] for i in rest], n * m))
    if n * m == 0:
        return out(sh.reshape(x, (*[av.shape[i] for i in rest], 0)))
    return out(ix.gather(x, flat_idx, axis=len(rest)))


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Any:
    """``arr`` with ``values`` appended (both flattened when ``axis`` is ``None``)."""
    check_arraylike("ravel", arr) or check_arraylike("ravel", values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Any, ...]:
    """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed."""
    x = as_array(x, "unstack")
    if aval(x).ndim == 0:
        raise ValueError(
            "Unstack requires arrays with rank > 0, however a scalar array was passed."
        )
    ax = normalize_axis(axis, aval(x).ndim, "unstack")
    if sharding_types.spec_of(aval(x))[ax] is not None:
        msg = f"unstack operand cannot be sharded on the unstacking axis {ax}. Got operand type"
        raise ShardingTypeError(f"{msg}={aval(x).str_short()}")
    m = moveaxis(x, ax, 0)
    return tuple(m[i] for i in range(aval(m).shape[0]))


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
    return moveaxis(a, ax, start)


def dsplit(ary: ArrayLike, indices_or_sections: Any) -> list[Any]:
    """Split along the third axis."""
    if _info.ndim_of(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, axis=2)


# the array functions PyTorch has as the same op: its forms come from these rows (array_row.py)
_DIAG = (TorchParam("diagonal", "k", "int", 0),)
_SQUARE = ((3, 3), (-1,)), ((2, 3, 4), ())
for _f in (tril, triu):
    _2d = (2, None, f"{_f.__name__}: input tensor must have at least 2 dimensions")
    _node = f"{_f.__name__.capitalize()}Backward0"
    ArrayRow(_f, torch=TorchArrayForm(_node, _DIAG, inplace=True, ndim=_2d, samples=_SQUARE))
_DIMS = (TorchParam("dims", "axis", "unique_dims"),)
_FLIPS = (((2, 3), ((0, 1),)),)
_FLIP = TorchArrayForm("FlipBackward0", _DIMS, method_varargs="dims", samples=_FLIPS, out=False)
ArrayRow(flip, torch=_FLIP)  # (PyTorch's flip, tile, roll take no ``out=``)
_REPS = (TorchParam("dims", "reps", "repeats"),)
_TILES = ((2, 3), ((2, 1),)), ((3,), ((2, 2),)), ((), ((2, 3),))
_TILE = TorchArrayForm("RepeatBackward0", _REPS, method_varargs="dims", samples=_TILES, out=False)
ArrayRow(tile, torch=_TILE)
_SHIFTS = (TorchParam("shifts", "shift", "shifts"), TorchParam("dims", "axis", "dims", None))
_ROLLS = ((3, 4), (1,)), ((3, 4), ((1, -2), (0, 1)))
_ALIGNED = {"aligned": ("shifts", "dims"), "empty_unchecked": True, "out": False}
ArrayRow(roll, torch=TorchArrayForm("RollBackward0", _SHIFTS, samples=_ROLLS, **_ALIGNED))
# the joining functions: PyTorch's torch.cat/stack/hstack/... come from these rows
_PAIR = (((2, 3), (1, 3)), (0,)), (((2, 3), (2, 1)), (-1,))
ArrayRow(
    concatenate,
    torch=TorchJoinForm(
        "CatBackward0", name="cat", aliases=("concat", "concatenate"), axis=True, samples=_PAIR
    ),
)
_SAME = (((2, 3), (2, 3)), (0,)), (((2, 3), (2, 3)), (2,))
ArrayRow(stack, torch=TorchJoinForm("StackBackward0", new_dim=True, samples=_SAME))
for _f, _layout, _aliases, _cases in (
    (hstack, "h", (), ((((2, 3), (2, 1)), ()), (((3,), (2,)), ()))),
    (vstack, "v", ("row_stack",), ((((3,), (2, 3)), ()),)),
    (dstack, "d", (), ((((2, 3), (2, 3, 2)), ()),)),
    (column_stack, "column", (), ((((3,), (3, 2)), ()),)),
):
    _form = TorchJoinForm(
        "CatBackward0", aliases=_aliases, dim=None, layout=_layout, samples=_cases
    )
    ArrayRow(_f, torch=_form)
