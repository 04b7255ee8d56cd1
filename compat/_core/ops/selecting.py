"""Selecting and placing elements: ``narrow``/``select``, ``diagonal``/``diag_embed``,
``take``, ``take_along_dim``, the ``scatter`` and ``index_*`` families, masked selection,
``repeat_interleave``, ``tensor_split``, ``movedim``.

Index tensors are runtime operands of the programs (one program per shape, not per
index value); where the output size depends on the data (``masked_select``,
``repeat_interleave`` with tensor repeats) the sizes are read eagerly, as PyTorch does.
"""

from __future__ import annotations

import builtins
import itertools
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import views as _views
from compat._core.creation import tensor
from compat._core.ops import conventions as _conv
from compat._core.ops._common import _c, coerce, warn_once
from compat._core.ops.binary import _NOT_IMPLEMENTED, _refuse_backward
from compat._core.optable import Idx, Mask, Sample, T, defop
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import lax as flax
from funcgrad import numpy as fnp


def _narrow_f(x: Any, *, axis: int, start: int, length: int) -> Any:
    return flax.slice_in_dim(x, start, start + length, axis=axis)


@defop(
    out=False,
    overloads=True,
    samples=(Sample(((4, 3),), args=(0, 1, 2)), Sample(((4, 3),), args=(-1, -2, 2))),
)
def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``length`` elements of ``dim`` from ``start`` (negative ``start`` counts from the end)."""
    axis = _wrap_dim(dim, input.ndim)
    n = input.shape[axis]
    start = int(start)
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    start %= n if n else 1
    if start + length > n or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    st = (("axis", axis), ("start", start), ("length", int(length)))
    out = apply(_narrow_f, "SliceBackward0", (input,), st)
    spec = (("s", None, None, None),) * axis + (("s", start, start + int(length), None),)
    return _views.make_view(out, input, ("ix", spec))


def _select_f(x: Any, i: Any, *, axis: int) -> Any:
    return fnp.take(x, i, axis=axis)


@defop(out=False, samples=(Sample(((4, 3),), args=(0, 2)), Sample(((4, 3),), args=(1, -1))))
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` of ``dim``, without that dimension."""
    axis = _wrap_dim(dim, input.ndim)
    n = input.shape[axis]
    if not -n <= index < n:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
            f"dimension {dim}"
        )
    i = int(index) % n  # a Python int: a cached weakly typed device scalar
    out = apply(_select_f, "SelectBackward0", (input, i), (("axis", axis),))
    spec = (("s", None, None, None),) * axis + (("d", 0),)
    return _views.make_view(out, input, ("ix", spec), (i,))


def _diagonal_f(x: Any, *, offset: int, a1: int, a2: int) -> Any:
    return fnp.diagonal(x, offset=offset, axis1=a1, axis2=a2)


@defop(
    out=False,
    samples=(
        Sample(((3, 4),)),
        Sample(((3, 4),), args=(1,)),
        Sample(((2, 3, 3),), kwargs=(("offset", -1), ("dim1", 1), ("dim2", 2))),
    ),
)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    a1, a2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if a1 == a2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    st = (("offset", int(offset)), ("a1", a1), ("a2", a2))
    out = apply(_diagonal_f, "DiagonalBackward0", (input,), st)
    return _views.make_view(out, input, ("dg", int(offset), a1, a2))


def _diag_embed_f(x: Any, *, offset: int, a1: int, a2: int) -> Any:
    n = x.shape[-1] + builtins.abs(offset)
    eye = fnp.eye(n, k=offset, dtype=bool)
    rows, cols = np.nonzero(np.eye(n, k=offset, dtype=bool))
    out = fnp.zeros(x.shape[:-1] + (n, n), x.dtype)
    out = out.at[..., rows, cols].set(x)
    del eye
    nd = out.ndim
    order = [d for d in range(nd - 2)]
    # place the two new dims at a1 < a2
    perm = [0] * nd
    rest = iter(order)
    for d in range(nd):
        if d == a1:
            perm[d] = nd - 2
        elif d == a2:
            perm[d] = nd - 1
        else:
            perm[d] = next(rest)
    return fnp.transpose(out, perm)


@defop(
    out=False,
    samples=(Sample(((2, 3),)), Sample(((3,),), args=(1,)), Sample(((2, 3),), args=(0, 0, 2))),
)
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose ``offset`` diagonal (in dims ``dim1``, ``dim2``) is the last dim."""
    nd = input.ndim + 1
    a1, a2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if a1 == a2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if a1 > a2:
        a1, a2, offset = a2, a1, -offset
    st = (("offset", int(offset)), ("a1", a1), ("a2", a2))
    return apply(_diag_embed_f, "DiagEmbedBackward0", (input,), st)


def _take_f(x: Any, i: Any) -> Any:
    return fnp.take(fnp.reshape(x, (-1,)), i)


def _check_index(index: Tensor, n: int, what: str) -> np.ndarray:
    if _dt.kind(index._npdtype) not in "iu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    a = np.asarray(index._st.array)
    if a.size and (a.max() >= n or a.min() < -n):
        bad = int(a.max() if a.max() >= n else a.min())
        raise IndexError(f"{what}: index {bad} out of range for tensor of size {n}")
    return np.where(a < 0, a + n, a).astype(np.int64)


@defop(samples=Sample(((3, 4),), args=(Idx((2, 3), 12),)))
def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened input at ``index`` (shaped like ``index``)."""
    a = np.asarray(index._st.array) if _dt.kind(index._npdtype) in "iu" else np.zeros(0)
    n = input.numel()
    bad = a[(a >= n) | (a < -n)]
    if bad.size:
        raise IndexError(
            f"out of range: tried to access index {int(bad.flat[0])} on a tensor of {n} elements."
        )
    idx = _check_index(index, n, "take")
    return apply(_take_f, "TakeBackward0", (input, idx))


def _take_along_f(x: Any, i: Any, *, axis: Any) -> Any:
    if axis is None:
        return fnp.take(fnp.reshape(x, (-1,)), fnp.reshape(i, (-1,)))
    return fnp.take_along_axis(x, i, axis=axis)


@defop(
    node_name=False,
    samples=(Sample(((3, 4),), args=(Idx((3, 2), 4), 1)), Sample(((3, 4),), args=(Idx((5,), 12),))),
)
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """``numpy.take_along_axis``; without ``dim`` both are flattened (a ``gather`` of the
    flattened input, with its checks). With ``dim``, PyTorch's checks: as many dims, int64
    indices, the other dims broadcast."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    name = "torch.take_along_dim()"
    if input.ndim != indices.ndim:
        raise RuntimeError(
            f"{name}: input and indices should have the same number of dimensions, but got "
            f"{input.ndim} dimensions for input, and {indices.ndim} dimensions for indices"
        )
    if indices._npdtype != np.int64:
        kind = _dt.scalar_type_name(indices._npdtype)
        raise RuntimeError(f"{name}: dtype of indices should be Long but got {kind}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = _wrap_dim(dim, input.ndim)
    idx = _check_index(indices, input.shape[axis], "take_along_dim")
    full = []
    for d, (a, b) in enumerate(zip(input.shape, idx.shape)):
        a = b if d == axis else a
        if a != b and 1 not in (a, b):
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {d}"
            )
        full.append(builtins.max(a, b) if 0 not in (a, b) else 0)
    idx = np.broadcast_to(idx, full)
    xs = list(full)
    xs[axis] = input.shape[axis]
    x = input.expand(*xs) if tuple(xs) != tuple(input.shape) else input
    return apply(_take_along_f, "TakeAlongDimBackward0", (x, np.array(idx)), (("axis", axis),))


def _first_outside(a: np.ndarray, lo: int, n: int) -> int | None:
    """The first of ``a``'s indices (in memory order, as PyTorch's kernels meet them)
    outside ``[lo, n)``; ``None`` when all are inside."""
    bad = a[(a < lo) | (a >= n)]
    return int(bad.flat[0]) if bad.size else None


def _gather_f(x: Any, i: Any, *, axis: int) -> Any:
    shape = i.shape
    if x.ndim == 0 or i.ndim == 0:  # (a 0-d tensor or index reads as 1-d)
        x, i = fnp.reshape(x, (-1,)), fnp.reshape(i, (-1,))
    if i.size == 0:
        return fnp.zeros(shape, x.dtype)
    # an index smaller than the input in the other dims reads their leading part
    part = tuple(slice(None) if d == axis else slice(0, s) for d, s in enumerate(i.shape))
    return fnp.reshape(fnp.take_along_axis(x[part], i, axis=axis), shape)


@defop(samples=Sample(((2, 3),), args=(1, Idx((2, 2), 3))))
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[i][index[i][j]]`` along ``dim``; ``index`` may be smaller than
    ``input`` in the other dims, and a 0-d tensor reads as 1-d (PyTorch's checks)."""
    if index._npdtype not in (np.int32, np.int64):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    d = _wrap_dim(dim, builtins.max(input.ndim, 1))
    if builtins.max(index.ndim, 1) != builtins.max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    a = np.asarray(index._st.array).astype(np.int64)
    if a.size:
        if index.ndim and input.ndim:
            for k in range(input.ndim):
                if k != d and index.shape[k] > input.shape[k]:
                    raise RuntimeError(
                        f"Size does not match at dimension {k} expected index "
                        f"{list(index.shape)} to be no larger than self {list(input.shape)} "
                        f"apart from dimension {d}"
                    )
        n = input.shape[d] if input.ndim else 1
        bad = _first_outside(a, 0, n)
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    return apply(_gather_f, "GatherBackward0", (input, a), (("axis", d),))


def _index_select_f(x: Any, i: Any, *, axis: int) -> Any:
    if x.ndim == 0:  # (the one index is 0: checked)
        return fnp.reshape(fnp.take(fnp.reshape(x, (1,)), i), ())
    return fnp.take(x, i, axis=axis)


@defop(samples=Sample(((3, 2),), args=(0, Idx((4,), 3))))
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``dim`` at ``index`` (a vector or a 0-d tensor), with PyTorch's checks
    (no negative indices); a 0-d input takes the one index 0."""
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._npdtype not in (np.int32, np.int64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = _wrap_dim(dim, builtins.max(input.ndim, 1))
    a = np.asarray(index._st.array).astype(np.int64).reshape(-1)
    if input.ndim == 0 and a.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {a.size} value(s)"
        )
    n = input.shape[d] if input.ndim else 1
    if n == 0 and a.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = _first_outside(a, 0, n)
    if bad is not None and input.numel() == 0:  # (PyTorch's kernel for empty inputs)
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    if bad is not None:
        raise IndexError("index out of range in self")
    return apply(_index_select_f, "IndexSelectBackward0", (input, a), (("axis", d),))


# ----------------------------------------------------------------- scatter family


def _scatter_index(idx: Any, axis: int, shape: tuple) -> tuple:
    """Full index arrays addressing ``out[..., idx[...], ...]`` for each element of ``idx``."""
    grids = list(np.indices(shape, sparse=True))
    grids = [fnp.asarray(g) for g in grids]
    grids[axis] = idx
    return tuple(grids)


def _flat(v: Any) -> Any:
    """A tensor operand of 1+ dims as 1-d, a number or 0-d one as it is."""
    return fnp.reshape(v, (-1,)) if getattr(v, "ndim", 0) else v


def _scatter_f(
    x: Any,
    i: Any,
    src: Any,
    *,
    axis: int,
    reduce: str | None,
    dtype: np.dtype,
    repeats: bool = False,
) -> Any:
    if i.size == 0:  # (src is not looked at: PyTorch does not check its shape then)
        return x
    if x.ndim == 0:  # (a 0-d tensor reads as 1-d)
        one = _scatter_f(fnp.reshape(x, (1,)), i, _flat(src), axis=0, reduce=reduce, dtype=dtype)
        return fnp.reshape(one, ())
    src = _c(src, dtype)
    src = (
        fnp.broadcast_to(src, i.shape)
        if src.ndim == 0
        else src[tuple(slice(0, s) for s in i.shape)]
    )
    where = _scatter_index(i, axis, i.shape)
    if reduce is None:  # (at repeated places every write gets its place's gradient)
        return _conv.scatter_set(x, where, src) if repeats else x.at[where].set(src)
    ref = x.at[where]
    if reduce in ("add", "sum"):
        return ref.add(src)
    if reduce in ("multiply", "prod"):
        return ref.multiply(src)
    if reduce == "amax":
        return ref.max(src)
    return ref.min(src)


def _scatter_args(input: Tensor, dim: int, index: Tensor, name: str) -> tuple[int, np.ndarray]:
    """The axis and the index (1-d for a 0-d one) of a scatter op, with PyTorch's checks: no
    negative indices, and a 0-d input or index read as 1-d."""
    axis = _wrap_dim(dim, builtins.max(input.ndim, 1))
    if index.numel() == 0:  # PyTorch checks nothing more: the result is a copy of input
        return axis, np.zeros((0,) * builtins.max(input.ndim, 1), np.int64)
    if index._npdtype not in (np.int32, np.int64):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if builtins.max(index.ndim, 1) != builtins.max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    idx = np.asarray(index._st.array).astype(np.int64)
    n = input.shape[axis] if input.ndim else 1
    bad = _first_outside(idx, 0, n)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {axis} with size {n}")
    return axis, idx.reshape(-1) if idx.ndim == 0 else idx


@defop(
    inplace=True,
    samples=(
        Sample(((3, 4),), args=(1, Idx((3, 2), 4), T((3, 2)))),
        Sample(((3, 4),), args=(0, Idx((2, 4), 3), 1.5), grad=False),
        Sample(
            ((3, 4),), args=(1, Idx((2, 3), 4), T((2, 3))), kwargs=(("reduce", "add"),), grad=False
        ),
    ),
)
def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """``out[i][index[i][j]] = src[i][j]`` along ``dim``; later writes to one place win in
    no guaranteed order (as PyTorch); ``reduce='add'|'multiply'`` combines instead."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    axis, idx = _scatter_args(input, dim, index, "scatter")
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
    src = coerce(src)
    if reduce is not None and isinstance(src, Tensor):
        warn_once(
            "scatter_reduce",
            "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
            "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
            "reduction options.",
        )
    st = (("axis", axis), ("reduce", reduce), ("dtype", input._npdtype))
    if reduce is not None:  # PyTorch has no derivative for scatter's reduce forms
        return _refuse_backward(
            apply(_scatter_f, _NOT_IMPLEMENTED, (input, idx, src), st), "scatter"
        )
    if idx.size > 1 and np.any(np.diff(np.sort(idx, axis=axis), axis=axis) == 0):
        st += (_conv.REPEATS,)
    name = "ScatterBackward0" if isinstance(src, Tensor) else "ScatterBackward1"
    return apply(_scatter_f, name, (input, idx, src), st)


@defop(inplace=True, samples=Sample(((3, 4),), args=(1, Idx((3, 5), 4), T((3, 5)))))
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Sums ``src`` into ``input`` at ``index`` along ``dim``."""
    axis, idx = _scatter_args(input, dim, index, "scatter_add")
    st = (("axis", axis), ("reduce", "add"), ("dtype", input._npdtype))
    return apply(_scatter_f, "ScatterAddBackward0", (input, idx, src), st)


def _scatter_reduce_f(
    x: Any, i: Any, src: Any, *, axis: int, reduce: str, include_self: bool, dtype: np.dtype
) -> Any:
    if i.size == 0:  # (src is not looked at: PyTorch does not check its shape then)
        return x
    if x.ndim == 0:  # (a 0-d tensor reads as 1-d)
        st = {"axis": 0, "reduce": reduce, "include_self": include_self, "dtype": dtype}
        one = fnp.reshape(x, (1,))
        return fnp.reshape(_scatter_reduce_f(one, i, fnp.reshape(src, (-1,)), **st), ())
    src = _c(src, dtype)
    src = src[tuple(slice(0, s) for s in i.shape)]
    where = _scatter_index(i, axis, i.shape)
    hit = fnp.zeros(x.shape, bool).at[where].set(True)
    if reduce in ("sum", "mean"):
        base = x if include_self else fnp.where(hit, fnp.zeros_like(x), x)
        out = base.at[where].add(src)
        if reduce == "mean":
            cnt = fnp.zeros(x.shape, dtype).at[where].add(1)
            cnt = cnt + (1 if include_self else 0)
            cnt = fnp.where(cnt == 0, 1, cnt)
            out = out / cnt if _dt.kind(dtype) == "f" else fnp.floor_divide(out, cnt)
        return out
    if reduce == "prod":
        base = x if include_self else fnp.where(hit, fnp.ones_like(x), x)
        return base.at[where].multiply(src)
    if include_self:
        return x.at[where].max(src) if reduce == "amax" else x.at[where].min(src)
    fill = -fnp.inf if reduce == "amax" else fnp.inf
    if _dt.kind(dtype) != "f":
        info = np.iinfo(dtype)
        fill = info.min if reduce == "amax" else info.max
    base = fnp.where(hit, fnp.full_like(x, fill), x)
    return base.at[where].max(src) if reduce == "amax" else base.at[where].min(src)


@defop(
    inplace=True,
    samples=(
        Sample(((3, 4),), args=(1, Idx((3, 5), 4), T((3, 5)), "sum")),
        Sample(
            ((3, 4),),
            args=(1, Idx((3, 5), 4), T((3, 5)), "amax"),
            kwargs=(("include_self", False),),
        ),
        Sample(((3, 4),), args=(0, Idx((2, 4), 3), T((2, 4)), "mean"), grad=False),
        Sample(
            ((3, 4),),
            args=(0, Idx((2, 4), 3), T((2, 4)), "prod"),
            kwargs=(("include_self", False),),
            grad=False,
        ),
    ),
)
def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` with ``sum``/``prod``/``mean``/``amax``/
    ``amin`` (``include_self=False``: the targeted places start from ``src`` alone)."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    axis, idx = _scatter_args(input, dim, index, "scatter_reduce")
    st = (
        ("axis", axis),
        ("reduce", reduce),
        ("include_self", bool(include_self)),
        ("dtype", input._npdtype),
    )
    return apply(_scatter_reduce_f, "ScatterReduceBackward0", (input, idx, src), st)


def _index_op_f(x: Any, i: Any, src: Any, *, axis: int, op: str, dtype: np.dtype) -> Any:
    if x.ndim == 0:  # (a 0-d tensor reads as 1-d)
        one = _index_op_f(fnp.reshape(x, (1,)), i, _flat(src), axis=0, op=op, dtype=dtype)
        return fnp.reshape(one, ())
    where = (slice(None),) * axis + (i,)
    ref = x.at[where]
    if op == "add":
        return ref.add(_c(src, dtype))
    if op == "copy":
        return ref.set(_c(src, dtype))
    return ref.set(fnp.broadcast_to(_c(src, dtype), x[where].shape))


def _index_args(input: Tensor, dim: int, index: Tensor, name: str) -> tuple[int, np.ndarray]:
    axis = _wrap_dim(dim, builtins.max(input.ndim, 1))
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if _dt.kind(index._npdtype) not in "iu":
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    a = np.asarray(index._st.array).astype(np.int64).reshape(-1)
    n = input.shape[axis] if input.ndim else 1
    bad = _first_outside(a, -n if name == "index_fill" else 0, n)  # (index_fill wraps)
    if bad is not None:
        if name == "index_reduce":
            raise IndexError("index out of range in self")
        where = "index_copy_(): " if name == "index_copy" else ""
        raise IndexError(f"{where}index {bad} is out of bounds for dimension {axis} with size {n}")
    return axis, np.where(a < 0, a + n, a)


def _check_index_add(input: Tensor, dim: int, index: Tensor, source: Tensor) -> None:
    """PyTorch's checks of ``index_add``'s arguments, in its order and with its errors
    (no negative indices: PyTorch does not count them from the end here)."""
    axis = _wrap_dim(dim, builtins.max(input.ndim, 1))
    name = _dt.scalar_type_name
    if index.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} with "
            f"type: {name(index._npdtype)} and size: {list(index.shape)}"
        )
    if index._npdtype not in (np.int32, np.int64):
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: {name(index._npdtype)}"
        )
    if not isinstance(source, Tensor):
        kind = type(source).__name__
        raise TypeError(f"index_add(): argument 'source' (position 3) must be Tensor, not {kind}")
    if input._npdtype != source._npdtype:
        raise RuntimeError(
            f"index_add_(): self ({name(input._npdtype)}) and source "
            f"({name(source._npdtype)}) must have the same scalar type"
        )
    n_src = source.shape[axis] if source.ndim else 1
    if index.numel() != n_src:
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim): ({n_src}), for dim: {axis}"
        )
    rest = [d for d in range(input.ndim) if d != axis]
    if source.ndim != input.ndim or any(input.shape[d] != source.shape[d] for d in rest):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}"
        )
    n = input.shape[axis] if input.ndim else 1
    bad = _first_outside(np.asarray(index._st.array), 0, n)
    if bad is not None and input.ndim <= 1:  # (PyTorch's 1-d kernel words it so)
        raise IndexError("index out of range in self")
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {axis} with size {n}")


@defop(
    inplace=True,
    samples=(
        Sample(((4, 3),), args=(0, Idx((3,), 4), T((3, 3)))),
        Sample(((4, 3),), args=(1, Idx((2,), 3), T((4, 2))), kwargs=(("alpha", 2.0),)),
    ),
)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """Adds ``alpha * source`` into the slices of ``dim`` at ``index`` (repeats accumulate)."""
    _check_index_add(input, dim, index, source)
    if input.ndim == 0:
        one = index_add(input.reshape(1), 0, index.reshape(-1), source.reshape(1), alpha=alpha)
        return one.reshape(())
    axis, idx = _index_args(input, dim, index, "index_add")
    src = source if alpha == 1 else source * alpha
    st = (("axis", axis), ("op", "add"), ("dtype", input._npdtype))
    return apply(_index_op_f, "IndexAddBackward0", (input, idx, src), st)


_INDEX_REDUCE_OPS = ("prod", "mean", "amax", "amin")


@defop(
    inplace=True,
    samples=(
        Sample(((4, 3),), args=(0, Idx((3,), 4), T((3, 3)), "mean")),
        Sample(((4, 3),), args=(1, Idx((2,), 3), T((4, 2)), "amax")),
        Sample(
            ((4, 3),),
            args=(0, Idx((2,), 4), T((2, 3)), "amin"),
            kwargs=(("include_self", False),),
        ),
        Sample(((4, 3),), args=(0, Idx((3,), 4), T((3, 3)), "prod"), grad=False),
    ),
)
def index_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """Reduces ``source``'s slices into the slices of ``dim`` at ``index`` with ``prod``,
    ``mean``, ``amax`` or ``amin`` (``include_self=False``: the targeted slices start
    from ``source`` alone); PyTorch's beta warning once."""
    if reduce not in _INDEX_REDUCE_OPS:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    axis, idx = _index_args(input, dim, index, "index_reduce")
    along = [1] * builtins.max(source.ndim, 1)
    along[axis] = -1
    full = np.broadcast_to(idx.reshape(along), tuple(source.shape) or (1,))
    st = (
        ("axis", axis),
        ("reduce", reduce),
        ("include_self", bool(include_self)),
        ("dtype", input._npdtype),
    )
    return apply(_scatter_reduce_f, "IndexReduceBackward0", (input, full, source), st)


@defop(
    inplace=True,
    samples=Sample(((4, 3),), args=(0, Idx((1,), 4), T((1, 3)))),
)
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Copies ``source``'s slices into the slices of ``dim`` at ``index``."""
    axis, idx = _index_args(input, dim, index, "index_copy")
    st = (("axis", axis), ("op", "copy"), ("dtype", input._npdtype))
    return apply(_index_op_f, "IndexCopyBackward0", (input, idx, source), st)


@defop(
    out=False, overloads=True, inplace=True, samples=Sample(((4, 3),), args=(1, Idx((2,), 3), -1.0))
)
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """Fills the slices of ``dim`` at ``index`` with ``value``."""
    axis, idx = _index_args(input, dim, index, "index_fill")
    value = coerce(value)
    st = (("axis", axis), ("op", "fill"), ("dtype", input._npdtype))
    name = "IndexFillBackward1" if isinstance(value, Tensor) else "IndexFillBackward0"
    return apply(_index_op_f, name, (input, idx, value), st)


def _masked_select_f(x: Any, i: Any) -> Any:
    return fnp.take(fnp.reshape(x, (-1,)), i)


@defop(samples=(Sample(((2, 3),), args=(Mask((2, 3)),)), Sample(((2, 3),), args=(Mask((3,)),))))
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements where ``mask`` (broadcast with ``input``) is true, as a 1-D tensor."""
    if mask._npdtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, but got {mask.dtype}")
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x = input.expand(*shape) if tuple(shape) != tuple(input.shape) else input
    flat = np.flatnonzero(np.broadcast_to(np.asarray(mask._st.array), shape))
    return apply(_masked_select_f, "MaskedSelectBackward0", (x, flat.astype(np.int64)))


def _masked_scatter_f(x: Any, i: Any, src: Any, *, dtype: np.dtype) -> Any:
    flat = fnp.reshape(x, (-1,))
    vals = fnp.reshape(_c(src, dtype), (-1,))[: i.shape[0]]
    return fnp.reshape(flat.at[i].set(vals), x.shape)


@defop(out=False, inplace=True, samples=Sample(((2, 3),), args=(Mask((2, 3)), T((2, 3)))))
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Copies ``source``'s leading elements, in order, to where ``mask`` is true."""
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    flat = np.flatnonzero(np.broadcast_to(np.asarray(mask._st.array), shape))
    if flat.size > source.numel():
        raise RuntimeError(
            "masked_scatter: expected source to have at least as many elements as ones in mask"
        )
    st = (("dtype", input._npdtype),)
    return apply(
        _masked_scatter_f, "MaskedScatterBackward0", (input, flat.astype(np.int64), source), st
    )


def _repeat_interleave_f(x: Any, *, repeats: tuple, axis: Any, n: int) -> Any:
    if axis is None:
        x, axis = fnp.reshape(x, (-1,)), 0
    reps = repeats[0] if len(repeats) == 1 else np.asarray(repeats)
    return fnp.repeat(x, reps, axis=axis, total_repeat_length=n)


@defop(
    out=False,
    overloads=True,
    node_name=False,
    samples=(
        Sample(((2, 3),), args=(2,)),
        Sample(((2, 3),), args=(2,), kwargs=(("dim", 1),)),
        Sample(((3, 2),), kwargs=(("repeats", Idx((3,), 3)), ("dim", 0))),
    ),
)
def repeat_interleave(
    input: Tensor, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """Repeats each element (or slice of ``dim``) ``repeats`` times; with only an integer
    tensor, ``repeat_interleave(r)`` repeats the indices ``0..len(r)-1``."""
    if repeats is None:  # torch.repeat_interleave(repeats_tensor)
        r = np.asarray(input._st.array)
        if r.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if _dt.kind(r.dtype) not in "iu":
            name = _dt.scalar_type_name(r.dtype)
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{name}'")
        if (r < 0).any():
            raise RuntimeError("repeats can not be negative")
        return tensor(np.repeat(np.arange(r.shape[0], dtype=np.int64), r))
    if isinstance(repeats, Tensor):
        reps = tuple(int(v) for v in np.asarray(repeats._st.array).reshape(-1))
    else:
        reps = (int(repeats),)
    if builtins.any(r < 0 for r in reps):
        raise RuntimeError("repeats can not be negative")
    axis = None if dim is None else _wrap_dim(dim, input.ndim)
    size = input.numel() if axis is None else input.shape[axis]
    if len(reps) not in (1, size):
        raise RuntimeError("repeats must have the same size as input along dim")
    n = reps[0] * size if len(reps) == 1 else builtins.sum(reps)
    st = (("repeats", reps), ("axis", axis), ("n", n))
    return apply(_repeat_interleave_f, "RepeatInterleaveBackward0", (input,), st)


@defop(
    out=False,
    overloads=True,
    node_name=False,
    samples=(
        Sample(((7, 2),), args=(3,)),
        Sample(((7, 2),), args=([1, 5],)),
        Sample(((2, 5),), args=(2, 1)),
    ),
)
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    """Splits into ``n`` nearly equal parts (the first ``size % n`` one larger), or at the
    given indices."""
    if input.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    axis = _wrap_dim(dim, input.ndim)
    n = input.shape[axis]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        what = "tensor_split expected tensor_indices_or_sections to"
        if ios._npdtype != np.int64:
            raise RuntimeError(
                f"{what} have dtype of long, but got {_dt.scalar_type_name(ios._npdtype)}"
            )
        if ios.ndim > 1:
            raise RuntimeError(
                f"{what} be a zero-dimensional or one-dimensional tensor, but got a tensor "
                f"with {ios.ndim} dims"
            )
        ios = ios.tolist()
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(n, ios)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (ios - r))
        cuts = list(itertools.pairwise(bounds))
    else:
        pts = [builtins.min(builtins.max(int(i) if i >= 0 else int(i) + n, 0), n) for i in ios]
        edges = [0, *pts, n]
        cuts = [(a, builtins.max(a, b)) for a, b in itertools.pairwise(edges)]
    return tuple(narrow(input, axis, int(a), int(b - a)) for a, b in cuts)


@defop(
    out=False,
    overloads=True,
    aliases=("moveaxis",),
    node_name=False,
    samples=(Sample(((2, 3, 4),), args=(0, 2)), Sample(((2, 3, 4),), args=((0, 1), (2, 0)))),
)
def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    src = tuple(source) if isinstance(source, (tuple, list)) else (source,)
    dst = tuple(destination) if isinstance(destination, (tuple, list)) else (destination,)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    src = tuple(_wrap_dim(d, input.ndim) for d in src)
    dst = tuple(_wrap_dim(d, input.ndim) for d in dst)
    for what, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            listed = list(given) if isinstance(given, (tuple, list)) else [given]
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({listed})")
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return input.permute(*order)
