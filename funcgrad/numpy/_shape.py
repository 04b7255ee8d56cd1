"""Shape manipulation: reshape, transpose, stacking, splitting, flipping, padding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy._core import (
    ArrayLike,
    aval,
    broadcast_shapes,
    broadcast_to_shape,
    normalize_axes,
    normalize_axis,
    prep,
    promote,
)
from funcgrad.primitives import shape as sh


def _arr(x: ArrayLike, name: str) -> Any:
    x = prep(x, name)
    if type(x) in (bool, int, float, complex):
        x = np.asarray(x, dtypes.python_scalar_dtype(x))
    return x


def reshape(a: ArrayLike, newshape: Any, order: str = "C") -> Any:
    """Row-major reshape; one dimension may be -1."""
    if order != "C":
        raise NotImplementedError(f"reshape with order={order!r}")
    a = _arr(a, "reshape")
    if isinstance(newshape, (int, np.integer)):
        newshape = (int(newshape),)
    newshape = tuple(int(s) for s in newshape)
    size = aval(a).size
    if newshape.count(-1) > 1:
        raise ValueError("reshape: can only specify one unknown dimension")
    if -1 in newshape:
        known = int(np.prod([s for s in newshape if s != -1], dtype=np.int64))
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape array of size {size} into shape {newshape}")
        newshape = tuple(size // known if s == -1 else s for s in newshape)
    if int(np.prod(newshape, dtype=np.int64)) != size:
        raise ValueError(
            f"reshape: cannot reshape array of shape {aval(a).shape} (size {size}) into "
            f"shape {newshape}"
        )
    if newshape == aval(a).shape:
        return a
    return sh.reshape(a, newshape)


def ravel(a: ArrayLike) -> Any:
    """Flatten to 1-D."""
    return reshape(a, (-1,))


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Any:
    """Permute axes (reverse them by default)."""
    a = _arr(a, "transpose")
    nd = aval(a).ndim
    perm = tuple(range(nd))[::-1] if axes is None else normalize_axes(tuple(axes), nd, "transpose")
    if len(perm) != nd:
        raise ValueError(f"transpose: axes {axes} don't match array of dimension {nd}")
    if perm == tuple(range(nd)):
        return a
    return sh.transpose(a, perm)


def moveaxis(a: ArrayLike, source: Any, destination: Any) -> Any:
    """Move axes to new positions."""
    a = _arr(a, "moveaxis")
    nd = aval(a).ndim
    src = normalize_axes(source, nd, "moveaxis")
    dst = normalize_axes(destination, nd, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Any:
    """Swap two axes."""
    a = _arr(a, "swapaxes")
    nd = aval(a).ndim
    i, j = normalize_axis(axis1, nd, "swapaxes"), normalize_axis(axis2, nd, "swapaxes")
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def expand_dims(a: ArrayLike, axis: Any) -> Any:
    """Insert size-1 axes."""
    a = _arr(a, "expand_dims")
    av = aval(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_nd = av.ndim + len(axes)
    axes = sorted(normalize_axis(x, out_nd, "expand_dims") for x in axes)
    shape = list(av.shape)
    for x in axes:
        shape.insert(x, 1)
    return sh.reshape(a, tuple(shape))


def squeeze(a: ArrayLike, axis: Any = None) -> Any:
    """Remove size-1 axes."""
    a = _arr(a, "squeeze")
    av = aval(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(av.shape) if s == 1)
    else:
        axes = normalize_axes(axis, av.ndim, "squeeze")
        for i in axes:
            if av.shape[i] != 1:
                raise ValueError(
                    f"squeeze: cannot select an axis to squeeze out which has size not equal "
                    f"to one (axis {i} of shape {av.shape})"
                )
    if not axes:
        return a
    return sh.reshape(a, tuple(s for i, s in enumerate(av.shape) if i not in axes))


def broadcast_to(a: ArrayLike, shape: Any) -> Any:
    """Broadcast to ``shape`` by NumPy's rules."""
    a = _arr(a, "broadcast_to")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if broadcast_shapes("broadcast_to", aval(a).shape, shape) != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {aval(a).shape} to {shape}")
    return broadcast_to_shape(a, shape)


def broadcast_arrays(*args: ArrayLike) -> list[Any]:
    """Broadcast arrays against each other."""
    arrs = [_arr(a, "broadcast_arrays") for a in args]
    shape = broadcast_shapes("broadcast_arrays", *[aval(a).shape for a in arrs])
    return [broadcast_to_shape(a, shape) for a in arrs]


def atleast_1d(a: ArrayLike) -> Any:
    a = _arr(a, "atleast_1d")
    return reshape(a, (1,)) if aval(a).ndim == 0 else a


def atleast_2d(a: ArrayLike) -> Any:
    a = _arr(a, "atleast_2d")
    nd = aval(a).ndim
    return reshape(a, (1,) * (2 - nd) + aval(a).shape) if nd < 2 else a


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0) -> Any:
    """Join arrays along an existing axis."""
    if not len(arrays):
        raise ValueError("concatenate: need at least one array to concatenate")
    arrs = [_arr(a, "concatenate") for a in arrays]
    if axis is None:
        arrs = [ravel(a) for a in arrs]
        axis = 0
    arrs = [_arr(a, "concatenate") for a in promote("concatenate", *arrs)]
    nd = aval(arrs[0]).ndim
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, nd, "concatenate")
    if len(arrs) == 1:
        return arrs[0]
    return sh.concatenate(*arrs, dimension=ax)


def stack(arrays: Sequence[ArrayLike], axis: int = 0) -> Any:
    """Join arrays along a new axis."""
    if not len(arrays):
        raise ValueError("stack: need at least one array to stack")
    arrs = [_arr(a, "stack") for a in arrays]
    shapes = {aval(a).shape for a in arrs}
    if len(shapes) != 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    nd = aval(arrs[0]).ndim + 1
    ax = normalize_axis(axis, nd, "stack")
    return concatenate([expand_dims(a, ax) for a in arrs], axis=ax)


def vstack(tup: Sequence[ArrayLike]) -> Any:
    return concatenate([atleast_2d(a) for a in tup], axis=0)


def hstack(tup: Sequence[ArrayLike]) -> Any:
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, axis=0 if aval(arrs[0]).ndim == 1 else 1)


def split(a: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections or at indices."""
    a = _arr(a, "split")
    av = aval(a)
    ax = normalize_axis(axis, av.ndim, "split")
    n = av.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError("split: array split does not result in an equal division")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0, *[int(i) for i in indices_or_sections], n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
        start = [0] * av.ndim
        limit = list(av.shape)
        start[ax], limit[ax] = lo, max(lo, hi)
        out.append(sh.slice(a, tuple(start), tuple(limit)))
    return out


def flip(a: ArrayLike, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis``."""
    a = _arr(a, "flip")
    axes = normalize_axes(axis, aval(a).ndim, "flip")
    return sh.rev(a, axes) if axes else a


def fliplr(a: ArrayLike) -> Any:
    return flip(a, 1)


def flipud(a: ArrayLike) -> Any:
    return flip(a, 0)


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """Pad with a constant (``mode='constant'`` only)."""
    if mode != "constant":
        raise NotImplementedError(f"funcgrad.numpy.pad with mode={mode!r}")
    a = _arr(array, "pad")
    nd = aval(a).ndim
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (nd, 2))
    config = tuple((int(lo), int(hi), 0) for lo, hi in pw)
    val = np.asarray(constant_values, aval(a).dtype)
    return sh.pad(a, val, config)


def tile(a: ArrayLike, reps: Any) -> Any:
    """Repeat the whole array ``reps`` times along each axis."""
    a = _arr(a, "tile")
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    av = aval(a)
    nd = max(av.ndim, len(reps))
    shape = (1,) * (nd - av.ndim) + av.shape
    reps = (1,) * (nd - len(reps)) + reps
    a = reshape(a, shape)
    # broadcast to (r0, s0, r1, s1, ...) then merge
    inter = tuple(x for r, s in zip(reps, shape) for x in (r, s))
    b = sh.broadcast_in_dim(a, inter, tuple(range(1, 2 * nd, 2)))
    return reshape(b, tuple(r * s for r, s in zip(reps, shape)))


def repeat(a: ArrayLike, repeats: int, axis: int | None = None) -> Any:
    """Repeat each element ``repeats`` times (static int repeats)."""
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("funcgrad.numpy.repeat with array-valued repeats")
    a = _arr(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    av = aval(a)
    ax = normalize_axis(axis, av.ndim, "repeat")
    shape = av.shape[: ax + 1] + (int(repeats),) + av.shape[ax + 1 :]
    dims = tuple(i for i in range(len(shape)) if i != ax + 1)
    b = sh.broadcast_in_dim(a, shape, dims)
    return reshape(b, av.shape[:ax] + (av.shape[ax] * int(repeats),) + av.shape[ax + 1 :])


def roll(a: ArrayLike, shift: int, axis: int | None = None) -> Any:
    """Roll elements along ``axis`` (static shift)."""
    a = _arr(a, "roll")
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval(a).shape)
    av = aval(a)
    ax = normalize_axis(axis, av.ndim, "roll")
    n = av.shape[ax]
    if n == 0:
        return a
    k = int(shift) % n
    if k == 0:
        return a
    parts = split(a, [n - k], axis=ax)
    return concatenate([parts[1], parts[0]], axis=ax)


def tril(m: ArrayLike, k: int = 0) -> Any:
    """Lower triangle (zero above the ``k``-th diagonal)."""
    return _tri_mask(m, k, lower=True)


def triu(m: ArrayLike, k: int = 0) -> Any:
    """Upper triangle."""
    return _tri_mask(m, k, lower=False)


def _tri_mask(m: ArrayLike, k: int, lower: bool) -> Any:
    from funcgrad.numpy._ufuncs import where
    from funcgrad.primitives import elementwise as ew

    m = _arr(m, "tril")
    n_r, n_c = aval(m).shape[-2:]
    i = sh.iota(dtype=np.dtype("int32"), shape=(n_r, n_c), dimension=0)
    j = sh.iota(dtype=np.dtype("int32"), shape=(n_r, n_c), dimension=1)
    d = ew.sub(j, i)
    mask = ew.le(d, np.asarray(k, np.int32)) if lower else ew.ge(d, np.asarray(k, np.int32))
    return where(mask, m, np.asarray(0, aval(m).dtype))
