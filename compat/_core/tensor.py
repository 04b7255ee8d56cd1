"""The compat ``Tensor``: a mutable wrapper around an immutable ``jax.Array``.

State per tensor: its storage (a cell holding the current array, shared with
``detach()`` and ``.data``), a version counter (bumped by every in-place op,
shared with ``detach()``), ``requires_grad``, ``grad``, ``grad_fn`` and
``output_nr``, and hooks. Ops are applied by :func:`apply`, which runs the op's
compiled program and, when grad mode is on and an input requires grad, records
a :class:`~compat._core.graph.Node` holding the op's VJP and its residuals.
"""

from __future__ import annotations

import copy
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from compat._core import device as _device
from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core import graph as _graph
from compat._core import printing as _printing
from compat._core import tensor_checks as _tc
from compat._core.anomaly import STATE as _ANOMALY
from compat._core.anomaly import record_stack as _record_stack
from compat._core.device import scalar_array as _scalar_array
from compat._core.graph import AccumulateGrad, Node, RemovableHandle
from compat._core.size import Size
from compat._core.tensor_convert import ValueConversions
from compat._core.tensor_convert import rebuild as _rebuild  # noqa: F401  (old pickles)
from funcgrad._compat_contract import (
    ConcretizationError,
    LazyArray,
    MetaArray,
    OpProgram,
    Tracer,
    is_tracing,
    lazy_on,
    x64,
)
from funcgrad._compat_contract import host_scalars as _host_scalars
from funcgrad._compat_contract import op_cache as _op_cache
from funcgrad._compat_contract import tracing as _tracing


class _Storage:
    """A tensor's storage cell. ``a`` is the array as recorded: under lazy execution a
    :class:`~funcgrad._lazy.LazyArray` until computed; ``array`` is its value (reading it
    evaluates what is pending)."""

    __slots__ = ("a",)

    def __init__(self, array: Any) -> None:
        self.a = array

    @property
    def array(self) -> Any:
        a = self.a
        if type(a) is LazyArray:
            a = self.a = a.value()
        return a

    @array.setter
    def array(self, value: Any) -> None:
        self.a = value


class _Version:
    __slots__ = ("v",)

    def __init__(self) -> None:
        self.v = 0


_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more informations."
)
_VOLATILE_READ = "volatile was removed (Variable.volatile is always False)"
_VOLATILE_SET = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."
_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


def _check_float_for_grad(npd: np.dtype, msg: str) -> None:
    if _dt.kind(npd) not in "fc":
        raise RuntimeError(msg)


_object_new = object.__new__


def _new_tensor(cls: type, data: Any) -> Tensor:
    """A tensor of class ``cls`` holding the jax array ``data``, with no autograd state."""
    t = _object_new(cls)
    t._st = st = _object_new(_Storage)  # (``_Storage(data)``, ``_Version()`` without
    st.a = data  # their Python ``__init__`` frames: ~0.3 us each)
    t._vc = vc = _object_new(_Version)
    vc.v = 0
    t._grad = None
    t._gfn = None
    t._output_nr = 0
    t._acc = None
    t._hooks = None
    t._post_acc_hooks = None
    t._retains_grad = False
    t._requires_grad = False
    t._inference = _gm._state.inference
    t._view = None
    return t


class Tensor(ValueConversions):
    """A PyTorch-style tensor (see the module docstring)."""

    __slots__ = (
        "__dict__",
        "__weakref__",
        "_acc",
        "_gfn",
        "_grad",
        "_hooks",
        "_inference",
        "_output_nr",
        "_post_acc_hooks",
        "_requires_grad",
        "_retains_grad",
        "_st",
        "_vc",
        "_view",
    )
    __array_priority__ = 1000

    # ------------------------------------------------------------------ construction
    # ``Tensor(data)`` and ``Tensor(*sizes)`` (``__new__``) and ``backward`` are installed by
    # ``compat._core.methods``: they need tensor creation and the autograd engine, which
    # are built on this class.

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    @classmethod
    def _make(cls, data: Any, requires_grad: bool = False) -> Tensor:
        """A leaf tensor of class ``cls`` holding ``data`` (a jax or NumPy array)."""
        if not isinstance(data, (jax.Array, LazyArray, MetaArray)):
            data = _to_jax(data)
        t = _new_tensor(cls, data)
        if requires_grad:
            _check_float_for_grad(
                data.dtype, "Only Tensors of floating point and complex dtype can require gradients"
            )
            t._requires_grad = True
        return t

    @staticmethod
    def _make_subclass(cls: type, data: Tensor, require_grad: bool = False) -> Tensor:
        """PyTorch's ``Tensor._make_subclass``: a leaf of class ``cls`` sharing ``data``'s storage
        (used by ``nn.Parameter``)."""
        t = cls._make(data._st.array, False)
        t._st = data._st
        if require_grad:
            t.requires_grad_(True)
        return t

    @classmethod
    def _wrap_result(cls, data: Any) -> Tensor:
        """A plain Tensor (no autograd state yet) holding an op's output array."""
        return _new_tensor(Tensor, data)

    # ------------------------------------------------------------------ data and metadata
    @property
    def _data(self) -> Any:
        """The array; under lazy execution possibly still pending (a ``LazyArray``)."""
        a = self._st.a
        if type(a) is LazyArray and (a._value is not None or not lazy_on()):
            return self._st.array
        return a

    @property
    def _npdtype(self) -> np.dtype:
        return self._st.a.dtype

    @property
    def shape(self) -> Size:
        return Size(self._st.a.shape)

    def size(self, dim: int | None = None) -> Any:
        s = self._st.a.shape
        if dim is None:
            return Size(s)
        return s[_wrap_dim(dim, len(s))]

    @property
    def dtype(self) -> _dt.dtype:
        return _dt.from_np(self._st.a.dtype)

    @property
    def ndim(self) -> int:
        return self._st.a.ndim

    def dim(self) -> int:
        return self._st.a.ndim

    ndimension = dim

    def numel(self) -> int:
        return int(self._st.a.size)

    nelement = numel

    @property
    def device(self) -> _device.device:
        """Where this tensor's array lives (``cpu``, or ``cuda:i`` for jax's GPU ``i``)."""
        return _device.of_array(self._st.a)

    @property
    def is_cuda(self) -> bool:
        return _device.of_array(self._st.a).type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return _device.of_array(self._st.a).type == "cpu"

    is_xpu = is_mps = False
    is_meta = property(lambda self: type(self._st.a) is MetaArray, doc="On the meta device?")

    def get_device(self) -> int:
        """The CUDA index of this tensor, ``-1`` on the CPU."""
        d = _device.of_array(self._st.a)
        return -1 if d.index is None else d.index

    def is_floating_point(self) -> bool:
        return _dt.kind(self._st.a.dtype) == "f"

    def is_complex(self) -> bool:
        return _dt.kind(self._st.a.dtype) == "c"

    def element_size(self) -> int:
        return self._st.a.dtype.itemsize

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        try:
            fn = self.grad_fn
            name = None if fn is None else fn.name().removeprefix("torch::autograd::")
        except RuntimeError:  # a view that may no longer be used (PyTorch prints this too)
            name = "Invalid"
        text = _printing.tensor_repr(self._st.array, self.device, name, self._requires_grad)
        tangent = self.__dict__.get("_fw")  # a forward-AD tangent (compat._core.forward)
        return text if tangent is None else f"{text[:-1]}, tangent={tangent!r})"

    def __str__(self) -> str:
        return self.__repr__()  # a subclass's __repr__ (Parameter's) is its str too

    def __format__(self, spec: str) -> str:
        """A 0-d plain Tensor formats its value (``f"{loss:.3f}"``); others as ``object``."""
        if self._st.a.ndim == 0 and type(self) is Tensor and not self.is_meta:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return str(self)

    def __copy__(self) -> Tensor:
        """``copy.copy``: what PyTorch's pickling protocol gives, a new leaf of this class
        sharing this tensor's storage, with its ``requires_grad`` and Python attributes
        (a shallow copy: writing to it writes to this tensor), without its grad."""
        t = self.detach()
        if type(self) is not Tensor:
            t.__class__ = type(self)
        t._requires_grad = self.requires_grad
        t.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_fw"})
        return t

    def __deepcopy__(self, memo: dict) -> Tensor:
        """A new leaf with a copy of this tensor's memory; a view becomes the same view of
        the copy of its base, so what shared memory before shares it in the copy (the
        memory is copied once per ``deepcopy`` call, as PyTorch's storage memo)."""
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        info = self._view
        if info is not None and not info.alias:
            shape, strides, offset = info.layout
            with _gm.no_grad():
                t = copy.deepcopy(info.root, memo).as_strided(shape, strides, offset)
            t._requires_grad = self._requires_grad
            if type(self) is not Tensor:
                t.__class__ = type(self)
        else:
            t = type(self)._make(self._st.array, self._requires_grad)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        t.__dict__.update({k: v for k, v in self.__dict__.items()})
        memo[id(self)] = t
        return t

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self) -> bool:
        v = self._view  # (a view with creation metadata already requires grad)
        if v is not None and v.seen != self._vc.v and not v.meta:
            v.sync(self)
        return self._requires_grad or (v is not None and v.root._requires_grad)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._requires_grad = _tc.requires_grad_value(self, value, False)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("requires_grad must be a bool")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self._requires_grad = _tc.requires_grad_value(self, requires_grad, True)
        return self

    @property
    def volatile(self) -> bool:
        """Removed from PyTorch long ago: always ``False``, with PyTorch's warning."""
        warnings.warn(_VOLATILE_READ, UserWarning, stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value: bool) -> None:
        warnings.warn(_VOLATILE_SET, UserWarning, stacklevel=2)

    @volatile.deleter
    def volatile(self) -> None:
        warnings.warn(_VOLATILE_SET, UserWarning, stacklevel=2)

    @property
    def _backward_hooks(self) -> OrderedDict | None:
        """The hooks ``register_hook`` added, by handle id (``None`` before the first)."""
        return self._hooks

    @_backward_hooks.setter
    def _backward_hooks(self, hooks: OrderedDict | None) -> None:
        # as PyTorch's: the dict is stored; only ``register_hook`` attaches hooks to the graph
        self._hooks = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    def is_inference(self) -> bool:
        """Whether this tensor was made in inference mode (see ``tensor_checks``)."""
        return self._inference

    @property
    def grad_fn(self) -> Node | None:
        if self._view is not None and self._view.seen != self._vc.v:
            self._view.sync(self)
        return self._gfn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _base(self) -> Tensor | None:
        """The tensor whose storage this view aliases (``None`` if none: see restride)."""
        v = self._view
        if v is None or v.alias or (self.__dict__ and "_holder" in self.__dict__):
            return None
        r = v.root
        owner = r.__dict__.get("_owner") if r.__dict__ else None
        return r if owner is None else owner()

    def _is_view(self) -> bool:
        return self._base is not None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        _tc.check_version(self)
        return self._vc.v

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def grad(self) -> Tensor | None:
        if self._gfn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        _tc.check_grad(self, value, isinstance(value, Tensor))
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's storage, outside the graph (no version tracking)."""
        t = Tensor._wrap_result(self._st.a)
        t._st = self._st
        t._inference |= self._inference
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        _tc.check_data(self, value, isinstance(value, Tensor))
        self._st = value._st
        self._view = None

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def _edge(self) -> tuple[Node, int]:
        if self._view is not None and self._view.seen != self._vc.v:
            self._view.sync(self)
        fn = self._gfn
        if fn is not None:
            return (fn, self._output_nr)
        acc = self._acc() if self._acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc = weakref.ref(acc)
        return (acc, 0)

    def _edge_key(self) -> Node | tuple[Node, int]:
        """:meth:`_edge` as a node holds it (:func:`~compat._core.graph.edge_key`)."""
        fn, nr = self._edge()
        return fn if nr == 0 else (fn, nr)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's storage and version counter, with no grad."""
        t = Tensor._wrap_result(self._st.a)
        t._st = self._st
        t._vc = self._vc
        t._inference |= self._inference
        return t

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place (it becomes a leaf)."""
        if self._view is not None:
            raise RuntimeError(_tc.DETACH_VIEW)
        if self._retains_grad and self._gfn is not None:
            self._unregister_retain()
        _tc.note_detached(self)
        self._gfn = None
        self._output_nr = 0
        self._requires_grad = False
        self._hooks = None
        self.__dict__.pop("_fw", None)  # a forward-AD tangent goes too
        return self

    def retain_grad(self) -> None:
        """Populate ``.grad`` of this non-leaf tensor during backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._gfn is None or self._retains_grad:
            return
        node = self._gfn
        if node._retain is None:
            node._retain = {}
        node._retain[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def _unregister_retain(self) -> None:
        node = self._gfn
        if node is not None and node._retain:
            node._retain.pop(self._output_nr, None)

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; a returned tensor
        replaces the gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._hooks is None:
            self._hooks = OrderedDict()
            if self._gfn is not None:
                self._gfn._register_tensor_hooks(self._output_nr, self._hooks)
        h = RemovableHandle(self._hooks)
        self._hooks[h.id] = hook
        return h

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(tensor)`` runs after the gradient was accumulated into this leaf's ``.grad``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._gfn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._post_acc_hooks is None:
            self._post_acc_hooks = OrderedDict()
        h = RemovableHandle(self._post_acc_hooks)
        self._post_acc_hooks[h.id] = hook
        return h

    # ------------------------------------------------------------------ in-place plumbing
    def _set_data_inplace(self, data: Any) -> None:
        """Swap in a new array and bump the version (no graph change)."""
        if type(data) is Tracer and type(self._st.a) is not Tracer:
            raise RuntimeError(
                "torch.func: an in-place operation inside a function transform wrote a "
                "transformed value into a tensor from outside it (a captured tensor or "
                "buffer); this is not supported. Pass the tensor as an input instead."
            )
        self._st.array = data
        self._vc.v += 1

    def _check_inplace(self) -> None:
        if self._requires_grad and self._gfn is None and _gm._state.record:
            raise RuntimeError(_LEAF_INPLACE)
        _tc.check_inplace(self)

    def _rebind(self, node: Node, output_nr: int = 0) -> None:
        """After an in-place op: ``self``'s value now comes from ``node``."""
        self._unregister_retain()
        self._gfn = node
        self._output_nr = output_nr
        self._requires_grad = True
        self._hooks = None
        if self._retains_grad:
            self._retains_grad = False
            self.retain_grad()


def _del_grad_fn(self: Tensor) -> None:
    raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")


# A tensor's node is its slot ``_gfn``; ``_grad_fn`` reads and writes that slot through its
# C descriptor and refuses ``del`` as PyTorch does. (A ``__delattr__`` would do the latter,
# but a class defining one gets Python's slot ``__setattr__``: every attribute store on a
# tensor, ~12 per new tensor, cost ~0.4 us instead of ~0.03 us.)
Tensor._grad_fn = property(Tensor._gfn.__get__, Tensor._gfn.__set__, _del_grad_fn)  # type: ignore[attr-defined]


def known_value(t: Tensor) -> np.ndarray | None:
    """``t``'s value as a NumPy array, or ``None`` when a funcgrad transform traces it
    without knowing it (inside ``torch.func.vmap``): input checks that read values
    skip then, as PyTorch's batched kernels do not run them per element. Under lazy
    execution a value still pending is not computed for a check either (``None``)."""
    a = t._st.a
    if (type(a) is LazyArray and a._value is None) or type(a) is MetaArray:
        return None  # (a meta tensor has no values to check)
    try:
        return np.asarray(t._st.array)
    except ConcretizationError:
        return None


@x64
def _to_jax(a: Any) -> Any:
    """A new array on the CPU: with JAX's default device its CPU, a read-only NumPy copy
    (the host tier's value, as ``device.place`` makes; ``jnp.asarray`` would compile a
    conversion per new shape), else a device array on the CPU device."""
    a = np.asarray(a)
    if not a.flags.writeable and a.base is None and _device.default_is_cpu():
        return a  # already a copy nobody else writes (``device.place``'s)
    return _device.place(a, None)


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


# --------------------------------------------------------------------------- dispatch

#: while a forward-AD dual level is entered, :mod:`compat._core.forward`'s hooks (else None)
FORWARD: Any = None


@x64
def apply(
    fn: Callable,
    name: str,
    args: Sequence[Any],
    static: tuple = (),
    saves: str | None = None,
) -> Any:
    """Apply a torch op written as a pure function of arrays.

    ``fn(*arrays, **dict(static))`` is traced once per input avals into a funcgrad
    program (cached); tensors in ``args`` are passed by their arrays, Python numbers
    as weakly typed scalars. Returns a Tensor, or a tuple for multiple outputs.
    """
    if FORWARD is not None:  # a forward-AD dual level is entered (compat._core.forward)
        return FORWARD.apply(fn, name, args, static, saves)
    arrays = []
    sig = []
    mask = []  # which arguments are tensors requiring grad
    edges = []  # their edges, when grad mode is on
    req = False
    grad_on = _gm._state.record
    raw = None  # whether Python numbers go as they are (see ``host_scalars``)
    for a in args:
        if isinstance(a, Tensor):
            v = a._view
            if v is not None and v.seen != a._vc.v:
                v.sync(a)
            x = a._st.a
            if type(x) is LazyArray and x._value is not None:
                x = a._st.array
            elif type(x) is MetaArray:  # tensors of other devices mixed in: PyTorch's error
                _tc.check_meta_mix(args, name)
            arrays.append(x)
            av = getattr(x, "aval", x)  # one attribute read (a jax array's is fast)
            sig.append((av.shape, av.dtype))
            if a._requires_grad:
                mask.append(True)
                if grad_on:
                    req = True
                    fn_ = a._gfn  # (``a._edge_key()``, inlined for a non-leaf)
                    if fn_ is None:
                        edges.append(a._edge()[0])  # (a leaf's AccumulateGrad: output 0)
                    else:
                        nr = a._output_nr
                        edges.append(fn_ if nr == 0 else (fn_, nr))
                    continue
            else:
                mask.append(False)
            edges.append(None)
        else:
            mask.append(False)
            edges.append(None)
            ta = type(a)
            if ta in _PY_SCALARS:
                if raw is None:
                    raw = _host_scalars()
                arrays.append(a if raw else _scalar_array(a))
                sig.append(ta)
            else:
                arrays.append(a)
                d = getattr(a, "dtype", None)
                sig.append((a.shape, d) if d is not None else type(a))
    sig = tuple(sig)
    op = _op_cache.get((fn, name, static, sig, saves))
    if op is None:  # (a recorded call needs the concrete program: no symbolic trace for it)
        op = _tc.lookup_op(fn, name, static, sig, saves, args, not req)
    if not req:
        if op.single:
            return _new_tensor(Tensor, op.run(*arrays)[0])
        return tuple([_new_tensor(Tensor, o) for o in op.run(*arrays)])
    if op.generic:  # a shape template's op: the graph wants the concrete program
        op = op.real()
    if _tracing.stack:
        note_captured(args)  # under a funcgrad transform: values, no graph
        outs = [_new_tensor(Tensor, o) for o in op.run(*arrays)]
    else:
        mask = tuple(mask)
        entry = op._vjps.get(mask)  # (``op.vjp(mask)``, its cache read inlined)
        if entry is None:
            entry = op.vjp(mask)
        outs = _finish(op, entry, arrays, tuple(edges), args, None, None)
    return outs[0] if op.single else tuple(outs)


_PY_SCALARS = (float, int, bool, complex)


#: while ``torch.func`` traces a function at top level: the tensors requiring grad that
#: it read from outside (not its inputs), by id of their array; else ``None``
captured: dict[int, Tensor] | None = None


def note_captured(args: Sequence[Any]) -> None:
    """Remember the outside tensors requiring grad that a traced function reads (their
    arrays are constants of the trace), so ``torch.func`` can differentiate through them."""
    if captured is None:
        return
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad and type(a._st.array) is not Tracer:
            captured[id(a._st.array)] = a


def _saved_entry(t: Tensor, out: bool = False) -> tuple:
    a = t._st.a  # last: an input itself (``_saved_self is t``), an output's storage
    if out:  # (no node either: an entry of its own node's output; no reference cycle)
        return (t._vc, t._vc.v, a.shape, a.dtype, None, t._output_nr, t._st)
    return (t._vc, t._vc.v, a.shape, a.dtype, t._gfn, t._output_nr, t)


def _record(
    op: OpProgram, args: Sequence[Any], arrays: list, inplace: Tensor | None = None
) -> list:
    """Record ``op`` applied to ``args`` (tensors and numbers): edges from the tensors that
    require grad, version counters of the tensors PyTorch would consider saved."""
    if is_tracing():
        return record(op, arrays, (), args, inplace, ())
    mask = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
    edges = tuple([a._edge_key() if m else None for a, m in zip(args, mask)])
    return _finish(op, op.vjp(mask), arrays, edges, args, inplace, None)


def record(
    op: OpProgram,
    arrays: Sequence[Any],
    edges: Sequence[Any],
    args: Sequence[Any] | None = None,
    inplace: Tensor | None = None,
    mask: tuple[bool, ...] | None = None,
) -> list:
    """Run ``op`` through its VJP forward and record a node with these input ``edges``
    (edge keys, :func:`~compat._core.graph.edge_key`; ``None``: no gradient); returns the
    output tensors (or, in place, ``inplace``).

    Without ``args`` (the engine recording a backward with ``create_graph``) an output
    requires grad only if it depends on an input with an edge, as in PyTorch.
    """
    if mask is None:
        mask = tuple(e is not None for e in edges)
    if is_tracing():  # under a funcgrad transform tensors are values: nothing to record
        if args is not None:
            note_captured(args)
        outs = op.run(*arrays)
        if inplace is not None:
            inplace._set_data_inplace(outs[0])
            return [inplace]
        return [_new_tensor(Tensor, o) for o in outs]
    live = None
    if args is None:
        deps = op.out_deps()
        live = [any(mask[i] for i in d) for d in deps]
        if not any(live):
            return [_new_tensor(Tensor, o) for o in op.run(*arrays)]
        # an input no live output depends on gets no edge, so a later backward leaves its
        # ``.grad`` untouched (``None``) as PyTorch does, instead of accumulating zeros
        used = frozenset().union(*(d for d, lv in zip(deps, live) if lv))
        if not all(i in used for i, m in enumerate(mask) if m):
            mask = tuple(m and i in used for i, m in enumerate(mask))
            edges = tuple(e if m else None for e, m in zip(edges, mask))
    return _finish(op, op.vjp(mask), arrays, tuple(edges), args, inplace, live)


def _finish(
    op: OpProgram,
    entry: Any,
    arrays: Sequence[Any],
    edges: tuple,
    args: Sequence[Any] | None,
    inplace: Tensor | None,
    live: list | None,
) -> list:
    if args is not None and entry.saved_in:
        _tc.check_saved(args, entry.saved_in)
    outs, res = entry.forward(arrays)
    saved = None
    if args is not None and (entry.saved_in or entry.saved_out):
        saved = [
            _saved_entry(args[i])
            for i in entry.saved_in
            if not (inplace is not None and i == 0) and isinstance(args[i], Tensor)
        ]
    # tuples of untracked values leave the GC's tracking at a young collection (lists stay)
    ins = arrays if type(arrays) is tuple else tuple(arrays)
    node = Node(entry, res if type(res) is tuple else tuple(res), ins, edges, saved)
    if _ANOMALY[0]:
        _record_stack(node)
    if inplace is not None:
        t = inplace
        t._st.array = outs[0]
        t._vc.v += 1
        t._rebind(node)
        if saved is not None and entry.saved_out:
            saved.append(_saved_entry(t, True))
        return [t]
    result = []
    for j, o in enumerate(outs):
        t = _new_tensor(Tensor, o)
        if op.float_out[j] and (live is None or live[j]):
            t._requires_grad = True
            t._gfn = node
            t._output_nr = j
        result.append(t)
    if saved is not None:
        for j in entry.saved_out:
            saved.append(_saved_entry(result[j], True))
        if _graph.SAVED_HOOKS:
            ins = [args[i] for i in entry.saved_in if isinstance(args[i], Tensor)]
            _graph.pack_saved(node, ins + [result[j] for j in entry.saved_out])
    return result
