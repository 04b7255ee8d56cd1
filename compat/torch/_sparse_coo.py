"""Sparse COO tensors (``layout=torch.sparse_coo``) in compat.

A sparse tensor is a :class:`SparseCooTensor` (a ``Tensor`` subclass, so ``isinstance``
and ``type(x) is torch.Tensor``-free code see a tensor) holding two ordinary compat
tensors: ``indices`` (int64, ``sparse_dim x nnz``) and ``values`` (``nnz x *dense
shape``), its size and whether it is coalesced (indices sorted row-major, no repeats).
Autograd is the values tensor's: every sparse op is compat ops on ``values`` (products
are one gather + segment-sum program through ``apply``), so gradients reach the values
(and from them whatever made them) and the dense operands through compat's recorded
graph. Index bookkeeping (coalescing, ``to_sparse``'s nonzeros) is eager NumPy on the
index values, as PyTorch reads them too.

Nothing densifies silently: the tensor's dense storage slot is a guard that raises
``NotImplementedError`` naming the op and the layout, so any op compat has not written
for this layout (``torch.exp(s)``, ``s.view(...)``, ``torch.cat([s])``) refuses.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import namespace as _ns
from compat._core import printing as _printing
from compat._core.device import device as _device_cls
from compat._core.memory_formats import layout
from compat._core.size import Size
from compat._core.tensor import Tensor, _new_tensor, _wrap_dim, apply
from funcgrad import numpy as fnp

__all__ = [
    "SparseCooTensor",
    "refuse",
    "sparse_coo",
    "sparse_coo_tensor",
]


class _SparseLayout(layout):
    """``torch.sparse_coo``: a ``torch.layout`` (pickled as this module's name)."""

    def __reduce__(self) -> str:
        return "sparse_coo"


_SparseLayout.__module__ = __name__
sparse_coo = _SparseLayout("torch.sparse_coo")

_OP_NAME = re.compile(r"(Backward\d*|Forward\d*)$")


def _op_in_flight() -> str:
    """The op that reached a sparse tensor's dense storage: the node name ``apply`` was
    given (``ReluBackward0`` is ``relu``), else the outermost compat function called."""
    f = sys._getframe(2)
    outer = None
    while f is not None:
        code = f.f_code
        if code.co_name == "apply" and code.co_filename.endswith("tensor.py"):
            name = f.f_locals.get("name")
            if isinstance(name, str) and name:
                return _OP_NAME.sub("", name).lower() or name
        if "compat" in code.co_filename:
            outer = code.co_name
        f = f.f_back
    return outer or "this operation"


def refuse(op: str) -> NotImplementedError:
    """PyTorch's refusal of an op with no kernel for the sparse COO layout."""
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the 'SparseCPU' backend: compat "
        "has no kernel for it on sparse COO tensors (layout torch.sparse_coo). Convert "
        "with .to_dense() first if a dense result is meant."
    )


class _DenseGuard:
    """A sparse tensor's storage slot: reading it as a dense array refuses."""

    __slots__ = ()

    @property
    def a(self) -> Any:
        raise refuse(_op_in_flight())

    array = a


_GUARD = _DenseGuard()


def _is_sparse(x: Any) -> bool:
    return isinstance(x, SparseCooTensor)


def _values_np(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def _same(x: Any) -> Any:
    return x * 1  # a node of its own (the sparse tensor's, as PyTorch's constructor node)


class SparseCooTensor(Tensor):
    """A sparse COO tensor (see the module docstring). Made by ``torch.sparse_coo_tensor``
    and ``Tensor.to_sparse()``; ops on it are the ones this module writes."""

    __slots__ = ("_sp_coalesced", "_sp_grad", "_sp_indices", "_sp_size", "_sp_values")

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        return Size(self._sp_size)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._sp_size)
        return self._sp_size[_wrap_dim(dim, len(self._sp_size))]

    @property
    def dtype(self) -> _dt.dtype:
        return self._sp_values.dtype

    @property
    def _npdtype(self) -> np.dtype:
        return self._sp_values._npdtype

    @property
    def ndim(self) -> int:
        return len(self._sp_size)

    def dim(self) -> int:
        return len(self._sp_size)

    ndimension = dim

    def numel(self) -> int:
        return int(np.prod(self._sp_size, dtype=np.int64))

    nelement = numel

    def __len__(self) -> int:
        if not self._sp_size:
            raise TypeError("len() of a 0-d tensor")
        return self._sp_size[0]

    @property
    def device(self) -> _device_cls:
        return self._sp_values.device

    @property
    def is_cuda(self) -> bool:
        return self._sp_values.is_cuda

    @property
    def is_cpu(self) -> bool:
        return self._sp_values.is_cpu

    def get_device(self) -> int:
        return self._sp_values.get_device()

    def is_floating_point(self) -> bool:
        return self._sp_values.is_floating_point()

    def is_complex(self) -> bool:
        return self._sp_values.is_complex()

    def element_size(self) -> int:
        return self._sp_values.element_size()

    is_sparse = True
    layout = sparse_coo

    def sparse_dim(self) -> int:
        return int(self._sp_indices.shape[0])

    def dense_dim(self) -> int:
        return len(self._sp_size) - int(self._sp_indices.shape[0])

    def _nnz(self) -> int:
        return int(self._sp_indices.shape[1])

    def is_coalesced(self) -> bool:
        return self._sp_coalesced

    def _indices(self) -> Tensor:
        return self._sp_indices

    def _values(self) -> Tensor:
        return self._sp_values

    def indices(self) -> Tensor:
        if not self._sp_coalesced:
            raise RuntimeError(
                "Cannot get indices on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._sp_indices

    def values(self) -> Tensor:
        if not self._sp_coalesced:
            raise RuntimeError(
                "Cannot get values on an uncoalesced tensor, please call .coalesce() first"
            )
        return self._sp_values

    # ------------------------------------------------------------------ autograd state
    @property
    def requires_grad(self) -> bool:
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> SparseCooTensor:
        self._sp_values.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self) -> Any:
        return self._sp_values.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._sp_values.is_leaf

    @property
    def grad(self) -> SparseCooTensor | None:
        """The gradient of a leaf: sparse, on this tensor's pattern (its values' gradient)."""
        g = self._sp_values._grad
        if g is None:
            return None
        cached = self._sp_grad
        if cached is None or cached._sp_values is not g:
            cached = self._sp_grad = _make(self._sp_indices, g, self._sp_size, self._sp_coalesced)
        return cached

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is None:
            self._sp_values.grad = None
            return
        if not _is_sparse(value) or value._sp_indices is not self._sp_indices:
            raise RuntimeError(
                "compat: a sparse COO tensor's .grad can only be cleared (None) or set to "
                "a sparse tensor with the same indices"
            )
        self._sp_values.grad = value._sp_values

    @property
    def data(self) -> SparseCooTensor:
        return self.detach()

    def detach(self) -> SparseCooTensor:
        return _make(self._sp_indices, self._sp_values.detach(), self._sp_size, self._sp_coalesced)

    def clone(self, *, memory_format: Any = None) -> SparseCooTensor:
        return _make(
            self._sp_indices.clone(), self._sp_values.clone(), self._sp_size, self._sp_coalesced
        )

    def __deepcopy__(self, memo: dict) -> SparseCooTensor:
        """A copy of a leaf (new indices and values, ``requires_grad`` kept), as PyTorch's."""
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        vals = self._sp_values.detach().clone().requires_grad_(self.requires_grad)
        t = _make(self._sp_indices.clone(), vals, self._sp_size, self._sp_coalesced)
        memo[id(self)] = t
        return t

    # ------------------------------------------------------------------ conversions
    def to(self, *args: Any, **kwargs: Any) -> SparseCooTensor:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``: the values and indices moved
        or the values cast; ``self`` when nothing changes, as PyTorch."""
        vals = self._sp_values.to(*args, **kwargs)
        idx = self._sp_indices.to(vals.device)
        if vals is self._sp_values and idx is self._sp_indices:
            return self
        return _make(idx, vals, self._sp_size, self._sp_coalesced)

    def cpu(self) -> SparseCooTensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> SparseCooTensor:
        return self.to("cuda" if device is None else device)

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        if dtype is None:
            return f"torch.sparse.{self._sp_values.type().removeprefix('torch.')}"
        return self.to(dtype)

    def float(self) -> SparseCooTensor:
        return self.to(_dt.float32)

    def double(self) -> SparseCooTensor:
        return self.to(_dt.float64)

    def half(self) -> SparseCooTensor:
        return self.to(_dt.float16)

    def long(self) -> SparseCooTensor:
        return self.to(_dt.int64)

    def int(self) -> SparseCooTensor:
        return self.to(_dt.int32)

    def bool(self) -> SparseCooTensor:
        return self.to(_dt.bool)

    def to_dense(self, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
        """The dense tensor (repeated indices add up); differentiable in the values."""
        vals = self._sp_values if dtype is None else self._sp_values.to(dtype)
        st = (("size", self._sp_size), ("sd", self.sparse_dim()))
        return apply(_to_dense_f, "ToDenseBackward0", (self._sp_indices, vals), st)

    def to_sparse(self, sparse_dim: int | None = None, *, layout: Any = None) -> SparseCooTensor:
        if layout not in (None, sparse_coo) or sparse_dim not in (None, self.sparse_dim()):
            raise refuse("to_sparse")
        return self

    to_sparse_coo = to_sparse

    def coalesce(self) -> SparseCooTensor:
        """Indices sorted row-major without repeats, the values of repeats summed."""
        if self._sp_coalesced:
            return self
        return _coalesce(self._sp_indices, self._sp_values, self._sp_size)

    # ------------------------------------------------------------------ printing
    def __repr__(self) -> str:
        idx = repr(self._sp_indices)  # (an empty one's int64 goes unsaid, as PyTorch's)
        idx = idx.replace(", dtype=torch.int64)", ")").replace("\n", "\n" + " " * 15)
        vals = repr(self._sp_values.detach())
        dtype = re.search(r", dtype=(torch\.\w+)\)$", vals)
        if dtype is not None:  # (said once, in the tail, as PyTorch)
            vals = vals[: dtype.start()] + ")"
        if not self._nnz() and "size=" not in vals:  # (an empty one says its shape)
            vals = f"{vals[:-1]}, size={tuple(self._sp_values.shape)})"
        vals = vals.replace("\n", "\n" + " " * 14)
        suffixes = [f"size={tuple(self._sp_size)}", f"nnz={self._nnz()}"]
        if dtype is not None:
            suffixes.append(f"dtype={dtype.group(1)}")
        suffixes.append("layout=torch.sparse_coo")
        v = self._sp_values
        fn = v.grad_fn
        if fn is not None:
            suffixes.append(f"grad_fn=<{fn.name().removeprefix('torch::autograd::')}>")
        elif v.requires_grad:
            suffixes.append("requires_grad=True")
        text = f"tensor(indices={idx},\n       values={vals}"
        width, line = _printing.OPTS.linewidth, 0
        for k, suffix in enumerate(suffixes):  # PyTorch's wrapping: a new line when too long
            if k == 0 or line + len(suffix) + 2 > width:
                text += ",\n       " + suffix
                line = 7 + len(suffix)
            else:
                text += ", " + suffix
                line += len(suffix) + 2
        return text + ")"

    def __format__(self, spec: str) -> str:
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    # ------------------------------------------------------------------ arithmetic
    def __neg__(self) -> SparseCooTensor:
        return self._with_values(-self._sp_values)

    neg = __neg__

    def __mul__(self, other: Any) -> SparseCooTensor:
        """By a number, or by a dense tensor broadcast to this shape (its entries at the
        indices: the result keeps this pattern, as PyTorch's)."""
        if isinstance(other, Tensor) and not _is_sparse(other) and other.ndim:
            return self._with_values(self._sp_values * _at_indices(self, other))
        return self._with_values(self._sp_values * _scalar_operand(other, "mul"))

    __rmul__ = mul = __mul__

    def __truediv__(self, other: Any) -> SparseCooTensor:
        return self._with_values(self._sp_values / _scalar_operand(other, "div"))

    div = __truediv__

    def t(self) -> SparseCooTensor:
        if self.sparse_dim() != 2 or self.dense_dim():
            raise RuntimeError(
                f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions"
            )
        return self.transpose(0, 1)

    def transpose(self, dim0: int, dim1: int) -> SparseCooTensor:
        """Two sparse dimensions swapped (their index rows; the result is uncoalesced)."""
        n, sd = self.ndim, self.sparse_dim()
        d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        if d0 == d1:
            return self
        if d0 >= sd or d1 >= sd:
            raise refuse("transpose of a dense dimension")
        order = list(range(sd))
        order[d0], order[d1] = d1, d0
        size = list(self._sp_size)
        size[d0], size[d1] = size[d1], size[d0]
        idx = self._sp_indices[order]
        return _make(idx, self._sp_values, tuple(size), False)

    def relu(self) -> SparseCooTensor:
        return self._with_values(self._sp_values.relu())

    def _with_values(self, values: Tensor) -> SparseCooTensor:
        return _make(self._sp_indices, values, self._sp_size, self._sp_coalesced)


# Every other public Tensor method refuses by name on a sparse tensor (PyTorch's message);
# the dense storage guard catches the functions (``torch.exp(s)``) and properties.
def _refusing(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise refuse(name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}`` has no sparse COO kernel in compat (refuses)."
    return method


def _install_refusals() -> None:
    own = set(vars(SparseCooTensor))
    for name in dir(Tensor):
        if name.startswith("_") or name in own:
            continue
        if callable(getattr(Tensor, name, None)) and not isinstance(
            vars(Tensor).get(name), (property, type)
        ):
            setattr(SparseCooTensor, name, _refusing(name))


# ----------------------------------------------------------------------------- making


def _make(indices: Tensor, values: Tensor, size: Sequence[int], coalesced: bool) -> SparseCooTensor:
    t = _new_tensor(SparseCooTensor, None)
    t._st = _GUARD
    t._sp_indices = indices
    t._sp_values = values
    t._sp_size = tuple(int(s) for s in size)
    t._sp_coalesced = bool(coalesced)
    t._sp_grad = None
    return t


def _index_tensor(indices: Any, device: Any) -> Tensor:
    if _is_sparse(indices):
        raise refuse("sparse_coo_tensor (sparse indices)")
    if isinstance(indices, Tensor):
        if indices.is_floating_point() or indices.is_complex() or indices.dtype == _dt.bool:
            raise RuntimeError(f"indices must be an int64 tensor (got {indices.dtype})")
        return indices.detach().to(device=device, dtype=_dt.int64)
    arr = np.asarray(indices)
    if arr.dtype.kind not in "iu" and arr.size:
        raise RuntimeError(f"indices must be an int64 tensor (got a {arr.dtype} array)")
    return _ns.tensor(arr.astype(np.int64), device=device)


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Sequence[int] | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> SparseCooTensor:
    """``torch.sparse_coo_tensor``: a sparse tensor with these indices (``sparse_dim x nnz``)
    and values (``nnz x *dense shape``); ``size`` inferred from the indices when omitted.
    Indices are always checked against ``size`` (an out-of-range index would be dropped
    by XLA's scatter, not fault)."""
    if isinstance(values, Tensor):
        if _is_sparse(values):
            raise refuse("sparse_coo_tensor (sparse values)")
        vals = values if dtype is None and device is None else values.to(device=device, dtype=dtype)
    else:
        vals = _ns.tensor(values, dtype=dtype, device=device)
    idx = _index_tensor(indices, vals.device)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    sd, nnz = idx.shape
    if vals.ndim == 0:
        raise RuntimeError("values must have at least 1 dimension (nnz)")
    if vals.shape[0] != nnz:
        raise RuntimeError(
            "indices and values must have same nnz, but got nnz from indices: "
            f"{nnz}, nnz from values: {vals.shape[0]}"
        )
    ind = _values_np(idx)
    if nnz and ind.min() < 0:
        d = int(np.argmax((ind < 0).any(axis=1)))
        raise RuntimeError(f"found negative index {int(ind[d].min())} for dim {d}")
    dense_shape = tuple(vals.shape[1:])
    if size is None:
        sparse_shape = tuple(int(m) + 1 for m in ind.max(axis=1)) if nnz else (0,) * sd
        shape = sparse_shape + dense_shape
    else:
        shape = tuple(int(s) for s in size)
        if len(shape) != sd + len(dense_shape):
            raise RuntimeError(
                "'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                f"{len(shape)}, sparse_dim = {sd}, dense_dim = {len(dense_shape)}"
            )
        if shape[sd:] != dense_shape:
            raise RuntimeError(
                f"values has incorrect size, expected {list((nnz, *shape[sd:]))}, got "
                f"{list(vals.shape)}"
            )
        for d in range(sd):
            if nnz and int(ind[d].max()) >= shape[d]:
                raise RuntimeError(
                    f"size is inconsistent with indices: for dim {d}, size is {shape[d]} "
                    f"but found index {int(ind[d].max())}"
                )
    coalesced = nnz <= 1 if is_coalesced is None else bool(is_coalesced)
    if requires_grad:
        if vals.requires_grad and not vals.is_leaf:
            raise RuntimeError("sparse_coo_tensor(): values requiring grad with requires_grad=True")
        vals = vals.detach().requires_grad_(True)
    elif vals.requires_grad:  # a node of the sparse tensor's own between it and the values
        vals = apply(_same, "SparseCooTensorWithDimsAndTensorsBackward0", (vals,))
    return _make(idx, vals, shape, coalesced)


def _coalesce(indices: Tensor, values: Tensor, size: tuple) -> SparseCooTensor:
    sd = int(indices.shape[0])
    ind = _values_np(indices)
    if ind.shape[1] == 0:
        return _make(indices, values, size, True)
    lin = np.ravel_multi_index(tuple(ind), size[:sd]) if sd else np.zeros(ind.shape[1], np.int64)
    uniq, inverse = np.unique(lin, return_inverse=True)
    new_idx = np.stack(np.unravel_index(uniq, size[:sd])).astype(np.int64).reshape(sd, -1)
    seg = _ns.tensor(inverse.reshape(-1).astype(np.int64), device=values.device)
    st = (("n", int(uniq.size)),)
    vals = apply(_segment_sum_f, "CoalesceBackward0", (values, seg), st)
    return _make(_ns.tensor(new_idx, device=values.device), vals, size, True)


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None) -> Tensor:
    """``Tensor.to_sparse()``: the nonzeros of a dense tensor (in its first ``sparse_dim``
    dimensions: a slice with any nonzero is kept whole), coalesced; differentiable."""
    if _is_sparse(self):
        return SparseCooTensor.to_sparse(self, sparse_dim, layout=layout)
    if layout not in (None, sparse_coo):
        raise refuse(f"to_sparse (layout={layout!r})")
    sd = self.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= self.ndim:
        raise RuntimeError(
            f"sparse_dim argument must be in [0, {self.ndim}] range, but {sd} is given"
        )
    arr = _values_np(self)
    mask = arr != 0
    if sd < self.ndim:
        mask = mask.any(axis=tuple(range(sd, self.ndim)))
    ind = np.stack(np.nonzero(mask)).astype(np.int64).reshape(sd, -1)
    idx = _ns.tensor(ind, device=self.device)
    name = "ToSparseBackward1" if sparse_dim is None else "ToSparseBackward0"
    vals = apply(_gather_f, name, (self, idx))
    return _make(idx, vals, tuple(self.shape), True)


def to_sparse_coo(self: Tensor) -> Tensor:
    """``Tensor.to_sparse_coo()``: :func:`to_sparse`."""
    return to_sparse(self)


def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """``Tensor.to_dense()``: a dense tensor is returned as it is (cast with ``dtype``)."""
    if _is_sparse(self):
        return SparseCooTensor.to_dense(self, dtype)
    return self if dtype is None else self.to(dtype)


# ----------------------------------------------------------------------------- kernels
# (pure functions of arrays, traced once per avals by ``apply``; funcgrad differentiates)


def _to_dense_f(idx: Any, vals: Any, *, size: tuple, sd: int) -> Any:
    where = tuple(idx[d] for d in range(sd))
    return fnp.zeros(size, vals.dtype).at[where].add(vals)


def _gather_f(x: Any, idx: Any) -> Any:
    return x[tuple(idx[d] for d in range(idx.shape[0]))]


def _segment_sum_f(vals: Any, seg: Any, *, n: int) -> Any:
    return fnp.zeros((n, *vals.shape[1:]), vals.dtype).at[seg].add(vals)


def _at_indices(s: SparseCooTensor, dense: Tensor) -> Tensor:
    """``dense`` broadcast to ``s``'s shape, read at ``s``'s indices (``nnz x *dense shape``)."""
    try:
        full = dense.expand(*s._sp_size)
    except RuntimeError:
        raise RuntimeError(
            f"mul: a dense operand of shape {list(dense.shape)} does not broadcast to the "
            f"sparse operand's {list(s._sp_size)}"
        ) from None
    return apply(_gather_f, "IndexBackward0", (full, s._sp_indices))


def _scalar_operand(other: Any, op: str) -> Any:
    if isinstance(other, Tensor) and (_is_sparse(other) or other.ndim):
        raise refuse(f"{op} (a sparse tensor and a non-scalar tensor)")
    return other


def install() -> None:
    """The dense tensor's sparse conversions, and the sparse tensor's refusals (after
    :mod:`compat.torch._sparse_ops` installed its methods)."""
    Tensor.to_sparse = to_sparse
    Tensor.to_sparse_coo = to_sparse_coo
    Tensor.to_dense = to_dense
    _install_refusals()
