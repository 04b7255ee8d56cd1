"""Torch shape ops: views, indexing, joining, gathering, casts.

The ops PyTorch documents as views (``view``, ``transpose``, ``x[i]``, ``split``, ...)
return views of their input (see :mod:`compat._core.views`): in-place ops on them write
through to the base and share its version counter.
"""

from __future__ import annotations

import builtins
import operator
import warnings
from typing import Any

import numpy as np

from compat._core import bitcast as _bitcast
from compat._core import dtypes as _dt
from compat._core import index_bools as _index_bools
from compat._core import index_put as _index_put
from compat._core import overlap as _overlap
from compat._core import view_layout as _layout
from compat._core import views as _views
from compat._core.creation import _leaf
from compat._core.host_views import host_index, host_slices, layout_op
from compat._core.mutation import apply_inplace
from compat._core.ops import conventions as _conv
from compat._core.ops._common import _c, coerce
from compat._core.optable import Mask, Sample, defop
from compat._core.setitem_nodes import basic, setitem_node
from compat._core.tensor import Size, Tensor, _wrap_dim, apply
from funcgrad import lax as flax
from funcgrad import numpy as fnp


def _shape_arg(shape: tuple) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape: tuple, numel: int) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape_f(x: Any, *, shape: tuple) -> Any:
    return fnp.reshape(x, shape)


def reshaped(
    input: Tensor, shape: tuple, name: str = "ViewBackward0", strict: bool = False
) -> Tensor:
    """``input`` in ``shape``: a view when its layout allows one (always, unless it is a
    non-contiguous view), else a copy -- or, for ``view`` (``strict``), PyTorch's error."""
    if input._view is not None:
        sh, st, _ = input._view.layout
        if _layout.view_strides(sh, st, shape) is None:
            if strict:
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead."
                )
            return apply(_reshape_f, "UnsafeViewBackward0", (input,), (("shape", shape),))
    out = layout_op(_reshape_f, name, input, (("shape", shape),), lambda x: x.reshape(shape))
    return _views.make_view(out, input, ("rs", shape))


def _view_dtype(input: Tensor, dtype: _dt.dtype) -> Tensor:
    """``x.view(dtype)``: the same bytes read as ``dtype``, sharing ``x``'s memory (a
    dtype view: no gradient, as PyTorch's), with PyTorch's layout checks."""
    npd = _dt.np_dtype(dtype)
    cur = input._npdtype
    a, b = cur.itemsize, npd.itemsize
    if a != b:
        names = f"{_dt.scalar_type_name(cur)} as {_dt.scalar_type_name(npd)}"
        tail = f"to view {names} (different element sizes), but got"
        if input.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names} (different element sizes)")
        shape, strides, offset = _views.layout_of(input)
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {tail} {strides[-1]}")
        if b > a:
            r = b // a
            if shape[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {tail} {shape[-1]}")
            if offset % r:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {r} {tail} {offset}"
                )
            for d, s in enumerate(strides[:-1]):
                if s % r:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {r} {tail} {s}")
    out = apply(_bitcast.bitcast_f, "ViewBackward0", (input.detach(),), (("dtype", npd),))
    return _views.make_dtype_view(out, input, npd)


@defop(out=False, samples=Sample(((2, 3),), args=((3, -1),)))
def reshape(input: Tensor, *shape: Any) -> Tensor:
    return reshaped(input, _infer_shape(_shape_arg(shape), input.numel()))


@defop(function=False, samples=Sample(((2, 3),), args=(6,)))
def view(input: Tensor, *shape: Any, **kw: Any) -> Tensor:
    """``view(*shape)``, ``view(size=...)`` or ``view(dtype)``/``view(dtype=...)``."""
    if kw:
        key = next(iter(kw))
        if shape or len(kw) > 1 or key not in ("dtype", "size"):
            raise TypeError(f"view() got an unexpected keyword argument '{key}'")
        shape = (kw[key],)
    if len(shape) == 1 and isinstance(shape[0], _dt.dtype):
        return _view_dtype(input, shape[0])
    return reshaped(input, _infer_shape(_shape_arg(shape), input.numel()), strict=True)


@defop(out=False, samples=Sample(((2, 3, 2),), args=(1,)))
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    nd = input.ndim
    if nd == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, nd), _wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = tuple(input.shape)
    new = shp[:s] + (int(np.prod(shp[s : e + 1], dtype=np.int64)),) + shp[e + 1 :]
    return reshape(input, new)


def _transpose_f(x: Any, *, perm: tuple) -> Any:
    return fnp.transpose(x, perm)


@defop(out=False, samples=Sample(((2, 3, 2),), args=((2, 0, 1),)))
def permute(input: Tensor, *dims: Any) -> Tensor:
    dims = _shape_arg(dims)
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    perm = tuple(_wrap_dim(d, nd) for d in dims)
    if sorted(perm) != list(range(nd)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return permuted(input, perm, "PermuteBackward0")


def permuted(input: Tensor, perm: tuple, name: str) -> Tensor:
    """The view of ``input`` with its dims in the order ``perm``."""
    out = layout_op(_transpose_f, name, input, (("perm", perm),), lambda x: x.transpose(perm))
    return _views.make_view(out, input, ("pm", perm))


@defop(out=False, aliases=("swapdims",), samples=Sample(((2, 3, 2),), args=(0, 2)))
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    nd = input.ndim
    if nd == 0:
        return input.view(())
    a, b = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
    perm = list(range(nd))
    perm[a], perm[b] = perm[b], perm[a]
    return permuted(input, tuple(perm), "TransposeBackward0")


@defop(out=False, samples=Sample(((2, 3),)))
def t(input: Tensor) -> Tensor:
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return permuted(input, (1, 0) if input.ndim == 2 else tuple(range(input.ndim)), "TBackward0")


@defop(out=False, samples=Sample(((2, 3),), args=(1,)))
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    axis = _wrap_dim(dim, input.ndim + 1)
    shp = tuple(input.shape)
    shape = (*shp[:axis], 1, *shp[axis:])
    out = apply(_reshape_f, "UnsqueezeBackward0", (input,), (("shape", shape),))
    return _views.make_view(out, input, ("us", shape, axis))


@defop(out=False, overloads=True, samples=(Sample(((2, 1, 3),)), Sample(((2, 1, 3),), args=(1,))))
def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    shp = tuple(input.shape)
    if dim is None:
        axes = tuple(i for i, s in enumerate(shp) if s == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = tuple(
            sorted(
                {
                    _wrap_dim(d, input.ndim)
                    for d in dims
                    if shp and shp[_wrap_dim(d, input.ndim)] == 1
                }
            )
        )
    name = "SqueezeBackward0" if dim is None else "SqueezeBackward1"
    shape = tuple(s for i, s in enumerate(shp) if i not in axes)
    out = apply(_reshape_f, name, (input,), (("shape", shape),))
    return _views.make_view(out, input, ("sq", shape, axes))


def _expand_f(x: Any, *, shape: tuple) -> Any:
    return fnp.broadcast_to(x, shape)


@defop(function=False, samples=Sample(((1, 3),), args=(4, 3)))
def expand(input: Tensor, *sizes: Any) -> Tensor:
    sizes = _shape_arg(sizes)
    shp = tuple(input.shape)
    if len(sizes) < len(shp):
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(shp)}}}, size={list(sizes)}): the number of sizes "
            f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in "
            f"the tensor ({len(shp)})"
        )
    lead = len(sizes) - len(shp)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s == -1:
                raise RuntimeError(
                    "The expanded size of the tensor (-1) isn't allowed in a leading, "
                    "non-existing dimension " + str(i)
                )
            out.append(s)
        else:
            cur = shp[i - lead]
            if s == -1:
                out.append(cur)
            elif cur not in (1, s):
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size ({cur}) "
                    f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor "
                    f"sizes: {list(shp)}"
                )
            else:
                out.append(s)
    out = tuple(out)
    r = apply(_expand_f, "ExpandBackward0", (input,), (("shape", out),))
    return _views.make_view(r, input, ("ex", out))


@defop(function=False, samples=Sample(((1, 3), (4, 3))))
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, *other.shape)


@defop(out=False, samples=Sample(((1, 3),), args=((4, 3),)))
def broadcast_to(input: Tensor, shape: Any) -> Tensor:
    return expand(input, *shape)


def _repeat_f(x: Any, *, reps: tuple) -> Any:
    return fnp.tile(x, reps)


@defop(function=False, samples=Sample(((2, 3),), args=(2, 1)))
def repeat(input: Tensor, *sizes: Any) -> Tensor:
    reps = _shape_arg(sizes)
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    return apply(_repeat_f, "RepeatBackward0", (input,), (("reps", reps),))


# --------------------------------------------------------------------------- joining


def _split_f(x: Any, *, axis: int, bounds: tuple) -> Any:
    idx = [slice(None)] * x.ndim
    outs = []
    for a, b in bounds:
        idx[axis] = slice(a, b)
        outs.append(x[tuple(idx)])
    return tuple(outs)


@defop(out=False, samples=(Sample(((5, 2),), args=(2,)), Sample(((5, 2),), args=([1, 4],))))
def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    return _split(input, split_size_or_sections, dim, False)


@defop(out=False, samples=Sample(((5, 2),), args=(2,)))
def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """``split`` whose outputs autograd does not treat as views (in-place ops allowed)."""
    return _split(input, split_size, dim, True)


def _split(input: Tensor, split_size_or_sections: Any, dim: int, unsafe: bool) -> tuple:
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        if s == 0 and n:
            raise RuntimeError(
                f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )
        sizes = [builtins.min(s, n - i) for i in range(0, n, s)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.any(s < 0 for s in sizes):
            raise RuntimeError(
                "split_with_sizes expects split_sizes have only non-negative entries, but got "
                f"split_sizes={sizes}"
            )
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                f"at dimension {d}), but got split_sizes={sizes}"
            )
    bounds, start = [], 0
    for s in sizes:
        bounds.append((start, start + s))
        start += s
    name = (
        "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0"
    )
    if unsafe:
        name = "Unsafe" + name
    static = (("axis", d), ("bounds", tuple(bounds)))
    out = layout_op(_split_f, name, input, static, host_slices(d, bounds))
    out = out if isinstance(out, tuple) else (out,)
    if unsafe:
        return out
    full = (("s", None, None, None),) * d
    for k, (t, (a, b)) in enumerate(zip(out, bounds)):
        _views.make_view(t, input, ("ix", (*full, ("s", a, b, None))), multi=(name[:-9], k))
    return out


@defop(out=False, samples=Sample(((5, 2),), args=(3,)))
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    if n == 0:  # ``chunks`` empty pieces, as PyTorch's
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


@defop(out=False, samples=Sample(((5, 2),), args=(3,)))
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunk`` whose outputs autograd does not treat as views."""
    n = input.shape[_wrap_dim(dim, input.ndim)]
    if n == 0:  # ``chunks`` empty pieces, as PyTorch's
        return _split(input, [0] * chunks, dim, True)
    return _split(input, -(-n // chunks), dim, True)


@defop(out=False, samples=Sample(((5, 2),), args=([1, 4],)))
def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """``split_with_sizes`` whose outputs autograd does not treat as views."""
    return _split(input, list(split_sizes), dim, True)


@defop(out=False, samples=Sample(((3, 2),), args=(1,)))
def unbind(input: Tensor, dim: int = 0) -> tuple:
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0:
        return ()
    out = apply(_unbind_f, "UnbindBackward0", (input,), (("axis", d), ("n", n)))
    out = out if isinstance(out, tuple) else (out,)
    full = (("s", None, None, None),) * d
    for k, t in enumerate(out):
        _views.make_view(t, input, ("ix", (*full, ("i", k))), multi=("Unbind", k))
    return out


def _unbind_f(x: Any, *, axis: int, n: int) -> Any:
    idx: list[Any] = [slice(None)] * x.ndim
    outs = []
    for i in range(n):
        idx[axis] = i
        outs.append(x[tuple(idx)])
    return tuple(outs)


# --------------------------------------------------------------------------- indexing


def _to_index_array(i: Any) -> np.ndarray:
    if isinstance(i, Tensor):
        return np.asarray(i._st.array)
    a = np.asarray(i)
    # (an empty list is an empty integer index, as PyTorch's tensor of it is read)
    return a.astype(np.int64) if isinstance(i, list) and a.size == 0 else a


_LIST_INDEX = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
    "or a different result"
)


def _bound(v: Any) -> int | None:
    """A slice bound as an int: ``None``, or anything with ``__index__`` (Python's error
    for a float, as PyTorch's; compat truncated it)."""
    if v is None:
        return None
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(
            "slice indices must be integers or None or have an __index__ method"
        ) from None


def index_spec(idx: Any, shape: tuple) -> tuple[tuple, list]:
    """Split an index into a static spec and dynamic integer index arrays (boolean masks
    become the integer arrays of their ``nonzero``, since compat runs eagerly)."""
    t = type(idx)
    if t is int and shape and -shape[0] <= idx < shape[0]:  # ``x[i]``, in range
        return (("d", 0),), [idx % shape[0]]
    if t is slice and shape:  # ``x[a:b:c]`` (a step <= 0 takes the general path's error)
        parts = tuple(_bound(v) for v in (idx.start, idx.stop, idx.step))
        if parts[2] is None or parts[2] > 0:
            return (("s", *parts),), []
    if isinstance(idx, list) and builtins.any(
        i is None or i is Ellipsis or isinstance(i, (Tensor, list, tuple, slice)) for i in idx
    ):
        idx = tuple(idx)  # PyTorch's (NumPy's legacy) rule: such a list is a tuple
        warnings.warn(_LIST_INDEX, UserWarning, stacklevel=3)
    if not shape and isinstance(idx, (int, np.integer, slice)) and not isinstance(idx, bool):
        # (PyTorch's words for a lone int or slice on a 0-d tensor; ``x[(0,)]`` has too many)
        if isinstance(idx, slice):
            raise IndexError(_ZERO_DIM_SLICE)
        if idx != 0:
            raise IndexError(f"index {int(idx)} is out of bounds for dimension 0 with size 0")
        raise IndexError(_ZERO_DIM_INT)
    if not isinstance(idx, tuple):
        idx = (idx,)
    spec: list = []
    arrays: list = []
    dim = 0
    n_ell = builtins.sum(1 for i in idx if i is Ellipsis)
    used = builtins.sum(
        _to_index_array(i).ndim
        if isinstance(i, (Tensor, np.ndarray, list))
        and _to_index_array(i).dtype in (np.bool_, np.uint8)
        and (isinstance(i, (Tensor, np.ndarray)) or _to_index_array(i).dtype == np.bool_)
        else 1
        for i in idx
        if i is not None and i is not Ellipsis
    )
    for i in idx:
        if i is None:
            spec.append(("n",))
        elif i is Ellipsis:  # as full slices: one form for every index kind
            spec.extend([("s", None, None, None)] * max(len(shape) - used, 0))
            dim += max(len(shape) - used, 0)
        elif isinstance(i, slice):
            parts = tuple(_bound(v) for v in (i.start, i.stop, i.step))
            if parts[2] is not None and parts[2] <= 0:
                raise ValueError("step must be greater than zero")
            spec.append(("s", *parts))
            dim += 1
        elif isinstance(i, (bool, np.bool_)):  # (``bool_scalars`` rewrote them)
            raise IndexError("indexing with a Python bool is not supported here")
        elif isinstance(i, (int, np.integer)) or (
            isinstance(i, Tensor)
            and i.ndim == 0
            and _dt.kind(i._npdtype) in "iu"
            and i._npdtype != np.uint8
        ):
            v = int(i)
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            size = shape[dim]
            if not -size <= v < size:
                raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {size}")
            # a runtime operand, not part of the program: one program serves every index
            spec.append(("d", len(arrays)))
            arrays.append(v % size)  # a Python int: a cached weakly typed device scalar
            dim += 1
        else:
            arr = _to_index_array(i)
            if _index_bools.is_mask(i, arr):
                if arr.ndim == 0:
                    raise IndexError("indexing with a 0-d bool tensor is not supported by compat")
                for k, nz in enumerate(np.nonzero(arr)):
                    spec.append(("a", len(arrays)))
                    arrays.append(nz.astype(np.int64))
                    if shape[dim + k] != arr.shape[k]:
                        raise IndexError(
                            f"The shape of the mask {list(arr.shape)} at index {k} does not "
                            f"match the shape of the indexed tensor {list(shape)} at index "
                            f"{dim + k}"
                        )
                dim += arr.ndim
                continue
            if _dt.kind(arr.dtype) not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            size = shape[dim] if dim < len(shape) else 0
            if arr.size and size == 0:
                raise IndexError("index is out of bounds for dimension with size 0")
            if arr.size and (arr.max() >= size or arr.min() < -size):
                bad = int(arr.max() if arr.max() >= size else arr.min())
                raise IndexError(
                    f"index {bad} is out of bounds for dimension {dim} with size {size}"
                )
            spec.append(("a", len(arrays)))
            arrays.append(np.where(arr < 0, arr + size, arr).astype(np.int64))
            dim += 1
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    adv = [arrays[s[1]] for s in spec if s[0] == "a"]
    if len(adv) > 1:
        try:
            np.broadcast_shapes(*(a.shape for a in adv))
        except ValueError:
            shapes = ", ".join(str(list(a.shape)) for a in adv)
            raise IndexError(
                f"shape mismatch: indexing tensors could not be broadcast together with shapes "
                f"{shapes}"
            ) from None
    if used > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    return tuple(spec), arrays


_ZERO_DIM_INT = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
    "C++ to convert a 0-dim tensor to a number"
)
_ZERO_DIM_SLICE = "slice() cannot be applied to a 0-dim tensor."


def _rebuild(spec: tuple, arrays: tuple) -> tuple:
    out: list = []
    for s in spec:
        k = s[0]
        if k == "n":
            out.append(None)
        elif k == "e":
            out.append(Ellipsis)
        elif k == "s":
            out.append(slice(s[1], s[2], s[3]))
        else:
            out.append(arrays[s[1]])
    return tuple(out)


def _phases(spec: tuple, arrays: tuple) -> tuple[tuple, tuple] | None:
    """PyTorch applies integer indices first (as ``select``) and then the rest, where
    NumPy would treat integers among index arrays as advanced indices: with both present
    the index splits into an integers-only index and the remaining one."""
    kinds = {s[0] for s in spec}
    if not ("d" in kinds and "a" in kinds):
        return None
    first: list = []
    rest: list = []
    for s in spec:
        if s[0] == "d":
            first.append(arrays[s[1]])
        elif s[0] == "n":
            rest.append(None)
        elif s[0] == "e":
            first.append(Ellipsis)
            rest.append(Ellipsis)
        else:
            first.append(slice(None))
            rest.append(slice(s[1], s[2], s[3]) if s[0] == "s" else arrays[s[1]])
    return tuple(first), tuple(rest)


def _getitem_f(x: Any, *arrays: Any, spec: tuple) -> Any:
    two = _phases(spec, arrays)
    if two is not None:
        return x[two[0]][two[1]]
    kinds = {s[0] for s in spec}
    if "d" in kinds and kinds <= {"d", "s", "n"}:
        return _select_ints(x, arrays, spec)
    return x[_rebuild(spec, arrays)]


def _select_ints(x: Any, arrays: tuple, spec: tuple) -> Any:
    """``x[spec]`` for integers (in range: :func:`index_spec` wrapped them), slices and
    ``None``: the integers as one ``dynamic_slice`` of size 1 on their dims, which drops
    them, then the rest. No param holds the indexed dims' sizes (a gather would, through
    its index arithmetic), so the op is one shape template for a growing axis."""
    shape = x.shape
    starts: list = [0] * len(shape)
    sizes = list(shape)
    keep: list = []  # the remaining dims' sizes
    rest: list = []  # the index of what remains
    dim = 0
    for s in spec:
        if s[0] == "n":
            rest.append(None)
            continue
        if s[0] == "d":
            starts[dim] = arrays[s[1]]
            sizes[dim] = 1
        else:
            keep.append(shape[dim])
            rest.append(slice(s[1], s[2], s[3]))
        dim += 1
    keep.extend(shape[dim:])
    y = fnp.reshape(flax.dynamic_slice(x, starts, sizes, allow_negative_indices=False), keep)
    full = (None, None, None), (None, None, 1), (0, None, None), (0, None, 1)
    if builtins.all(r is not None and (r.start, r.stop, r.step) in full for r in rest):
        return y
    return y[tuple(rest)]


def getitem(self: Tensor, idx: Any) -> Tensor:
    self, idx = _index_bools.bool_scalars(self, idx)
    spec, arrays = index_spec(idx, tuple(self.shape))

    dyn = [a if type(a) is int else _leaf(a, False) for a in arrays]
    name = (
        "SelectBackward0"
        if len(spec) == 1 and spec[0][0] == "d"
        else ("SliceBackward0" if builtins.all(s[0] in "sne" for s in spec) else "IndexBackward0")
    )
    out = host_index(self, spec, arrays)
    if out is None:
        out = apply(_getitem_f, name, (self, *dyn), (("spec", spec),))
    if basic(spec):
        return _views.make_view(out, self, ("ix", spec), tuple(arrays))
    return out


def _setitem_f(
    x: Any,
    v: Any,
    *arrays: Any,
    spec: tuple,
    dtype: np.dtype,
    repeats: bool = False,
    unique: bool = False,
) -> Any:
    if (
        not arrays
        and getattr(v, "ndim", 0) == 0
        and len(spec) <= x.ndim
        and builtins.all(s[0] == "s" for s in spec)
    ):
        return _fill_slices(x, _c(v, dtype), spec)
    # (at repeated places scatter_set gives every written value its place's gradient,
    # as PyTorch's IndexPutBackward0)
    put = _conv.scatter_set if repeats else _set_unique if unique else _set
    two = _phases(spec, arrays)
    if two is not None:
        # (integers and slices: each place once)
        return x.at[two[0]].set(put(x[two[0]], two[1], _c(v, dtype)), unique_indices=True)
    return put(x, _rebuild(spec, arrays), _c(v, dtype))


def _set(x: Any, where: Any, v: Any) -> Any:
    return x.at[where].set(v)


def _set_unique(x: Any, where: Any, v: Any) -> Any:
    """``_set`` for index arrays known to address each place once: no search for each
    place's last write (O(k^2) for k traced places)."""
    return x.at[where].set(v, unique_indices=True)


def _fill_slices(x: Any, v: Any, spec: tuple) -> Any:
    """``x[slices] = v`` for static slices and a 0-d ``v``: a ``where`` over a mask of the
    sliced positions (one small constant per sliced dim) instead of a scatter (~20
    equations of index arithmetic on the host tier); same values and gradients."""
    shape = x.shape
    mask = None
    for d, s in enumerate(spec):
        n = shape[d]
        start, stop, step = slice(s[1], s[2], s[3]).indices(n)
        if start == 0 and stop == n and step == 1:
            continue
        m = np.zeros(n, np.bool_)
        m[start:stop:step] = True
        m = m.reshape((n,) + (1,) * (len(shape) - d - 1))
        mask = m if mask is None else fnp.logical_and(mask, m)
    if mask is None:
        return fnp.broadcast_to(v, shape)
    return fnp.where(mask, v, x)


def setitem(self: Tensor, idx: Any, value: Any) -> None:
    self, idx = _index_bools.bool_scalars(self, idx)
    _index_bools.check_uint8_fill(idx, value)
    spec, arrays = index_spec(idx, tuple(self.shape))

    value = coerce(value)
    if isinstance(value, Tensor) and value.ndim and value.shape[0] == 1:
        # PyTorch drops a value's leading dims of size 1 before broadcasting it
        n = 0
        while n < value.ndim and value.shape[n] == 1:
            n += 1
        value = value.reshape(tuple(value.shape)[n:])
    if isinstance(value, Tensor) and value._npdtype != self._npdtype:
        _index_put.setitem_dtype_check(self, idx, any(s[0] == "a" for s in spec), value)
    if self._view is not None and basic(spec):
        # PyTorch: a view of the indexed part, then copy_ into it
        part = getitem(self, idx)  # (a 0-d value fills it with its number, as PyTorch's)
        if isinstance(value, Tensor) and (value.ndim or not part.ndim):
            part.copy_(value)
        else:
            part.fill_(value)
        return
    _overlap.check_setitem(self, idx, any(s[0] == "a" for s in spec), value, getitem)
    if _index_bools.overlapping(self):
        _index_bools.warn_expanded_index_put(idx, value)
    dyn = [a if type(a) is int else _leaf(a, False) for a in arrays]
    name = setitem_node(spec, tuple(self.shape), value)
    st = (("spec", spec), ("dtype", self._npdtype))
    if _conv.repeats([arrays[s[1]] for s in spec if s[0] == "a"]):
        st += (_conv.REPEATS,)  # (forward mode drops it: then neither flag is set)
    elif builtins.any(s[0] == "a" for s in spec):
        st += (("unique", True),)
    apply_inplace(self, _setitem_f, name, (value, *dyn), st)


def _masked_fill_f(x: Any, m: Any, v: Any, *, dtype: np.dtype) -> Any:
    return fnp.where(m, _c(v, dtype), x)


@defop(out=False, overloads=True, inplace=True, samples=Sample(((2, 3),), args=(Mask((2, 3)), 0.5)))
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``input`` with ``value`` (a number or 0-d tensor) where ``mask`` (bool) is true."""
    _index_put.masked_fill_check(mask, value)
    return apply(
        _masked_fill_f,
        "MaskedFillBackward0",
        (input, mask, coerce(value)),
        (("dtype", input._npdtype),),
    )


def _one_hot_f(x: Any, *, n: int) -> Any:
    return fnp.asarray(fnp.expand_dims(x, -1) == fnp.arange(n, dtype=x.dtype), np.int64)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    if num_classes < 0:
        num_classes = int(np.asarray(tensor._st.array).max()) + 1
    return apply(_one_hot_f, "one_hot", (tensor,), (("n", int(num_classes)),))


# --------------------------------------------------------------------------- casts and copies


def _cast_f(x: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype)


def to_dtype(input: Tensor, dtype: Any, copy: bool = False) -> Tensor:
    npd = _dt.np_dtype(dtype)
    if npd == input._npdtype and not copy:
        return input
    return apply(_cast_f, "ToCopyBackward0", (input,), (("dtype", npd),))


def _clone_f(x: Any) -> Any:
    return fnp.array(x, copy=True)  # (the same bits: -0.0 and NaN payloads kept)


@defop(out=False, samples=Sample(((2, 3),)))
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    return apply(_clone_f, "CloneBackward0", (input,))
