"""Tensor operators and methods, installed on :class:`~compat._core.tensor.Tensor`."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import autograd as _autograd
from compat._core import creation as _creation
from compat._core import creation_rows as _creation_rows
from compat._core import device as _device
from compat._core import dtypes as _dt
from compat._core import fastpath as _fastpath
from compat._core import graph as _graph
from compat._core import index_put as _index_put
from compat._core import matrix_views as _mv
from compat._core import memory_formats as _mf
from compat._core import ops as O
from compat._core import optable
from compat._core import pyfunc_methods as _pyfunc
from compat._core import restride as _restride
from compat._core import shape_ops as S
from compat._core import tensor_copies as _copies
from compat._core import tensor_swap as _swap
from compat._core import transfer as T_
from compat._core import view_layout as _layout
from compat._core import views as _views
from compat._core.mutation import inplace_result
from compat._core.ops import linalg_top as _linalg_top
from compat._core.ops.unary import value_overload
from compat._core.tensor import Size, Tensor, _wrap_dim


def _r(f: Any) -> Any:
    return lambda self, other: f(O.coerce(other), self)


def _type(self: Tensor, dtype: Any = None) -> Any:
    if dtype is None:  # PyTorch's legacy type name (``t.type()``)
        name = self._npdtype.name
        return "torch." + _graph.TYPE_NAMES.get(name, name)
    if isinstance(dtype, str):  # a legacy type name: ``t.type("torch.DoubleTensor")``
        dtype = getattr(_creation, dtype.rsplit(".", 1)[-1])
    if isinstance(dtype, _creation._LegacyTensorType):
        dtype = dtype.dtype
    return S.to_dtype(self, dtype)


def _legacy_new(self: Tensor, *args: Any, device: Any = None, **kwargs: Any) -> Tensor:
    """``Tensor.new``, the legacy constructor: ``new(*sizes)`` or ``new(size)`` a tensor of
    those sizes (zeros: compat has no uninitialised memory), ``new(data)`` one from data,
    ``new(tensor)`` that tensor's data, ``new()`` an empty one; ``self``'s dtype, and
    ``self``'s device unless ``device=`` says otherwise."""
    if set(kwargs) == {"size"} and not args:  # ``new(size=(3, 4))``
        args = (Size(kwargs.pop("size")),)
    if kwargs:
        raise TypeError(
            f"new() received an invalid combination of arguments - got "
            f"({', '.join(f'{k}={type(v).__name__}' for k, v in kwargs.items())}): "
            "new() takes sizes, data, a tensor or a storage, and device= only"
        )
    where = self.device if device is None else device
    if not args:
        return _creation._factory(0, (0,), self.dtype, False, where)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return _creation._factory(0, tuple(int(a) for a in args), self.dtype, False, where)
    if len(args) == 1 and isinstance(args[0], Size):
        return _creation._factory(0, tuple(args[0]), self.dtype, False, where)
    if len(args) == 1 and isinstance(args[0], _views.UntypedStorage):
        return _new_of_storage(self, args[0])
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype != self.dtype:
            raise TypeError(
                f"expected {self.dtype} (got {other.dtype}): Tensor.new(tensor) takes a "
                "tensor of self's dtype"
            )
        return other.detach()
    if len(args) == 1:
        return _creation.tensor(args[0], dtype=self.dtype, device=where)
    raise TypeError(
        "new() received an invalid combination of arguments - got "
        f"({', '.join(type(a).__name__ for a in args)})"
    )


def _fix_weakref(self: Tensor) -> None:
    """``Tensor._fix_weakref``: PyTorch re-links a tensor resurrected through a weak
    reference to its C++ half; a compat tensor is one Python object, so there is nothing to
    re-link (weak references to it behave as to any Python object)."""


def _new_of_storage(self: Tensor, storage: _views.UntypedStorage) -> Tensor:
    """``Tensor.new(storage)``: a 1-D tensor of ``self``'s dtype over the whole storage,
    sharing its memory (a typed storage must be of ``self``'s dtype, as PyTorch's)."""
    if isinstance(storage, _views.TypedStorage) and storage.dtype != self.dtype:
        raise RuntimeError(
            f"Expected a Storage of type {_dt.scalar_type_name(self._npdtype)} or an "
            f"UntypedStorage, but got type {_dt.scalar_type_name(_dt.np_dtype(storage.dtype))} "
            "for argument 1 'storage'"
        )
    root = storage._root
    if root._npdtype != self._npdtype:
        return root.reshape(-1).view(self.dtype)
    return root.reshape(-1)


def _invert(self: Tensor) -> Tensor:
    """``~self``: ``bitwise_not``, whose refusal PyTorch's operator words as a TypeError."""
    if _dt.kind(self._npdtype) not in "biu":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return O.bitwise_not(self)


def _setitem(self: Tensor, idx: Any, value: Any) -> None:
    S.setitem(self, idx, value)


def _iop(op: str) -> Any:
    def f(self: Tensor, other: Any) -> Tensor:
        return O.inplace_binary(self, op, other)

    return f


def _ipm(op: str) -> Any:
    def f(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        return O.inplace_binary(self, op, other, alpha)

    return f


def _div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is not None:
        return self.copy_(O.div(self, other, rounding_mode=rounding_mode))
    return O.inplace_binary(self, "div", other)


def _inplace_from(fn: Any) -> Any:
    """``Tensor.X_`` from the out-of-place ``X`` (see :func:`inplace_result`)."""

    def f(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace_result(self, fn, args, kwargs)

    f.__name__ = getattr(fn, "__name__", "op") + "_"
    return f


#: an argument ``random_`` was not given
_UNSET: Any = object()


def _random_(
    self: Tensor, from_: Any = _UNSET, to: Any = _UNSET, *, generator: Any = None
) -> Tensor:
    """``random_()``: integers in ``[0, 2**mantissa]`` for floats (``[0, max]`` for ints);
    ``random_(to)``: ``[0, to)``; ``random_(from, to)``: ``[from, to)``; ``random_(from,
    None)``: ``[from, max]`` (PyTorch's bounds checks in ``rng.from_to``)."""
    if to is _UNSET:
        if from_ is _UNSET:
            return O.inplace_random(self, "random", None, None, generator)
        from_, to = 0, from_
    return O.inplace_random(self, "random", from_, to, generator)


def _contains(self: Tensor, element: Any) -> bool:
    """``element in t``: whether any element equals it (a number or a tensor)."""
    if not isinstance(element, (Tensor, int, float, bool, complex)):
        raise RuntimeError(
            "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
            f"{type(element)}."
        )
    return bool((self == element).any().item())


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """``Tensor.sum_to_size``: summed over the dimensions ``size`` broadcasts (the leading
    ones it lacks, and its 1s), so that the result has ``size``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    shape = tuple(self.shape)
    if len(size) > len(shape) or any(
        s not in (d, 1) for s, d in zip(reversed(size), reversed(shape))
    ):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self.sum(tuple(range(len(shape) - len(size)))) if len(size) < len(shape) else self
    dims = tuple(i for i, (s, d) in enumerate(zip(size, out.shape)) if s == 1 and d != 1)
    return out.sum(dims, keepdim=True) if dims else out


def _pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """``Tensor.pin_memory``: PyTorch's CPU-build error without an accelerator; with one,
    the tensor itself (compat has no page-locked memory: transfers do not need it)."""
    if not _device.gpus():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return self


def _share_memory_(self: Tensor) -> Tensor:
    """``Tensor.share_memory_``: refused. PyTorch moves the storage into shared memory so
    that processes update one copy in place (Hogwild training); compat's tensors hold
    immutable JAX arrays, so a tensor sent to another process would be a copy and its
    updates would be lost without a word."""
    raise NotImplementedError(
        "compat.torch: shared-memory tensors (Tensor.share_memory_, Module.share_memory) "
        "are not supported: compat's tensors hold immutable arrays, so other processes "
        "would train copies (use torch.distributed for multi-process training)"
    )


def _is_nonzero(self: Tensor) -> bool:
    if self.numel() != 1:
        raise RuntimeError(
            "Boolean value of Tensor with no values is ambiguous"
            if self.numel() == 0
            else "Boolean value of Tensor with more than one value is ambiguous"
        )
    return bool(self.item())


def _stride(self: Tensor, dim: int | None = None) -> Any:
    """Strides in elements: row-major for a fresh tensor, a view's follow its base's."""
    strides = _views.layout_of(self)[1]
    return strides if dim is None else strides[_wrap_dim(dim, len(strides))]


def _is_contiguous(self: Tensor, memory_format: Any = None) -> bool:
    shape, strides, _ = _views.layout_of(self)
    plain = _layout.is_contiguous(shape, strides)
    if memory_format is None:
        return plain
    # compat makes plainly contiguous tensors whatever format is asked (``contiguous``,
    # ``to``, ``empty``): they read as contiguous in every format, as before; a tensor
    # laid out channels-last (a permute) reads as such, as in PyTorch
    return _mf.is_contiguous_as(shape, strides, memory_format, plain) or plain


def _dim_order(self: Tensor, *, ambiguity_check: Any = False) -> tuple:
    """``Tensor.dim_order``: the dims from outermost to innermost in memory."""
    shape, strides, _ = _views.layout_of(self)
    plain = _layout.is_contiguous(shape, strides)
    return _mf.dim_order(tuple(shape), tuple(strides), plain, ambiguity_check)


def _contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` when contiguous, else a contiguous copy (``CloneBackward0``)."""
    return self if _is_contiguous(self) else S.clone(self)


def _data_ptr(self: Tensor) -> int:
    """A stand-in address: equal for tensors sharing storage, offset by a view's
    storage offset (compat has no raw memory to point at)."""
    return _views.storage_key(self) + _views.layout_of(self)[2] * self.element_size()


#: arithmetic and comparison operators: ``NotImplemented`` for other operand types, so
#: Python raises its own ``TypeError`` (``unsupported operand type(s) for +: 'Tensor'
#: and 'NoneType'``) and ``t == None`` is ``False``, as with PyTorch
#: operators returning ``NotImplemented`` for an operand of another type (so Python tries
#: the other side, as PyTorch's do)
_BINARY_DUNDERS = (
    frozenset(
        f"__{r}{n}__"
        for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul")
        for r in ("", "r")
    )
    | frozenset(
        f"__{r}{n}__" for n in ("lshift", "rshift", "and", "or", "xor") for r in ("", "r", "i")
    )
    | frozenset(f"__i{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"))
    | {"__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"}
)
_OPERANDS = (Tensor, bool, int, float, complex, np.ndarray, np.generic)


def _delitem(self: Tensor, idx: Any) -> None:
    raise TypeError("Tensor does not support deleting items")


def _operand_checked(f: Any) -> Any:
    def op(self: Tensor, other: Any) -> Any:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return f(self, other)

    op.__name__ = getattr(f, "__name__", "op")
    return op


def _fast_binary(
    fn: Any, *, reflected: bool = False, true_div: bool = False, name: str | None = None
) -> Any:
    """An arithmetic operator that goes straight to ``_binary``, as the named op (``add``
    without ``alpha``, ``div`` without ``rounding_mode``) does: one call less per op. A
    floating tensor and a Python number (the common ``y * 0.5``) take the memoised
    dispatch of :mod:`compat._core.fastpath`."""
    binary, coerce = O.binary._binary, O.coerce
    node = name if name is not None else O.binary._BIN_NAMES.get(fn, fn.__name__)

    def other_operands(self: Tensor, other: Any) -> Any:
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        if reflected:
            return binary(fn, coerce(other), self, true_div=true_div, name=name)
        return binary(fn, self, other, true_div=true_div)

    return _fastpath.binary_operator(fn, node, reflected, other_operands)


def _construct(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``Tensor(data)`` (float tensor of the data) or ``Tensor(*sizes)`` (uninitialised)."""
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, Tensor):
            return cls._make(data._st.array, False)
        made = _creation.tensor(data, dtype=_dt.get_default_dtype())
        return cls._make(made._st.array, False)
    shape = tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else args
    return cls._make(np.zeros(shape, _dt.get_default_dtype().np), False)


def _backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Compute the gradient of this tensor w.r.t. graph leaves (see ``autograd.backward``)."""
    _autograd.backward(
        self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs
    )


def install() -> None:
    T = Tensor
    T.__new__ = staticmethod(_construct)
    T.backward = _backward
    ops = {
        "__floordiv__": O.floor_divide,
        "__rfloordiv__": _r(O.floor_divide),
        "__mod__": O.remainder,
        "__rmod__": _r(O.remainder),
        "__pow__": O.pow,
        "__rpow__": _r(O.pow),
        "__matmul__": O.matmul,
        "__rmatmul__": _r(O.matmul),
        "__lt__": O.lt,
        "__le__": O.le,
        "__gt__": O.gt,
        "__ge__": O.ge,
        "__eq__": O.eq,
        "__ne__": O.ne,
        "__neg__": O.neg,
        "__pos__": lambda self: self,
        "__abs__": O.abs,
        "__and__": lambda a, b: O._bitwise("and", a, b),
        "__or__": lambda a, b: O._bitwise("or", a, b),
        "__xor__": lambda a, b: O._bitwise("xor", a, b),
        "__rand__": lambda a, b: O._bitwise("and", b, a),
        "__ror__": lambda a, b: O._bitwise("or", b, a),
        "__invert__": _invert,
        "__getitem__": S.getitem,
        "__setitem__": _setitem,
        "__delitem__": _delitem,
        "__iadd__": _iop("add"),
        "__isub__": _iop("sub"),
        "__imul__": _iop("mul"),
        "__itruediv__": _iop("div"),
        "__ifloordiv__": lambda self, other: self.floor_divide_(other),
        "__imod__": lambda self, other: self.remainder_(other),
        "__ipow__": lambda self, other: self.pow_(other),
        "__iand__": lambda self, other: self.bitwise_and_(other),
        "__ior__": lambda self, other: self.bitwise_or_(other),
        "__ixor__": lambda self, other: self.bitwise_xor_(other),
        "__ilshift__": lambda self, other: self.bitwise_left_shift_(other),
        "__irshift__": lambda self, other: self.bitwise_right_shift_(other),
        "__lshift__": O.bitwise_left_shift,
        "__rshift__": O.bitwise_right_shift,
        "__rlshift__": lambda self, other: O.bitwise_left_shift(O.coerce(other), self),
        "__rrshift__": lambda self, other: O.bitwise_right_shift(O.coerce(other), self),
        "__rxor__": lambda a, b: O._bitwise("xor", b, a),
        "__contains__": _contains,
        "__reversed__": lambda self: self if self.ndim == 0 else self.flip(0),
    }
    for name, f in ops.items():
        setattr(T, name, _operand_checked(f) if name in _BINARY_DUNDERS else f)
    B = O.binary  # + - * / straight to _binary
    fast = {"add": B._add_f, "sub": B._sub_f, "mul": B._mul_f, "truediv": B._div_f}
    for name, fn in fast.items():
        div = name == "truediv"
        setattr(T, f"__{name}__", _fast_binary(fn, true_div=div))
        # ``2 - t`` is PyTorch's rsub of a number: its node is RsubBackward1
        node = "RsubBackward1" if name == "sub" else None
        setattr(T, f"__r{name}__", _fast_binary(fn, reflected=True, true_div=div, name=node))
    T.__hash__ = object.__hash__  # type: ignore[assignment]

    # every row of the op table: Tensor.X, its aliases and the in-place X_
    for name, f in optable.methods(_inplace_from).items():
        setattr(T, name, f)

    methods = {
        "apply_": _pyfunc.apply_,
        "map_": _pyfunc.map_,
        "map2_": _pyfunc.map2_,
        "put": _index_put.put,
        "put_": _index_put.put_,
        "index_put": _index_put.index_put,
        "index_put_": _index_put.index_put_,
        "view_as": lambda self, other: S.view(self, *other.shape),
        "lu_solve": _linalg_top.lu_solve,
        "reshape_as": lambda self, other: S.reshape(self, *other.shape),
        "contiguous": _contiguous,
        # conjugate/negative bits: views (compat/_core/ops/spectral.py)
        "resolve_conj": O.spectral.resolve_conj,
        "resolve_neg": O.spectral.resolve_neg,
        "is_conj": O.spectral.is_conj,
        "is_neg": O.spectral.is_neg,
        "_neg_view": O.spectral._neg_view,
        "is_contiguous": _is_contiguous,
        "dim_order": _dim_order,
        # dtype / device
        "to": T_.to,
        "type": _type,
        "float": lambda self: S.to_dtype(self, _dt.float32),
        "double": lambda self: S.to_dtype(self, _dt.float64),
        "half": lambda self: S.to_dtype(self, _dt.float16),
        "bfloat16": lambda self: S.to_dtype(self, _dt.bfloat16),
        "long": lambda self: S.to_dtype(self, _dt.int64),
        "int": lambda self: S.to_dtype(self, _dt.int32),
        "bool": lambda self: S.to_dtype(self, _dt.bool),
        "byte": lambda self: S.to_dtype(self, _dt.uint8),
        "char": lambda self: S.to_dtype(self, _dt.int8),
        "short": lambda self: S.to_dtype(self, _dt.int16),
        "cfloat": lambda self: S.to_dtype(self, _dt.complex64),
        "cdouble": lambda self: S.to_dtype(self, _dt.complex128),
        "fill_diagonal_": O.inplace.fill_diagonal_,
        "is_signed": lambda self: _dt.kind(self._npdtype) in "ifc",
        "is_same_size": lambda self, other: tuple(self.shape) == tuple(other.shape),
        "is_nonzero": _is_nonzero,
        "stride": _stride,
        "storage_offset": lambda self: _views.layout_of(self)[2],
        "_fix_weakref": _fix_weakref,
        "data_ptr": _data_ptr,
        "narrow_copy": _copies.narrow_copy,
        "module_load": _swap.module_load,
        # compat has no page-locked memory: ``pin_memory=True`` is accepted and ignored
        "is_pinned": lambda self, device=None: False,
        "is_shared": lambda self: False,
        "share_memory_": _share_memory_,
        "pin_memory": _pin_memory,
        "sum_to_size": _sum_to_size,
        "untyped_storage": lambda self: _views.UntypedStorage(self),
        "storage": _views.storage,
        "_view_func": _views.view_func,
        "nbytes": property(lambda self: self.numel() * self._npdtype.itemsize),
        "itemsize": property(lambda self: self._npdtype.itemsize),
        "type_as": lambda self, other: S.to_dtype(self, other.dtype),
        "cpu": T_.cpu,
        "cuda": T_.cuda,
        "xpu": T_.xpu,
        "new": _legacy_new,
        "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False: (
            _creation.tensor(
                data,
                dtype=dtype or self.dtype,
                device=self.device if device is None else device,
                requires_grad=requires_grad,
            )
        ),
        # in-place
        "add_": _ipm("add"),
        "sub_": _ipm("sub"),
        "mul_": _iop("mul"),
        "div_": _div_,
        # PyTorch's other spellings of the same in-place ops
        "divide_": _div_,
        "true_divide_": _iop("div"),
        "multiply_": _iop("mul"),
        "subtract_": _ipm("sub"),
        "pow_": _iop("pow"),
        "copy_": lambda self, src, non_blocking=False: O.inplace_copy(self, src),
        "addcmul_": lambda self, t1, t2, *old, value=1: O.inplace_addc(
            self, "mul", *value_overload("addcmul_", t1, t2, old, value, method=True)
        ),
        "addcdiv_": lambda self, t1, t2, *old, value=1: O.inplace_addc(
            self, "div", *value_overload("addcdiv_", t1, t2, old, value, method=True)
        ),
        "lerp_": O.inplace_lerp,
        "uniform_": lambda self, a=0.0, b=1.0, *, generator=None: O.inplace_random(
            self, "uniform", a, b, generator
        ),
        "normal_": lambda self, mean=0.0, std=1.0, *, generator=None: O.inplace_random(
            self, "normal", mean, std, generator
        ),
        "bernoulli_": lambda self, p=0.5, *, generator=None: O.inplace_random(
            self, "bernoulli", p, 0.0, generator
        ),
        "exponential_": lambda self, lambd=1.0, *, generator=None: O.inplace_random(
            self, "exponential", lambd, 0.0, generator
        ),
        "cauchy_": lambda self, median=0.0, sigma=1.0, *, generator=None: O.inplace_random(
            self, "cauchy", median, sigma, generator
        ),
        "log_normal_": lambda self, mean=1.0, std=2.0, *, generator=None: O.inplace_random(
            self, "log_normal", mean, std, generator
        ),
        "geometric_": lambda self, p, *, generator=None: O.inplace_random(
            self, "geometric", p, 0.0, generator
        ),
        "random_": _random_,
        "multinomial": lambda self, num_samples, replacement=False, *, generator=None: (
            _creation.multinomial(self, num_samples, replacement, generator=generator)
        ),
        "bernoulli": lambda self, p=None, *, generator=None: _creation.bernoulli(
            self, p, generator
        ),
    }
    for name, f in (methods | _restride.METHODS | _creation_rows.NEW_METHODS).items():
        setattr(T, name, f)
    T.T = property(lambda self: S.permute(self, *reversed(range(self.ndim))))
    T.mT = property(_mv.mT)
    T.mH = property(_mv.mH)
    T.H = property(_mv.H)
    T.adjoint = _mv.adjoint
    T.real = property(O.spectral.real, _part_setter(O.spectral.real))
    T.imag = property(O.spectral.imag, _part_setter(O.spectral.imag))
    T.is_sparse = False
    T.layout = _mf.strided


def _part_setter(part: Any) -> Any:
    """``t.real = v``/``t.imag = v``: ``v`` (a tensor or a number) copied into the part's
    view of ``t``, as PyTorch's setters."""

    def setter(self: Tensor, value: Any) -> None:
        view = part(self)
        if not isinstance(value, Tensor):
            value = _creation.tensor(value, dtype=view.dtype, device=view.device)
        view.copy_(value)

    return setter


def _np_scalar(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
