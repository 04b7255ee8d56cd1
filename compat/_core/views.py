"""Views with PyTorch's aliasing semantics, on immutable arrays.

A view is its *root* (the tensor whose storage it aliases) plus a chain of view steps
(index, reshape, permute, expand, diagonal, unfold, ...; their layouts are
:mod:`compat._core.view_layout`'s). The view's storage cell (:class:`ViewStorage`) caches the view's value together with the root array it was
computed from: reading recomputes the chain only when the root array changed since
(an identity check, no copy in the common case); writing scatters the new value back
into the root through the chain's inverse, so every other view of that root sees it on
its next read. Views share the root's version counter.

For autograd an in-place op on a view is recorded as PyTorch's functionalization does:
the op on the view's value, then ``CopySlices`` (the write of that value into the root),
after which the root's node is ``CopySlices`` and every view's node is regenerated from
it (``AsStridedBackward0``) the next time the view is used (:meth:`ViewInfo.sync`).

The layout (shape, strides, storage offset) is tracked as PyTorch's, so ``stride()``,
``is_contiguous()``, ``storage_offset()``, ``data_ptr()`` and ``view``'s
"not compatible with input tensor's size and stride" error match it.
"""

from __future__ import annotations

import copy
import re
import warnings
from typing import Any

import numpy as np

from compat._core import bitcast as _bitcast
from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core import tensor as _tensor
from compat._core.device import dev_scalar as _dev_scalar
from compat._core.tensor import Tensor, apply
from compat._core.view_layout import contiguous_strides, step_layout
from funcgrad import lax as flax
from funcgrad import numpy as fnp
from funcgrad._compat_contract import LazyArray, lookup_op, x64

#: creation metadata of a view (PyTorch's ``CreationMeta``)
DEFAULT, MULTI, MULTI_NO_GRAD, NO_GRAD, INFERENCE, CUSTOM, CUSTOM_NO_GRAD = range(7)

_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
_LEAF_VIEW = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_MULTI_TAIL = (
    "This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one."
)
_CUSTOM_TAIL = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)
_NO_GRAD_HEAD = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
)
_NO_GRAD_TAIL = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked)."
)
_INFERENCE = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given "
    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the inference_mode block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked)."
)


# --------------------------------------------------------------------------- layout


def layout_of(t: Tensor) -> tuple:
    """``t``'s (shape, strides, storage offset) in elements."""
    info = t._view
    if info is not None:
        return info.layout
    shape = t._st.a.shape
    return shape, contiguous_strides(shape), 0


def _root_cell(t: Tensor) -> Any:
    """The plain storage cell at the bottom of ``t``'s (possibly nested) view storage."""
    st = t._st
    while isinstance(st, ViewStorage):
        st = st.root_st
    return st


def storage_key(t: Tensor) -> int:
    """An address-like number shared by the tensors whose storage is the same."""
    return id(_root_cell(t))


class UntypedStorage:
    """What ``Tensor.untyped_storage()`` shows of the memory a tensor aliases: equal
    ``data_ptr()`` for tensors sharing it, its size in bytes, its bytes (read: a storage is
    the root tensor's memory, written through tensors only)."""

    def __init__(self, *args: Any, device: Any = None) -> None:
        """``UntypedStorage(size | sequence of bytes)``: new memory of bytes (PyTorch's
        constructor); compat's own ``UntypedStorage(tensor)``: the memory ``tensor`` aliases."""
        t = args[0] if len(args) == 1 and isinstance(args[0], Tensor) else None
        if t is None:
            t = new_memory(args, np.dtype(np.uint8), type(self).__name__)
        self._st = _root_cell(t)
        self._root = t if t._view is None else t._view.root

    def data_ptr(self) -> int:
        return id(self._st)

    @property
    def _cdata(self) -> int:
        """The number identifying the storage (PyTorch's: its StorageImpl's address)."""
        return self.data_ptr()

    def nbytes(self) -> int:
        a = self._st.array
        return int(a.size) * a.dtype.itemsize

    size = __len__ = nbytes

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> Any:
        return self._root.device

    @property
    def is_cuda(self) -> bool:
        return self._root.is_cuda

    def is_shared(self) -> bool:
        """False: compat's memory is never moved into shared memory (``share_memory_`` is
        refused), as PyTorch answers for a storage not yet shared."""
        return False

    def _elements(self) -> np.ndarray:
        """The memory's elements (bytes here), flat."""
        return np.ascontiguousarray(np.asarray(self._st.array)).reshape(-1).view(np.uint8)

    def tolist(self) -> list:
        return self._elements().tolist()

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            raise TypeError("compat: slices of a storage (storage views) are not supported")
        n = len(self)
        i = _index_int(idx)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return self._elements()[i].item()

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + self.nbytes()

    def __deepcopy__(self, memo: dict) -> UntypedStorage:
        """The storage of the deep copy of the memory's tensor (memoized: tensors and
        storages sharing memory share the copy's)."""
        out = copy.copy(self)
        root = copy.deepcopy(self._root, memo)
        out._st, out._root = _root_cell(root), root
        return out

    def __repr__(self) -> str:
        return f"compat UntypedStorage of {self.nbytes()} bytes at {hex(self.data_ptr())}"


def new_memory(args: tuple, npd: np.dtype, name: str) -> Tensor:
    """The root tensor of a new storage made by PyTorch's constructor forms: ``()`` empty,
    ``(n,)`` ``n`` zeros (PyTorch leaves them uninitialised), ``(sequence,)`` its elements."""
    if not args:
        data = np.zeros(0, npd)
    elif (
        len(args) == 1 and isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool)
    ):
        if args[0] < 0:
            raise RuntimeError(f"{name}(): size must be non-negative, got {int(args[0])}")
        data = np.zeros(int(args[0]), npd)
    elif len(args) == 1 and isinstance(args[0], (list, tuple)):
        data = np.asarray(args[0]).astype(npd).reshape(-1)
    else:
        kinds = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"{name}(): expected a size, a sequence or nothing, got ({kinds})")
    return Tensor._make(data, False)


def _index_int(idx: Any) -> int:
    if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
        raise TypeError(f"can't index a storage with {type(idx).__name__}")
    return int(idx)


def bits(t: Tensor) -> tuple[bool, bool]:
    """PyTorch's conjugate and negative bits of ``t`` (``is_conj()``, ``is_neg()``): set by
    the view steps ``conj()`` and ``_neg_view()`` and kept by further views; ``.imag`` of a
    conjugated view is a negated view, ``.real`` drops the conjugation. compat's values
    never depend on them: a view's value is computed through its chain."""
    conj = neg = False
    info = t._view
    if info is None:
        return conj, neg
    for step in info.chain:
        k = step[0]
        if k == "cj":
            conj = not conj
        elif k == "ng":
            neg = not neg
        elif k == "im":
            neg, conj = neg != conj, False
        elif k in ("re", "vr"):
            conj = False
    return conj, neg


class TypedStorage(UntypedStorage):
    """What ``Tensor.storage()`` shows: the same memory counted in elements of the
    tensor's dtype (PyTorch warns that ``TypedStorage`` is deprecated)."""

    def __init__(self, *args: Any, dtype: Any = None, device: Any = None) -> None:
        """``TypedStorage(size | sequence, dtype=)``: new memory counted in elements of
        ``dtype`` (the default dtype when left out); compat's own ``TypedStorage(tensor)``:
        the memory ``tensor`` aliases, in its dtype."""
        t = args[0] if len(args) == 1 and isinstance(args[0], Tensor) else None
        if t is None:
            npd = _dt.np_dtype(dtype) if dtype is not None else _dt.get_default_dtype().np
            t = new_memory(args, npd, "TypedStorage")
        super().__init__(t)
        self.dtype = t.dtype
        self._item = t._npdtype.itemsize

    def element_size(self) -> int:
        return self._item

    def size(self) -> int:  # type: ignore[override]
        return self.nbytes() // self._item

    __len__ = size  # type: ignore[assignment]

    def _elements(self) -> np.ndarray:
        return super()._elements().view(_dt.np_dtype(self.dtype))

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return super().__getitem__(idx)

    def type(self) -> str:
        """PyTorch's legacy name of the storage's type (``torch.FloatStorage``)."""
        return f"torch.{_dt.scalar_type_name(_dt.np_dtype(self.dtype))}Storage"

    def __repr__(self) -> str:
        return f"compat TypedStorage of {self.size()} {self.dtype} at {hex(self.data_ptr())}"


def storage(t: Tensor) -> TypedStorage:
    """``Tensor.storage()``, with PyTorch's deprecation warning."""
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
        "be the only storage class. This should only matter to you if you are using storages "
        "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
        "of tensor.storage()",
        UserWarning,
        stacklevel=2,
    )
    return TypedStorage(t)


#: PyTorch's view replay switch (``torch.autograd._force_original_view_tracking``): the
#: node a view gets after an in-place change of its base is then named after the view op
#: (``ViewBackward0``) instead of ``AsStridedBackward0``
REPLAY = [False]


def view_func(t: Tensor, new_base: Tensor, symint_visitor_fn: Any = None) -> Tensor:
    """``Tensor._view_func``: ``t``'s view chain replayed on ``new_base`` (a new view of
    it); ``symint_visitor_fn`` maps the integer indices the chain saved."""
    info = t._view
    if info is None:
        raise RuntimeError("_view_func() called on a tensor that is not a view")
    chain, dyn = info.chain, info.dyn
    if symint_visitor_fn is not None:
        chain = tuple(_visit_ints(step, symint_visitor_fn) for step in chain)
        dyn = tuple(int(symint_visitor_fn(d)) for d in dyn)
    out = new_base
    for i, step in enumerate(chain):
        # each step's indices point into ``dyn``, which the first view carries
        r = apply(chain_f, "AsStridedBackward0", (out, *dyn), (("chain", (step,)),))
        out = make_view(r, out, step, dyn if i == 0 else ())
    return out


def _visit_ints(step: tuple, fn: Any) -> tuple:
    if step[0] != "ix":
        return step
    spec = tuple((s[0], int(fn(s[1]))) if s[0] == "i" else s for s in step[1])
    return ("ix", spec)


# --------------------------------------------------------------------------- view functions


def _index(spec: tuple, dyn: tuple) -> tuple:
    out: list = []
    for s in spec:
        k = s[0]
        if k == "s":
            out.append(slice(s[1], s[2], s[3]))
        elif k == "n":
            out.append(None)
        elif k == "e":
            out.append(Ellipsis)
        elif k == "i":
            out.append(s[1])
        else:
            out.append(dyn[s[1]])
    return tuple(out)


def strided_gather(x: Any, size: tuple, stride: tuple, offset: int) -> Any:
    """The elements of ``x``'s contiguous storage at ``offset + sum(i_k * stride_k)``."""
    pos = np.full(size, offset, np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(size) - d - 1))
    return fnp.reshape(x, (-1,))[pos]


def unfold_windows(x: Any, axis: int, size: int, step: int) -> Any:
    """``x.unfold(axis, size, step)``'s value: windows of ``size`` every ``step`` along
    ``axis``, each window's elements along a new last dim."""
    n = (x.shape[axis] - size) // step + 1
    idx = np.arange(n)[:, None] * step + np.arange(size)[None, :]
    w = fnp.take(x, fnp.asarray(idx.reshape(-1)), axis=axis)
    w = fnp.reshape(w, (*x.shape[:axis], n, size, *x.shape[axis + 1 :]))
    return fnp.moveaxis(w, axis + 1, -1)


def _forward(x: Any, step: tuple, dyn: tuple) -> Any:
    k = step[0]
    if k == "bc":
        return _bitcast.bitcast_f(x, dtype=step[1])
    if k == "ix":
        return x[_index(step[1], dyn)]
    if k == "as":
        return strided_gather(x, *step[1:])
    if k in ("rs", "us", "sq"):
        return fnp.reshape(x, step[1])
    if k == "pm":
        return fnp.transpose(x, step[1])
    if k == "ex":
        return fnp.broadcast_to(x, step[1])
    if k == "uf":
        return unfold_windows(x, *step[1:])
    if k == "vr":
        return fnp.stack([fnp.real(x), fnp.imag(x)], axis=-1)
    if k == "vc":
        return _from_parts(x[..., 0], x[..., 1], step[1])
    if k == "re":
        return fnp.real(x)
    if k == "im":
        return fnp.imag(x)
    if k == "cj":
        return fnp.conj(x)
    if k == "ng":
        return fnp.negative(x)
    return fnp.diagonal(x, offset=step[1], axis1=step[2], axis2=step[3])


def _from_parts(re: Any, im: Any, dtype: Any) -> Any:
    """The complex array of ``dtype`` with these parts as they are (``re + 1j * im`` makes
    ``1 + inf j`` NaN + inf j, a NaN imaginary part a NaN real one, and loses -0.0)."""
    part = np.finfo(dtype).dtype
    return flax.complex(*fnp.broadcast_arrays(fnp.asarray(re, part), fnp.asarray(im, part)))


def _inverse(base: Any, v: Any, step: tuple, dyn: tuple) -> Any:
    k = step[0]
    if k == "ix":
        # (a basic index: integers and slices reach each place once)
        return base.at[_index(step[1], dyn)].set(v, unique_indices=True)
    if k in ("rs", "us", "sq"):
        return fnp.reshape(v, base.shape)
    if k == "vr":
        return _from_parts(v[..., 0], v[..., 1], base.dtype)
    if k == "vc":
        return fnp.asarray(fnp.stack([fnp.real(v), fnp.imag(v)], axis=-1), base.dtype)
    if k == "re":
        return _from_parts(v, fnp.imag(base), base.dtype)
    if k == "im":
        return _from_parts(fnp.real(base), v, base.dtype)
    if k == "cj":
        return fnp.conj(v)
    if k == "ng":
        return fnp.negative(v)
    if k == "bc":
        return _bitcast.bitcast_f(v, dtype=base.dtype)
    return fnp.transpose(v, tuple(int(i) for i in np.argsort(step[1])))


def _lowest(dtype: Any) -> Any:
    """The least value of a real (or bool) dtype: the identity of a scatter-max."""
    if np.dtype(dtype) == np.bool_:
        return False
    return -np.inf if _is_float(dtype) else np.iinfo(np.dtype(dtype)).min


def _is_float(dtype: Any) -> bool:
    return np.dtype(dtype).kind not in "iub"


def chain_f(x: Any, *dyn: Any, chain: tuple) -> Any:
    """The view of ``x`` that ``chain`` describes."""
    for step in chain:
        x = _forward(x, step, dyn)
    return x


def _shares_memory(chain: tuple) -> bool:
    """Whether elements of the view ``chain`` describes may share memory: an expand, an
    ``as_strided``, windows of an ``unfold`` that overlap."""
    return any(s[0] in ("ex", "as") or (s[0] == "uf" and s[3] < s[2]) for s in chain)


def write_f(root: Any, v: Any, *dyn: Any, chain: tuple) -> Any:
    """``root`` with the view that ``chain`` describes replaced by ``v``."""
    bcs = [i for i, step in enumerate(chain) if step[0] == "bc"]
    if bcs and any(step[0] in ("ex", "dg", "as", "uf") for step in chain):
        # positions do not survive a dtype view: write the part after the last one into
        # the dtype view's value, then that value through the part before it
        k = bcs[-1]
        pre = chain_f(root, *dyn, chain=chain[:k])
        mid = write_f(_bitcast.bitcast_f(pre, dtype=chain[k][1]), v, *dyn, chain=chain[k + 1 :])
        return write_f(root, _bitcast.bitcast_f(mid, dtype=pre.dtype), *dyn, chain=chain[:k])
    if any(step[0] in ("ex", "dg", "as", "uf") for step in chain):
        # no cheap inverse: scatter by the memory position of each view element
        pos = chain_f(fnp.reshape(fnp.arange(root.size), root.shape), *dyn, chain=chain)
        pos, v = fnp.reshape(pos, (-1,)), fnp.reshape(v, (-1,))
        flat = fnp.reshape(root, (-1,))
        if _shares_memory(chain) and fnp.iscomplexobj(v) is False:
            # elements that share memory (an expand): a position takes a value written to
            # any of its elements (the fills PyTorch allows there write one value), not
            # whichever element the scatter happens to keep
            changed = v != fnp.reshape(chain_f(root, *dyn, chain=chain), (-1,))
            hit = fnp.zeros(flat.shape, bool).at[pos].max(changed)
            low = fnp.full(flat.shape, _lowest(flat.dtype), flat.dtype)
            written = low.at[pos].max(fnp.where(changed, v, _lowest(flat.dtype)))
            return fnp.reshape(fnp.where(hit, written, flat.at[pos].set(v)), root.shape)
        return fnp.reshape(flat.at[pos].set(v), root.shape)
    bases = [root]
    for step in chain[:-1]:
        bases.append(_forward(bases[-1], step, dyn))
    for step, b in zip(reversed(chain), reversed(bases)):
        v = _inverse(b, v, step, dyn)
    return v


@x64
def _run(fn: Any, name: str, arrays: tuple, chain: tuple) -> Any:
    """Run ``fn`` on arrays (ints among them as device scalars), no graph."""
    sig = tuple(int if type(a) is int else (a.shape, a.dtype) for a in arrays)
    op = lookup_op(fn, name, (("chain", chain),), sig, None)
    return op.run(*(_dev_scalar(a) if type(a) is int else a for a in arrays))[0]


class ViewStorage:
    """The storage cell of a view: reads recompute from the root when it changed, writes
    go through to the root. ``a`` is the view's array as recorded (pending under lazy
    execution), ``array`` its value."""

    __slots__ = ("arr", "chain", "dyn", "root_st", "src")

    def __init__(self, root_st: Any, arr: Any, chain: tuple, dyn: tuple) -> None:
        self.root_st = root_st
        self.src = root_st.a
        self.arr = arr
        self.chain = chain
        self.dyn = dyn

    @property
    def a(self) -> Any:
        cur = self.root_st.a
        src = self.src
        if cur is not src and not (type(src) is LazyArray and src._value is cur):
            self.arr = _run(chain_f, "view", (cur, *self.dyn), self.chain)
            self.src = cur
        return self.arr

    @property
    def array(self) -> Any:
        a = self.a
        return a.value() if type(a) is LazyArray else a

    @array.setter
    def array(self, value: Any) -> None:
        new = _run(write_f, "CopySlices", (self.root_st.a, value, *self.dyn), self.chain)
        self.root_st.array = new
        self.src = self.root_st.a
        self.arr = value
        if _shares_memory(self.chain):
            self.src = None  # elements share memory: the next read takes them from the root

    def set_local(self, value: Any) -> None:
        """Take ``value`` as the view's value when the root was already updated to match."""
        self.arr = value
        self.src = self.root_st.a


class ViewInfo:
    """What makes a tensor a view: its root, the chain of view steps (with their runtime
    integer operands ``dyn``), its layout and PyTorch's creation metadata.

    The layout is computed on first use (``stride()``, ``is_contiguous()``, a reshape or
    an in-place op on the view), from the parent's layout and the last step."""

    __slots__ = (
        "_layout",
        "_parent",
        "_root",
        "alias",
        "chain",
        "dyn",
        "inherited",
        "meta",
        "multi",
        "seen",
    )

    def __init__(
        self, root: Tensor, chain: tuple, dyn: tuple, parent: Any, meta: int, multi: Any
    ) -> None:
        self._root = root
        self.chain = chain
        self.dyn = dyn
        self._parent = parent  # the parent's ViewInfo, or the root's shape
        self._layout = None
        self.meta = meta
        self.multi = multi
        self.seen = 0
        #: the creation mode came from the parent view (PyTorch: "a view of a view")
        self.inherited = False
        #: a dtype view: memory shared, but no view for autograd (no ``_base``)
        self.alias = False

    @property
    def root(self) -> Tensor:
        """The tensor whose storage the chain starts from. When an in-place view op or
        ``set_``/``resize_`` made that tensor show other memory, its old storage went to
        a holder (:mod:`compat._core.restride`), which is then the root."""
        r = self._root
        if r.__dict__:
            h = r.__dict__.get("_holder")
            if h is not None:
                r = self._root = h
        return r

    @property
    def layout(self) -> tuple:
        lay = self._layout
        if lay is None:
            p = self._parent
            base = p.layout if isinstance(p, ViewInfo) else (p, contiguous_strides(p), 0)
            lay = self._layout = step_layout(base, self.chain[-1], self.dyn)
            self._parent = None
        return lay

    def rebase_error(self, t: Tensor) -> str:
        """PyTorch's error for using a view (made under no_grad or inference mode, or an
        output of a multi-output or custom op) after its memory changed in place."""
        changed = "its base or another view of its base has been modified inplace"
        if self.meta in (NO_GRAD, MULTI_NO_GRAD):
            return (
                f"A view was created in no_grad mode and {changed} with grad mode enabled. "
                + _NO_GRAD_TAIL
            )
        if self.meta == INFERENCE:
            return (
                f"A view was created in inference mode and {changed} in normal mode. "
                + _INFERENCE.split(". ", 1)[1]
            )
        name, k = _output_of(self, t)
        tail = _MULTI_TAIL if self.meta == MULTI else _CUSTOM_TAIL
        return f"Output {k} of {name} is a view and {changed}. " + tail

    def sync(self, t: Tensor) -> None:
        """After the root changed in place: regenerate ``t``'s node from the root's."""
        if not _gm._state.record:
            return  # nothing records now; regenerate when grad mode is back on
        if self.meta != DEFAULT and t._requires_grad:
            raise RuntimeError(self.rebase_error(t))
        self.seen = t._vc.v
        root = self.root
        if not root._requires_grad or root._grad_fn is None:
            return  # a leaf root: the view's own node still points at its AccumulateGrad
        name = "AsStridedBackward0"
        if REPLAY[0] and t._grad_fn is not None:  # view replay: the view op's own node
            name = t._grad_fn.name()
        r = apply(chain_f, name, (root, *self.dyn), (("chain", self.chain),))
        t._st.set_local(r._st.a)
        t._rebind(r._grad_fn)  # (retain_grad moves to the new node; hooks are dropped)


def _output_of(info: ViewInfo, t: Tensor) -> tuple:
    """(op name, output number) PyTorch's errors name for the view ``t``: its own node's
    (``Slice`` for a slice of an ``unbind`` output), else the multi-output op's."""
    fn = t._grad_fn
    if fn is None:
        return info.multi
    name = fn.name().rsplit("::", 1)[-1]
    return re.sub(r"Backward\d*$", "", name), t._output_nr


def _renumber(step: tuple, shift: int) -> tuple:
    if step[0] != "ix" or not shift:
        return step
    spec = tuple((s[0], s[1] + shift) if s[0] == "d" else s for s in step[1])
    return ("ix", spec)


def make_view(out: Tensor, base: Tensor, step: tuple, dyn: tuple = (), multi: Any = None) -> Tensor:
    """Make ``out`` (the op's result, already recorded) a view of ``base`` by ``step``."""
    bi = base._view
    if bi is None:
        root, root_st, chain, alldyn = base, base._st, (step,), dyn
        parent = base._st.a.shape
        meta, multi0 = DEFAULT, None
    else:
        root, root_st = bi.root, base._st.root_st
        if dyn:
            step = _renumber(step, len(bi.dyn))
            alldyn = bi.dyn + dyn
        else:
            alldyn = bi.dyn
        chain, parent = bi.chain + (step,), bi
        meta, multi0 = bi.meta, bi.multi
    req = base._requires_grad
    state = _gm._state
    # PyTorch records the mode a view was made in even when its base does not require
    # grad: an in-place op with a requires-grad operand on it is an error then too
    inherited = meta in (NO_GRAD, INFERENCE) and state.record
    if meta == DEFAULT and (multi is not None or req or not state.record):
        if multi is not None:
            multi0 = multi
        if multi is not None and state.record:  # (made without grad: PyTorch's no_grad view)
            meta = MULTI if req else MULTI_NO_GRAD
        elif state.inference:
            if not base._inference:
                meta = INFERENCE
        elif not state.record:
            meta = NO_GRAD
    if req and meta in (NO_GRAD, INFERENCE, MULTI_NO_GRAD):
        out._requires_grad = True
    out._inference = base._inference
    info = ViewInfo(root, chain, alldyn, parent, meta, multi0)
    info.inherited = inherited
    info.seen = base._vc.v
    out._view = info
    out._st = ViewStorage(root_st, out._st.a, chain, alldyn)
    out._vc = base._vc
    if _tensor.FORWARD is not None:  # a forward-AD dual level: the tangent is a view too
        _tensor.FORWARD.view(out, base, step, dyn)
    return out


def make_dtype_view(out: Tensor, base: Tensor, dtype: np.dtype) -> Tensor:
    """Make ``out`` (``base``'s bytes read as ``dtype``, computed with no graph) share
    ``base``'s memory, as ``view(dtype)`` does: writes through either reach the other and
    the version counter is shared, but, as PyTorch's, it is no view for autograd (no
    ``_base``, no gradient; its chain starts from a detached alias of the root)."""
    step = ("bc", dtype, base._npdtype.itemsize, dtype.itemsize)
    bi = base._view
    if bi is None:
        root, root_st, chain, dyn, parent = base, base._st, (step,), (), base._st.a.shape
    else:
        root, root_st, chain, dyn, parent = (
            bi.root,
            base._st.root_st,
            bi.chain + (step,),
            bi.dyn,
            bi,
        )
    info = ViewInfo(root.detach(), chain, dyn, parent, DEFAULT, None)
    info.alias = True
    info.seen = base._vc.v
    out._view = info
    out._st = ViewStorage(root_st, out._st.a, chain, dyn)
    out._vc = base._vc
    out._inference = base._inference
    return out


# --------------------------------------------------------------------------- in-place


def check_inplace(t: Tensor, req: bool, fill: bool = False) -> None:
    """PyTorch's errors for an in-place op on the view ``t`` (``req``: the op would be
    recorded for autograd; ``fill``: it writes one value everywhere, allowed on overlap)."""
    info = t._view
    if (req or info.root._requires_grad) and _gm._state.record:
        _check_view_meta(t, info)  # (autograd's checks come before the kernel's)
    shape, strides, _ = info.layout
    if not fill and any(s == 0 and n > 1 for n, s in zip(shape, strides)):
        raise RuntimeError(_OVERLAP)


def _check_view_meta(t: Tensor, info: ViewInfo) -> None:
    """PyTorch's autograd errors for an in-place op, recorded, on the view ``t``: by how
    the view was made (``info.meta``), or a view of a leaf requiring grad."""
    meta = info.meta
    if meta in (CUSTOM, MULTI):
        name, k = _output_of(info, t)
        tail = _CUSTOM_TAIL if meta == CUSTOM else _MULTI_TAIL
        raise RuntimeError(f"Output {k} of {name} is a view and is being modified inplace. " + tail)
    if meta == MULTI_NO_GRAD:
        raise RuntimeError(f"{_NO_GRAD_HEAD} {_MULTI_TAIL}")
    if meta == CUSTOM_NO_GRAD:  # a custom Function's view output, no input requiring grad
        raise RuntimeError(f"{_NO_GRAD_HEAD} {_CUSTOM_TAIL}")
    if info.inherited and meta in (NO_GRAD, INFERENCE):
        name, k = _output_of(info, t) if t._grad_fn is not None else ("View", 0)
        mode = "no_grad mode" if meta == NO_GRAD else "inference mode"
        where = "with grad mode enabled" if meta == NO_GRAD else "in normal mode"
        tail = _NO_GRAD_TAIL if meta == NO_GRAD else _INFERENCE.split(". ", 1)[1]
        raise RuntimeError(
            f"Output {k} of {name} is a view of a view which was created in {mode} and is "
            f"being modified inplace {where}. " + tail
        )
    if meta == NO_GRAD:
        raise RuntimeError(f"{_NO_GRAD_HEAD} {_NO_GRAD_TAIL}")
    if meta == INFERENCE:
        raise RuntimeError(_INFERENCE)
    if info.root._requires_grad and info.root._grad_fn is None:
        raise RuntimeError(_LEAF_VIEW)


def commit(t: Tensor, r: Tensor) -> None:
    """Finish a recorded in-place op on the view ``t`` whose new value (with its graph) is
    ``r``: write it into the root as ``CopySlices`` and rebind the root's node."""
    info = t._view
    root = info.root
    old = t._grad_fn
    if old is not None and old._tensor_hooks:  # PyTorch's CopySlices bypasses that node
        old._tensor_hooks.pop(t._output_nr, None)
    new = apply(
        write_f, "torch::autograd::CopySlices", (root, r, *info.dyn), (("chain", info.chain),)
    )
    st = t._st
    st.root_st.array = new._st.a
    st.set_local(r._st.a)
    root._rebind(new._grad_fn)
    t._vc.v += 1


_CUSTOM_MULTI = (
    "If your Function modifies inplace an input that is a view of another Tensor, your "
    "Function cannot return more than one Tensor. This is not supported by the current "
    "autograd engine. You should either make sure the input is not a view (using .clone() "
    "for example) or make your Function only return one Tensor (potentially splitting it "
    "into two Functions: one doing the inplace that returns a single Tensor and a second one "
    "that does the other operations). You can ask on the forum https://discuss.pytorch.org/ "
    "if you need help to do this change."
)


def rebase_custom(t: Tensor, n_outputs: int = 1) -> None:
    """A custom Function modified the view ``t`` in place (``mark_dirty``) and ``t`` now
    has the Function's node: write it into the root as ``CopySlices`` (as :func:`commit`
    does for an op), so the root's gradient goes through the Function; ``t``'s own node is
    regenerated from the root's on its next use, as PyTorch's is."""
    if n_outputs > 1:
        raise RuntimeError(_CUSTOM_MULTI)
    info = t._view
    root = info.root
    info.seen = t._vc.v
    new = apply(
        write_f, "torch::autograd::CopySlices", (root, t, *info.dyn), (("chain", info.chain),)
    )
    t._st.root_st.array = new._st.a
    root._rebind(new._grad_fn)
    info.seen = -1
