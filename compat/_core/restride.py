"""Ops that change which memory a tensor shows, in place: the in-place view ops
(``transpose_``, ``t_``, ``squeeze_``, ``unsqueeze_``, ``swapdims_``, ``as_strided_``),
``as_strided``, ``set_``, ``resize_`` and ``resize_as_``.

compat's views are a root plus a chain of view steps (:mod:`compat._core.views`). An
in-place view op on a view extends its chain. On a tensor that is not a view, the tensor
becomes a view of a *holder*: a hidden tensor that takes over its storage cell, version
counter and graph node, so that the views made of it before keep showing that storage
(their ``ViewInfo.root`` follows the holder), while the tensor itself reports no
``_base``, as PyTorch's does. ``as_strided`` indexes the root's (always contiguous) array
by memory position.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core import tensor_checks as _tc
from compat._core import view_layout as _layout
from compat._core import views as _views
from compat._core.mutation import check_inplace
from compat._core.shape_ops import _reshape_f, _transpose_f
from compat._core.tensor import Tensor, _new_tensor, _wrap_dim, apply


def _holder(self: Tensor) -> Tensor:
    """The hidden tensor holding ``self``'s storage and node, ``self`` being a root."""
    h = _new_tensor(Tensor, self._st.a)
    h._st = self._st
    h._vc = self._vc
    h._inference = self._inference
    if self._grad_fn is not None:
        h._grad_fn = self._grad_fn
        h._output_nr = self._output_nr
        h._requires_grad = True
    h.__dict__["_owner"] = weakref.ref(self)
    self.__dict__["_holder"] = h
    return h


def _view_base(self: Tensor, name: str) -> tuple[Tensor, bool]:
    """PyTorch's checks for ``self.<name>_(...)``; the tensor to take the view of."""
    if self._view is not None:
        check_inplace(self, self._requires_grad, name)
        return self, "_holder" in self.__dict__
    self._check_inplace()
    return _holder(self), True


def _adopt(self: Tensor, r: Tensor, from_holder: bool) -> Tensor:
    """``self`` becomes the view ``r`` (its storage, chain and node), one version on."""
    self._st = r._st
    self._view = r._view
    if r._grad_fn is not None:
        self._rebind(r._grad_fn, r._output_nr)
    self._vc.v += 1
    if from_holder or r._grad_fn is None:
        self._view.seen = self._vc.v  # (an in-place op on a view is AsStridedBackward0)
    return self


def _inplace_view(self: Tensor, fn: Any, node: str, static: tuple, step: tuple) -> Tensor:
    base, held = _view_base(self, node)
    r = _views.make_view(apply(fn, node, (base,), static), base, step)
    return _adopt(self, r, held)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In-place ``transpose``: ``self`` shows its memory with two dims swapped."""
    nd = self.ndim
    perm = list(range(nd))
    if nd:
        a, b = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
        perm[a], perm[b] = perm[b], perm[a]
    p = tuple(perm)
    return _inplace_view(self, _transpose_f, "TransposeBackward1", (("perm", p),), ("pm", p))


def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """In-place ``swapaxes``: ``transpose_`` under NumPy's argument names."""
    return transpose_(self, axis0, axis1)


def t_(self: Tensor) -> Tensor:
    """In-place ``t``: a 2-D tensor transposed in place (0-D and 1-D unchanged)."""
    nd = self.ndim
    if nd > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D")
    p = (1, 0) if nd == 2 else tuple(range(nd))
    return _inplace_view(self, _transpose_f, "TBackward1", (("perm", p),), ("pm", p))


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """In-place ``unsqueeze``."""
    axis = _wrap_dim(dim, self.ndim + 1)
    shp = tuple(self.shape)
    shape = (*shp[:axis], 1, *shp[axis:])
    return _inplace_view(
        self, _reshape_f, "UnsqueezeBackward1", (("shape", shape),), ("us", shape, axis)
    )


def squeeze_(self: Tensor, dim: Any = None) -> Tensor:
    """In-place ``squeeze`` (all size-1 dims, one dim, or a tuple of dims)."""
    shp = tuple(self.shape)
    nd = len(shp)
    if dim is None:
        axes, node = tuple(i for i, s in enumerate(shp) if s == 1), "SqueezeBackward3"
    else:
        many = isinstance(dim, (tuple, list))
        dims = {_wrap_dim(d, max(nd, 1)) for d in (dim if many else (dim,))}
        axes = tuple(sorted(d for d in dims if nd and shp[d] == 1))
        node = "SqueezeBackward5" if many else "SqueezeBackward4"
    shape = tuple(s for i, s in enumerate(shp) if i not in axes)
    return _inplace_view(self, _reshape_f, node, (("shape", shape),), ("sq", shape, axes))


# --------------------------------------------------------------------------- as_strided


def _as_strided_f(x: Any, *, size: tuple, stride: tuple, offset: int) -> Any:
    return _views.strided_gather(x, size, stride, offset)


def _check_bounds(root: Tensor, size: tuple, stride: tuple, offset: int) -> None:
    if any(s < 0 for s in size):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
        )
    if any(st < 0 for st in stride):
        raise RuntimeError(
            "as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
        )
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    have = math.prod(root.shape)
    if need > have:
        item = root._npdtype.itemsize
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {item} requiring a storage size of {need * item} are out of bounds "
            f"for storage of size {have * item}"
        )


def _strided_view(base: Tensor, size: Any, stride: Any, offset: int, node: str) -> Tensor:
    """The view of ``base``'s root storage with (``size``, ``stride``, ``offset``)."""
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    _check_bounds(base, size, stride, offset)
    static = (("size", size), ("stride", stride), ("offset", offset))
    out = apply(_as_strided_f, node, (base,), static)
    return _views.make_view(out, base, ("as", size, stride, offset))


def _root_for_strided(self: Tensor) -> Tensor:
    info = self._view
    if info is None:
        return self
    if info.seen != self._vc.v:
        info.sync(self)
    return info.root


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes, strides and offset (default:
    ``input``'s own offset)."""
    off = _views.layout_of(input)[2] if storage_offset is None else int(storage_offset)
    return _strided_view(_root_for_strided(input), size, stride, off, "AsStridedBackward0")


def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: int | None = None) -> Tensor:
    """In-place ``as_strided``: ``self`` shows its storage with new sizes and strides."""
    off = _views.layout_of(self)[2] if storage_offset is None else int(storage_offset)
    if self._view is not None:
        check_inplace(self, self._requires_grad, "AsStridedBackward1")
        base, held = _root_for_strided(self), "_holder" in self.__dict__
    else:
        self._check_inplace()
        base, held = _holder(self), True
    return _adopt(self, _strided_view(base, size, stride, off, "AsStridedBackward1"), held)


# --------------------------------------------------------------------------- set_ / resize_


def _set_no_derivative(grad: Tensor) -> None:
    raise RuntimeError("derivative for aten::set_ is not implemented")


def _alias_f(x: Any) -> Any:
    return x


def _alias(t: Tensor) -> Tensor:
    """A view of ``t`` showing all of it, as it is laid out."""
    p = tuple(range(t.ndim))
    return _views.make_view(
        apply(_transpose_f, "AliasBackward0", (t,), (("perm", p),)), t, ("pm", p)
    )


def set_(
    self: Tensor,
    source: Any = None,
    storage_offset: int | None = None,
    size: Any = None,
    stride: Any = None,
) -> Tensor:
    """``self`` shows ``source``'s memory (``set_()``: an empty tensor): all of it as
    ``source`` does, or (``storage_offset``, ``size``, ``stride``) of its storage. The
    views made of ``self`` before keep its old memory. Under autograd ``self`` gets a node
    whose backward raises, as PyTorch's."""
    if source is not None and not isinstance(source, Tensor):
        if isinstance(source, _views.UntypedStorage):
            # the whole storage, 1-D, unless an offset/size says otherwise
            source = source._root
            if size is None and storage_offset is None:
                size, storage_offset = (math.prod(source.shape),), 0
        else:
            raise TypeError(
                f"set_() received an invalid combination of arguments - got "
                f"({type(source).__name__}): expected a Tensor or a storage"
            )
    self._check_inplace()
    if source is None:
        source = _new_tensor(Tensor, np.zeros((0,), self._npdtype))
    if source._npdtype != self._npdtype:
        raise RuntimeError(
            f"Could not set tensor of type {_cxx(source._npdtype)} to a tensor of type "
            f"{_cxx(self._npdtype)}"
        )
    if self._view is None:
        _holder(self)
    with _gm.no_grad():
        if size is not None or storage_offset is not None:
            size = tuple(source.shape) if size is None else tuple(size)
            stride = _layout.contiguous_strides(size) if stride is None else tuple(stride)
            off = 0 if storage_offset is None else int(storage_offset)
            root = _root_for_strided(source)
            r = _strided_view(root, size, stride, off, "AsStridedBackward0")
        else:
            r = _alias(source)
    # (PyTorch: self keeps its own version counter)
    self._st, self._view = r._st, r._view
    self._view.meta = _views.DEFAULT
    if (self._requires_grad or source._requires_grad) and _gm._state.record:
        r = apply(_alias_f, "torch::autograd::NotImplemented", (source.detach().requires_grad_(),))
        self._rebind(r._grad_fn, 0)
        self.register_hook(_set_no_derivative)
    elif self._grad_fn is not None:
        self._unregister_retain()
        self._grad_fn = None
        self._requires_grad = False
    if self._grad_fn is None:
        self._acc = None  # a new gradient accumulator (PyTorch's: graphs before keep theirs)
    self._vc.v += 1
    if self._view is not None:
        self._view.seen = self._vc.v
    return self


def _cxx(npd: np.dtype) -> str:
    return _dt.type_meta_name(npd)


def _sizes(args: tuple) -> tuple:
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        args = tuple(args[0])
    return tuple(int(s) for s in args)


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """``self`` shows ``sizes`` contiguous elements of its storage from its offset; the
    storage grows (with zeros: compat has no uninitialised memory) when too small, and
    then the views made of ``self`` before keep the old storage."""
    _tc.check_inplace(self)
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    size = _sizes(sizes)
    if any(s < 0 for s in size):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
        )
    if memory_format is not None and "channels_last" in str(memory_format):
        rank = 5 if "3d" in str(memory_format) else 4
        if len(size) != rank:
            raise RuntimeError(
                f"required rank {rank} tensor to use {'channels_last_3d' if rank == 5 else 'channels_last'} format"
            )
    if size == tuple(self.shape):
        return self
    _check_storage_size(size, self._npdtype.itemsize)
    off = _views.layout_of(self)[2]
    base = _root_for_strided(self) if self._view is not None else None
    have = math.prod((base if base is not None else self).shape)
    n = math.prod(size)
    if off + n > have:  # the storage grows: a new one, holding the old elements first
        src = base if base is not None else self
        flat = np.asarray(src.detach()._st.array).reshape(-1)
        try:
            new = np.zeros((off + n,), flat.dtype)
        except (ValueError, MemoryError):
            raise RuntimeError(
                "DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                f"{(off + n) * flat.dtype.itemsize} bytes."
            ) from None
        new[: flat.size] = flat
        if self._view is None:
            _holder(self)
        t = Tensor._make(new[off:].reshape(size))
        t.__dict__["_owner"] = weakref.ref(self)
        with _gm.no_grad():
            r = _alias(t)
        return _adopt(self, r, True)
    stride = _layout.contiguous_strides(size)
    with _gm.no_grad():
        if base is None:
            base = _holder(self)
        r = _strided_view(base, size, stride, off, "AsStridedBackward0")
    return _adopt(self, r, True)


_INT64_MAX = 2**63 - 1


def _check_storage_size(size: tuple, itemsize: int) -> None:
    """PyTorch's overflow errors for ``resize_`` to ``size``: the contiguous strides, the
    number of elements, then the bytes, each within int64."""
    acc = 1
    for s in reversed(size[1:]):
        acc *= max(s, 1)
        if acc > _INT64_MAX:
            raise RuntimeError("Stride calculation overflowed")
    n = math.prod(size)
    if n > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    if n * itemsize > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)}")


def resize_as_(self: Tensor, other: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to ``other``'s shape."""
    return resize_(self, tuple(other.shape), memory_format=memory_format)


def _dense(shape: tuple, strides: tuple) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``: the elements tile one block of memory."""
    expected = 1
    for st, n in sorted((st, n) for n, st in zip(shape, strides) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def laid_out_like(arr: Any, like: Tensor) -> Tensor:
    """A tensor holding ``arr`` with ``like``'s strides when ``like`` is a permuted dense
    block of memory (PyTorch's layout contract for a leaf's ``.grad``), else contiguous."""
    t = Tensor._wrap_result(arr)
    if like._view is None:
        return t
    shape, strides, _ = like._view.layout
    if _layout.is_contiguous(shape, strides) or not _dense(shape, strides):
        return t
    pos = np.asarray(_views.strided_gather(np.arange(t.numel()), shape, strides, 0))
    inv = np.empty(pos.size, np.int64)
    inv[pos.reshape(-1)] = np.arange(pos.size)
    with _gm.no_grad():
        flat = t.reshape(-1)[Tensor._wrap_result(inv)]
        return as_strided_(flat, shape, strides, 0)


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors show the same memory: one storage, offset, sizes and strides."""
    return _views.storage_key(self) == _views.storage_key(tensor) and _views.layout_of(
        self
    ) == _views.layout_of(tensor)


#: the Tensor methods this module defines
METHODS = {
    "transpose_": transpose_,
    "swapdims_": transpose_,
    "swapaxes_": swapaxes_,
    "t_": t_,
    "squeeze_": squeeze_,
    "unsqueeze_": unsqueeze_,
    "as_strided": as_strided,
    "as_strided_": as_strided_,
    "set_": set_,
    "resize_": resize_,
    "resize_as_": resize_as_,
    "is_set_to": is_set_to,
}
