"""Shape, slicing, stacking, creation, selection and contraction functions of
``jax.lax``, with ``broadcast_shapes`` and the ``DotDimensionNumbers`` alias."""

from __future__ import annotations

import builtins
import enum
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.interp import to_aval
from funcgrad.core.symbolic import SymDim
from funcgrad.numpy._core import here, out, prep, user_dtype
from funcgrad.primitives import bits
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import linalg as la
from funcgrad.primitives import shape as sh
from funcgrad.primitives.split import split as split_pieces
from funcgrad.sharding import reshard

__all__ = [
    "DotDimensionNumbers",
    "Precision",
    "batch_matmul",
    "bitcast_convert_type",
    "broadcast",
    "broadcast_in_dim",
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcasted_iota",
    "collapse",
    "concatenate",
    "convert_element_type",
    "dot",
    "dot_general",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "empty",
    "expand_dims",
    "full",
    "full_like",
    "index_in_dim",
    "iota",
    "pad",
    "reshape",
    "rev",
    "select",
    "select_n",
    "shape_as_value",
    "slice",
    "slice_in_dim",
    "split",
    "squeeze",
    "stack",
    "tile",
    "transpose",
    "unstack",
    "zeros_like_array",
]

#: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, as ``jax.lax``'s alias.
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]


def _ints(name: str, what: str, xs: Any) -> tuple[int, ...]:
    try:  # (a shape template's symbolic dimension stays symbolic: its value is not read)
        return tuple(x if type(x) is SymDim else operator.index(x) for x in xs)
    except TypeError as e:
        raise TypeError(f"{name}: {what} must be a sequence of ints, got {xs!r}{here()}") from e


def _axis(name: str, axis: int, nd: int) -> int:
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"{name}: axis {axis} is out of bounds for rank {nd}{here()}")
    return axis % nd


class Precision(enum.Enum):
    """Matmul/convolution precision (``jax.lax.Precision``); accepted and ignored: XLA's
    CPU kernels compute at full precision."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: Any) -> Precision | None:
        names = {
            "bfloat16": "DEFAULT",
            "tensorfloat32": "HIGH",
            "float32": "HIGHEST",
            "fastest": "DEFAULT",
            "high": "HIGH",
            "highest": "HIGHEST",
            "default": "DEFAULT",
        }
        key = names.get(str(value).lower())
        return cls[key] if key else None


# --------------------------------------------------------------------------- shape


def broadcast_in_dim(
    operand: Any,
    shape: Sequence[int],
    broadcast_dimensions: Sequence[int],
    *,
    out_sharding: Any = None,
) -> Any:
    """Broadcast ``operand`` to ``shape``; its axis ``i`` becomes ``broadcast_dimensions[i]``
    (``out_sharding``: the result resharded over explicit mesh axes)."""
    res = sh.broadcast_in_dim(
        prep(operand, "broadcast_in_dim"),
        _ints("broadcast_in_dim", "shape", shape),
        _ints("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions),
    )
    return res if out_sharding is None else reshard(res, out_sharding)


def broadcast(operand: Any, sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """Add leading dimensions of ``sizes`` to ``operand`` (``out_sharding``: the result
    resharded over explicit mesh axes)."""
    if out_sharding is not None:
        return reshard(broadcast(operand, sizes), out_sharding)
    operand = prep(operand, "broadcast")
    sizes = _ints("broadcast", "sizes", sizes)
    nd = to_aval(operand).ndim
    return sh.broadcast_in_dim(
        operand, (*sizes, *to_aval(operand).shape), tuple(range(len(sizes), len(sizes) + nd))
    )


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """Add leading size-1 dimensions until ``x`` has ``rank`` dimensions."""
    x = prep(x, "broadcast_to_rank")
    nd = to_aval(x).ndim
    if nd >= rank:
        return x
    return broadcast(x, (1,) * (rank - nd))


def reshape(
    operand: Any,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Reshape (row-major), after transposing by ``dimensions`` if given; ``out_sharding``
    types the result over explicit mesh axes."""
    operand = prep(operand, "reshape")
    if dimensions is not None:
        operand = sh.transpose(operand, _ints("reshape", "dimensions", dimensions))
    sizes = (new_sizes,) if isinstance(new_sizes, (int, np.integer)) else new_sizes
    try:
        sizes = _ints("reshape", "new_sizes", sizes)
    except TypeError:  # (JAX's words)
        raise TypeError(
            f"reshape: Shapes must be 1D sequences of concrete values of integer type, got "
            f"{new_sizes!r}{here()}"
        ) from None
    return sh.reshape(operand, sizes, out_sharding=out_sharding)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permute the axes of ``operand``."""
    return sh.transpose(prep(operand, "transpose"), _ints("transpose", "permutation", permutation))


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Remove the size-1 axes ``dimensions``."""
    array = prep(array, "squeeze")
    shape = to_aval(array).shape
    nd = len(shape)
    dims = []
    for d in dimensions:  # (JAX's checks and words, in JAX's order)
        d = operator.index(d)
        if not -nd <= d < nd:
            raise ValueError(
                f"squeeze: axis {d} is out of bounds for array of dimension {nd}{here()}"
            )
        dims.append(d % nd if nd else d)
    if len(set(dims)) != len(dims):
        raise ValueError(f"squeeze: dimensions are not unique: {tuple(dimensions)}{here()}")
    if any(shape[d] != 1 for d in dims):
        raise ValueError(
            "squeeze: cannot select an axis to squeeze out which has size not equal to one, "
            f"got shape={shape} and dimensions={tuple(dimensions)}{here()}"
        )
    return sh.squeeze(array, tuple(dims))


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Insert size-1 axes at ``dimensions`` (positions in the result)."""
    return sh.expand_dims(prep(array, "expand_dims"), dimensions)


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverse ``operand`` along ``dimensions``."""
    return sh.rev(prep(operand, "rev"), _ints("rev", "dimensions", dimensions))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge the axes ``[start_dimension, stop_dimension)`` into one."""
    operand = prep(operand, "collapse")
    shape = to_aval(operand).shape
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    size = math.prod(shape[lo:hi])
    return sh.reshape(operand, (*shape[:lo], size, *shape[hi:]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """Repeat ``operand`` ``reps[i]`` times along each axis."""
    operand = prep(operand, "tile")
    reps = _ints("tile", "reps", reps)
    shape = to_aval(operand).shape
    if len(reps) != len(shape):
        raise ValueError(f"tile: reps {reps} must have one entry per axis of {shape}{here()}")
    inter = tuple(x for r, n in zip(reps, shape) for x in (r, n))
    b = sh.broadcast_in_dim(operand, inter, tuple(range(1, 2 * len(shape), 2)))
    return sh.reshape(b, tuple(r * n for r, n in zip(reps, shape)))


# --------------------------------------------------------------------------- slicing


def slice(
    operand: Any,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Any:
    """Static slice ``operand[start:limit:stride]`` per axis."""
    return sh.slice(
        prep(operand, "slice"),
        _ints("slice", "start_indices", start_indices),
        _ints("slice", "limit_indices", limit_indices),
        None if strides is None else _ints("slice", "strides", strides),
    )


def slice_in_dim(
    operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
) -> Any:
    """Static slice along one axis (negative and ``None`` bounds as in Python)."""
    operand = prep(operand, "slice_in_dim")
    shape = to_aval(operand).shape
    axis = _axis("slice_in_dim", axis, len(shape))
    n = shape[axis]
    lo = 0 if start_index is None else operator.index(start_index)
    hi = n if limit_index is None else operator.index(limit_index)
    lo, hi = lo + n if lo < 0 else lo, hi + n if hi < 0 else hi
    start, limit, strides = [0] * len(shape), list(shape), [1] * len(shape)
    start[axis], limit[axis], strides[axis] = lo, hi, operator.index(stride)
    return sh.slice(operand, tuple(start), tuple(limit), tuple(strides))


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The static ``index`` along ``axis`` (negative counts from the end)."""
    operand = prep(operand, "index_in_dim")
    shape = to_aval(operand).shape
    axis = _axis("index_in_dim", axis, len(shape))
    index = operator.index(index)
    n = shape[axis]
    if not -n <= index < n:
        raise IndexError(
            f"index_in_dim: index {index} is out of bounds for axis {axis} with size {n}{here()}"
        )
    index %= n
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else sh.squeeze(out, (axis,))


def _wrap(i: Any, n: int) -> Any:
    """Negative start indices count from the end (``allow_negative_indices``)."""
    if isinstance(i, (int, np.integer)):
        return int(i) + n if i < 0 else int(i)
    i = prep(i, "dynamic_slice")
    a = to_aval(i)
    if a.dtype.kind == "u":
        return i
    return ew.select_n(ew.lt(i, np.asarray(0, a.dtype)), i, ew.add(i, np.asarray(n, a.dtype)))


def _starts(name: str, operand: Any, start_indices: Any, wrap: bool) -> list:
    shape = to_aval(operand).shape
    if not isinstance(start_indices, (list, tuple)):
        sa = to_aval(prep(start_indices, name))
        if sa.ndim != 1:
            raise TypeError(f"{name}: start_indices must be a sequence of scalars{here()}")
        start_indices = [prep(start_indices, name)[i] for i in range(sa.shape[0])]
    if len(start_indices) != len(shape):
        raise TypeError(
            f"{name}: needs one start index per dimension of the operand of shape "
            f"{shape}, got {len(start_indices)}{here()}"
        )
    out, kinds = [], []
    for i, n in zip(start_indices, shape):
        a = to_aval(prep(i, name))
        if a.shape != () or dtypes.kind(a.dtype) != 1:
            raise TypeError(f"{name}: start indices must be integer scalars, got {a}{here()}")
        if not a.weak_type:
            kinds.append(a.dtype)
        out.append(_wrap(i, n) if wrap else i)
    # (JAX's rule and words for strongly typed indices; a Python int, which JAX takes as
    # the default int, is let through, as funcgrad's own callers mix them)
    if len(set(kinds)) > 1:
        got = ", ".join(d.name for d in kinds)
        raise TypeError(
            f"index arguments to {name} must be integers of the same type, got: {got}{here()}"
        )
    return out


def dynamic_slice(
    operand: Any,
    start_indices: Any,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """Slice of ``slice_sizes`` at (traced) ``start_indices``, clamped to stay in bounds."""
    operand = prep(operand, "dynamic_slice")
    starts = _starts("dynamic_slice", operand, start_indices, bool(allow_negative_indices))
    return ix.dynamic_slice(
        operand, *starts, slice_sizes=_ints("dynamic_slice", "slice_sizes", slice_sizes)
    )


def dynamic_update_slice(
    operand: Any,
    update: Any,
    start_indices: Any,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
) -> Any:
    """``operand`` with ``update`` written at (traced) ``start_indices`` (clamped)."""
    operand = prep(operand, "dynamic_update_slice")
    starts = _starts("dynamic_update_slice", operand, start_indices, bool(allow_negative_indices))
    return ix.dynamic_update_slice(operand, prep(update, "dynamic_update_slice"), *starts)


def _one_axis_starts(operand: Any, index: Any, axis: int) -> list:
    nd = to_aval(operand).ndim
    a = to_aval(prep(index, "dynamic_slice_in_dim"))
    zero = np.zeros((), a.dtype if dtypes.kind(a.dtype) == 1 else np.int32)
    return [index if i == axis else zero for i in range(nd)]


def dynamic_slice_in_dim(
    operand: Any,
    start_index: Any,
    slice_size: int,
    axis: int = 0,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """:func:`dynamic_slice` along one axis."""
    operand = prep(operand, "dynamic_slice_in_dim")
    shape = to_aval(operand).shape
    axis = _axis("dynamic_slice_in_dim", axis, len(shape))
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    return dynamic_slice(
        operand,
        _one_axis_starts(operand, start_index, axis),
        sizes,
        allow_negative_indices=allow_negative_indices,
    )


def dynamic_index_in_dim(
    operand: Any,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """The (traced) ``index`` along ``axis``."""
    operand = prep(operand, "dynamic_index_in_dim")
    axis = _axis("dynamic_index_in_dim", axis, to_aval(operand).ndim)
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return out if keepdims else sh.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(
    operand: Any, update: Any, start_index: Any, axis: int, *, allow_negative_indices: bool = True
) -> Any:
    """:func:`dynamic_update_slice` along one axis."""
    operand = prep(operand, "dynamic_update_slice_in_dim")
    axis = _axis("dynamic_update_slice_in_dim", axis, to_aval(operand).ndim)
    return dynamic_update_slice(
        operand,
        update,
        _one_axis_starts(operand, start_index, axis),
        allow_negative_indices=allow_negative_indices,
    )


def dynamic_update_index_in_dim(
    operand: Any, update: Any, index: Any, axis: int, *, allow_negative_indices: bool = True
) -> Any:
    """Write ``update`` (with or without the ``axis`` dimension) at ``index`` along ``axis``."""
    operand = prep(operand, "dynamic_update_index_in_dim")
    update = prep(update, "dynamic_update_index_in_dim")
    axis = _axis("dynamic_update_index_in_dim", axis, to_aval(operand).ndim)
    if to_aval(update).ndim == to_aval(operand).ndim - 1:
        update = sh.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad with ``(lo, hi, interior)`` per axis; negative ``lo``/``hi`` crop."""
    return sh.pad(prep(operand, "pad"), prep(padding_value, "pad"), padding_config)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join ``operands`` along ``dimension``."""
    ops = [prep(o, "concatenate") for o in operands]
    if not ops:
        raise ValueError(f"concatenate: needs at least one operand{here()}")
    return sh.concatenate(*ops, dimension=operator.index(dimension))


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list:
    """Split along ``axis`` into pieces of ``sizes`` (which must add up to the axis size)."""
    operand = prep(operand, "split")
    shape = to_aval(operand).shape
    axis = _axis("split", axis, len(shape))
    sizes = _ints("split", "sizes", sizes)
    if any(s < 0 for s in sizes):  # (JAX's words)
        raise ValueError(
            f"split: Sizes passed to split must be nonnegative, got {list(sizes)}{here()}"
        )
    if sum(sizes) != shape[axis]:
        raise ValueError(
            f"split: Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the operand "
            f"shape {list(shape)}{here()}"
        )
    return split_pieces(operand, sizes, axis)


# --------------------------------------------------------------------------- creation


def iota(dtype: Any, size: int) -> Any:
    """``[0, 1, ..., size - 1]`` of ``dtype``."""
    return sh.iota(dtypes.canonicalize(dtype), (operator.index(size),), 0)


def broadcasted_iota(
    dtype: Any, shape: Sequence[int], dimension: int, *, out_sharding: Any = None
) -> Any:
    """An array of ``shape`` counting along ``dimension`` (``out_sharding``: placed over
    explicit mesh axes)."""
    shape = _ints("broadcasted_iota", "shape", shape)
    res = sh.iota(
        dtypes.canonicalize(dtype), shape, _axis("broadcasted_iota", dimension, len(shape))
    )
    return res if out_sharding is None else reshard(res, out_sharding)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None, *, sharding: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value``."""
    del sharding
    shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
    fill_value = prep(fill_value, "full")
    if to_aval(fill_value).shape != ():
        raise TypeError(f"full: fill_value must be a scalar, got {to_aval(fill_value)}{here()}")
    if dtype is None and not isinstance(fill_value, (bool, int, float, complex)):
        dtype = to_aval(fill_value).dtype
    elif dtype is None:
        out = sh.full(_ints("full", "shape", shape), fill_value)
        return ew.convert_element_type(out, to_aval(out).dtype, weak_type=True)
    return sh.full(_ints("full", "shape", shape), fill_value, dtype)


def shape_as_value(shape: Sequence[int]) -> Any:
    """The dimensions of ``shape`` as a 1-D integer array, as ``jax.lax.shape_as_value``:
    int32 (int64 when a dimension exceeds int32's range), a NumPy array for a nonempty
    static shape and a 0-length array for ``()``, as JAX returns them."""
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError as e:
        raise TypeError(f"shape_as_value: expected a shape (ints), got {shape!r}{here()}") from e
    dtype = np.dtype(np.int64 if any(d > np.iinfo(np.int32).max for d in dims) else np.int32)
    if not dims:
        return out(sh.full((0,), 0, dtype))
    return np.asarray(dims, dtype)


def full_like(
    x: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Sequence[int] | None = None,
    sharding: Any = None,
) -> Any:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``."""
    del sharding
    a = to_aval(prep(x, "full_like"))
    dt = a.dtype if dtype is None else dtypes.canonicalize(dtype)
    out = sh.full(
        a.shape if shape is None else _ints("full_like", "shape", shape),
        ew.convert_element_type(prep(fill_value, "full_like"), dt),
        dt,
    )
    if dtype is None and a.weak_type:
        out = ew.convert_element_type(out, dt, weak_type=True)
    return out


def zeros_like_array(x: Any) -> Any:
    """Zeros of ``x``'s shape and dtype."""
    return full_like(x, 0)


# --------------------------------------------------------------------------- selection / dtype


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where the boolean ``pred`` holds, else ``on_false``."""
    pred = prep(pred, "select")
    if to_aval(pred).dtype != np.bool_:
        raise TypeError(f"select: pred must be boolean, got {to_aval(pred)}{here()}")
    return ew.select_n(pred, prep(on_false, "select"), prep(on_true, "select"))


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise; ``which`` is boolean (two cases) or int32."""
    if not cases:
        raise ValueError(f"select_n: needs at least one case{here()}")
    return ew.select_n(prep(which, "select_n"), *[prep(c, "select_n") for c in cases])


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """``operand`` cast to ``new_dtype`` (a strongly typed result). A Python int is cast
    as NumPy casts it, so one outside the target's range wraps (as ``jax.lax``'s)."""
    if type(operand) is int:
        operand = np.asarray(operand).astype(dtypes.canonicalize(np.dtype(new_dtype)))
    res = ew.convert_element_type(prep(operand, "convert_element_type"), new_dtype)
    return out(res)  # (an array even when nothing was converted, as JAX's)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of ``operand`` as ``new_dtype``."""
    return bits.bitcast_convert_type(prep(operand, "bitcast_convert_type"), new_dtype)


# --------------------------------------------------------------------------- contraction


def dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Contract ``lhs`` and ``rhs`` over ``((lhs_contract, rhs_contract), (lhs_batch,
    rhs_batch))``; ``precision`` is accepted and ignored; ``out_sharding`` places the
    result over explicit mesh axes."""
    del precision
    return la.dot_general(
        prep(lhs, "dot_general"),
        prep(rhs, "dot_general"),
        dimension_numbers,
        preferred_element_type,
        out_sharding=out_sharding,
    )


def dot(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Vector/matrix product of rank-1 or rank-2 operands (or ``dot_general`` with
    ``dimension_numbers``)."""
    lhs, rhs = prep(lhs, "dot"), prep(rhs, "dot")
    if dimension_numbers is None:
        ln, rn = to_aval(lhs).ndim, to_aval(rhs).ndim
        if not (1 <= ln <= 2 and 1 <= rn <= 2):
            raise TypeError(
                f"dot: operands must have rank 1 or 2, got {to_aval(lhs)} and "
                f"{to_aval(rhs)}{here()}"
            )
        dimension_numbers = (((ln - 1,), (0,)), ((), ()))
    return dot_general(
        lhs, rhs, dimension_numbers, precision, preferred_element_type, out_sharding=out_sharding
    )


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products batched over all leading dimensions (equal ranks >= 2)."""
    lhs, rhs = prep(lhs, "batch_matmul"), prep(rhs, "batch_matmul")
    la_, ra = to_aval(lhs), to_aval(rhs)
    if la_.ndim < 2 or la_.ndim != ra.ndim:
        raise ValueError(
            f"batch_matmul: needs operands of equal rank >= 2, got {la_} and {ra}{here()}"
        )
    nd = la_.ndim
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy-style broadcast of ``shapes`` (ranks aligned on the right); the errors
    (types and phrases) are ``jax.lax.broadcast_shapes``'s."""
    norm = []
    for s in shapes:
        try:
            norm.append(tuple(operator.index(d) for d in s))
        except TypeError:
            raise TypeError(
                f"Shapes must be 1D sequences of concrete values of integer type, got {s}.{here()}"
            ) from None
        if any(d < 0 for d in norm[-1]):
            raise TypeError(
                "Only non-negative indices are allowed when broadcasting static shapes, but "
                f"got shape {norm[-1]!r}.{here()}"
            )
    rank = builtins.max((len(s) for s in norm), default=0)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in norm if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ValueError(
                f"Incompatible shapes for broadcasting: shapes={norm} (lax.broadcast_shapes){here()}"
            )
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros here;
    ``out_sharding``: placed over explicit mesh axes)."""
    dt = user_dtype(dtype, "empty")
    res = sh.full(tuple(operator.index(d) for d in shape), 0, dt)
    return res if out_sharding is None else reshard(res, out_sharding)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Stack arrays of one shape and dtype along a new axis ``axis``."""
    xs = [prep(x, "stack") for x in operands]
    if not xs:
        raise ValueError(f"stack: need at least one operand{here()}")
    nd = len(to_aval(xs[0]).shape) + 1
    if not -nd <= axis < nd:
        raise ValueError(f"stack: axis {axis} is out of bounds for rank {nd}{here()}")
    axis = axis % nd
    return concatenate([expand_dims(x, (axis,)) for x in xs], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed."""
    x = prep(x, "unstack")
    shape = to_aval(x).shape
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"unstack: axis {axis} is out of bounds for shape {shape}{here()}")
    axis = axis % len(shape)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))
