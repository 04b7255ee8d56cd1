"""Ops on sparse COO tensors (:mod:`compat.torch._sparse_coo` holds the layout): products
with a dense operand as one gather + segment-sum program (``apply``, so funcgrad
differentiates them: gradients reach the dense operand and the sparse values), sparse and
dense sums, sums over dimensions, softmaxes over the specified entries; the ``torch.X``
functions that dispatch sparse operands here and the sparse tensor's methods."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import namespace as _ns
from compat._core.tensor import Tensor, _wrap_dim, apply
from compat.torch._sparse_coo import (
    SparseCooTensor,
    _coalesce,
    _is_sparse,
    _make,
    _segment_sum_f,
    _values_np,
    refuse,
    sparse_coo,
    sparse_coo_tensor,
)
from compat.torch._sparse_coo import install as _install_conversions
from funcgrad import numpy as fnp
from funcgrad.lax import stop_gradient

__all__ = [
    "add",
    "addmm",
    "install",
    "matmul",
    "mm",
    "sparse_mm",
    "sparse_softmax",
    "sparse_sum",
    "torch_functions",
]


# ----------------------------------------------------------------------------- kernels


def _spmm_f(idx: Any, vals: Any, dense: Any, *, rows: int) -> Any:
    """``sparse @ dense``: gather the dense rows the columns name, scale, sum per row."""
    picked = fnp.take(dense, idx[1], axis=0) * vals[:, None]
    return _segment_sum_f(picked, idx[0], n=rows)


def _dense_spmm_f(dense: Any, idx: Any, vals: Any, *, cols: int) -> Any:
    """``dense @ sparse``: the transposed product, as :func:`_spmm_f` of the transposes."""
    picked = fnp.take(dense, idx[0], axis=1).T * vals[:, None]
    return _segment_sum_f(picked, idx[1], n=cols).T


def _sparse_softmax_f(vals: Any, seg: Any, *, n: int, log: bool) -> Any:
    top = fnp.full((n, *vals.shape[1:]), -fnp.inf, vals.dtype).at[seg].max(vals)
    top = stop_gradient(top)
    shifted = vals - top[seg]
    total = _segment_sum_f(fnp.exp(shifted), seg, n=n)[seg]
    return shifted - fnp.log(total) if log else fnp.exp(shifted) / total


# ----------------------------------------------------------------------------- ops


def _check_mm(a: Any, b: Any, name: str) -> None:
    sp = a if _is_sparse(a) else b
    if sp.sparse_dim() != 2 or sp.dense_dim():
        raise RuntimeError(f"{name}: expected a 2-D sparse tensor with 0 dense dimensions")
    if _is_sparse(a) and _is_sparse(b):
        raise refuse(f"{name} (sparse @ sparse)")
    other = b if sp is a else a
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'mat2' must be Tensor, not {type(other).__name__}")
    if other.ndim != 2:
        raise RuntimeError(f"{name}: expected 2D matrix, got {other.ndim}D tensor")
    if a.shape[1] != b.shape[0]:  # (PyTorch's kernel's words; dense @ sparse is transposed)
        want, got = (a.shape[1], b.shape[0]) if sp is a else (b.shape[0], a.shape[1])
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {want}, got {got}")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {_dt.scalar_type_name(sp._npdtype)} but found "
            f"{_dt.scalar_type_name(other._npdtype)}"
        )


def sparse_mm(mat1: Any, mat2: Any, name: str = "mm") -> Tensor:
    """``sparse @ dense`` or ``dense @ sparse``: a dense result, differentiable in the
    dense operand and the sparse operand's values."""
    _check_mm(mat1, mat2, name)
    if _is_sparse(mat1):
        st = (("rows", int(mat1.shape[0])),)
        return apply(_spmm_f, "MmBackward0", (mat1._sp_indices, mat1._sp_values, mat2), st)
    st = (("cols", int(mat2.shape[1])),)
    return apply(_dense_spmm_f, "MmBackward0", (mat1, mat2._sp_indices, mat2._sp_values), st)


def mm(input: Any, mat2: Any) -> Tensor:
    """``torch.mm`` with a sparse operand."""
    return sparse_mm(input, mat2, "mm")


def matmul(input: Any, other: Any) -> Tensor:
    """``torch.matmul``/``@`` with a sparse operand (2-D by 2-D)."""
    return sparse_mm(input, other, "matmul")


def addmm(input: Tensor, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` or ``mat2``."""
    if _is_sparse(input):
        raise refuse("addmm (a sparse input)")
    prod = sparse_mm(mat1, mat2, "addmm")
    if alpha != 1:
        prod = prod * alpha
    return prod + (input if beta == 1 else input * beta)


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``sparse + sparse`` (sparse; coalesced when both are) and ``dense + sparse``
    (dense: the values added at their indices; ``sparse + dense`` refuses, as PyTorch)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise refuse("add (a sparse tensor and a number)")
    if tuple(input.shape) != tuple(other.shape):
        raise RuntimeError(
            f"add: expected 'self' and 'other' to have same size, but self has size "
            f"{list(input.shape)} while other has size {list(other.shape)}"
        )
    if _is_sparse(other):
        ovals = other._sp_values if alpha == 1 else other._sp_values * alpha
    if _is_sparse(input) and _is_sparse(other):
        if input.sparse_dim() != other.sparse_dim():
            raise RuntimeError("add: expected the same number of sparse dimensions")
        dtype = _ns.promote_types(input.dtype, other.dtype)
        idx = _ns.cat([input._sp_indices, other._sp_indices], 1)
        vals = _ns.cat([input._sp_values.to(dtype), ovals.to(dtype)], 0)
        both = input._sp_coalesced and other._sp_coalesced
        return (
            _coalesce(idx, vals, input._sp_size)
            if both
            else _make(idx, vals, input._sp_size, False)
        )
    if _is_sparse(input):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    dtype = _ns.promote_types(input.dtype, other.dtype)
    where = tuple(other._sp_indices[d] for d in range(other.sparse_dim()))
    return _ns.index_put(input.to(dtype), where, ovals.to(dtype), accumulate=True)


def _groups(s: SparseCooTensor, keep: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct index tuples of ``s`` over the sparse dims ``keep`` and each entry's group."""
    ind = _values_np(s._sp_indices)[list(keep)]
    if not keep or ind.shape[1] == 0:
        return np.zeros((len(keep), 1 if ind.shape[1] else 0), np.int64), np.zeros(
            ind.shape[1], np.int64
        )
    shape = tuple(s._sp_size[d] for d in keep)
    uniq, inverse = np.unique(np.ravel_multi_index(tuple(ind), shape), return_inverse=True)
    return np.stack(np.unravel_index(uniq, shape)).reshape(len(keep), -1), inverse.reshape(-1)


def sparse_sum(input: SparseCooTensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """``torch.sparse.sum``: all of it (a dense scalar), or over ``dim``: sparse while a
    sparse dimension remains, else dense."""
    vals = input._sp_values if dtype is None else input._sp_values.to(dtype)
    if dim is None:
        return vals.sum()
    dims = sorted({_wrap_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)})
    sd = input.sparse_dim()
    dense_axes = [d - sd + 1 for d in dims if d >= sd]
    if dense_axes:
        vals = vals.sum(dim=dense_axes)
    keep = [d for d in range(sd) if d not in dims]
    if len(keep) == sd:  # only dense dimensions summed
        size = tuple(s for d, s in enumerate(input._sp_size) if d not in dims)
        return _make(input._sp_indices, vals, size, input._sp_coalesced)
    if not keep:
        return vals.sum(dim=0)
    new_idx, seg = _groups(input, keep)
    st = (("n", int(new_idx.shape[1])),)
    seg_t = _ns.tensor(seg, device=vals.device)
    out = apply(_segment_sum_f, "SumBackward1", (vals, seg_t), st)
    size = tuple(s for d, s in enumerate(input._sp_size) if d not in dims)
    return _make(_ns.tensor(new_idx.astype(np.int64), device=vals.device), out, size, True)


def sparse_softmax(
    input: SparseCooTensor, dim: int, dtype: Any = None, log: bool = False
) -> Tensor:
    """``torch.sparse.softmax``/``log_softmax`` over ``dim``: over the specified entries
    only (unspecified ones count as ``-inf``); the result keeps the pattern, coalesced."""
    if not _is_sparse(input):
        raise RuntimeError("sparse softmax: expected a sparse COO input")
    s = input.coalesce()
    vals = s._sp_values if dtype is None else s._sp_values.to(dtype)
    d = _wrap_dim(dim, s.ndim)
    sd = s.sparse_dim()
    if d >= sd:  # a dense dimension: an ordinary softmax of the values
        fn = "log_softmax" if log else "softmax"
        return s._with_values(getattr(vals, fn)(d - sd + 1))
    _, seg = _groups(s, [k for k in range(sd) if k != d])
    n = int(seg.max()) + 1 if seg.size else 0
    st = (("n", n), ("log", log))
    seg_t = _ns.tensor(seg, device=vals.device)
    name = "LogSoftmaxBackward0" if log else "SoftmaxBackward0"
    return s._with_values(apply(_sparse_softmax_f, name, (vals, seg_t), st))


def _dispatching(
    dense: Callable[..., Any], sparse: Callable[..., Any], n: int
) -> Callable[..., Any]:
    """``dense`` unless one of the first ``n`` arguments is sparse, then ``sparse``."""

    @functools.wraps(dense)
    def f(*args: Any, **kwargs: Any) -> Any:
        for a in args[:n]:
            if isinstance(a, SparseCooTensor):
                return sparse(*args, **kwargs)
        return dense(*args, **kwargs)

    return f


def torch_functions(ns: dict[str, Any]) -> dict[str, Any]:
    """The ``torch.X`` functions that take sparse operands (those of ``ns`` wrapped)."""
    return {
        "sparse_coo": sparse_coo,
        "sparse_coo_tensor": sparse_coo_tensor,
        "mm": _dispatching(ns["mm"], mm, 2),
        "matmul": _dispatching(ns["matmul"], matmul, 2),
        "addmm": _dispatching(ns["addmm"], addmm, 3),
        "add": _dispatching(ns["add"], add, 2),
        "spmm": mm,
    }


# ----------------------------------------------------------------------------- methods


def _m_add_(self: SparseCooTensor, other: Any) -> Tensor:
    return add(self, other)


def _m_radd(self: SparseCooTensor, other: Any) -> Tensor:
    return add(other, self)


def _m_add(self: SparseCooTensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return add(self, other, alpha=alpha)


def _m_sub_(self: SparseCooTensor, other: Any) -> Tensor:
    return add(self, other, alpha=-1)


def _m_rsub(self: SparseCooTensor, other: Any) -> Tensor:
    return add(other, self, alpha=-1)


def _m_sub(self: SparseCooTensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return add(self, other, alpha=-alpha)


def _m_matmul_(self: SparseCooTensor, other: Any) -> Tensor:
    return matmul(self, other)


def _m_rmatmul(self: SparseCooTensor, other: Any) -> Tensor:
    return matmul(other, self)


def _m_mm(self: SparseCooTensor, mat2: Any) -> Tensor:
    return mm(self, mat2)


def _m_matmul(self: SparseCooTensor, other: Any) -> Tensor:
    return matmul(self, other)


def _m_sum(
    self: SparseCooTensor, dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Tensor:
    if keepdim:
        raise refuse("sum.dim_IntList (keepdim=True)")
    if dim is None:
        return self._sp_values.sum(dtype=dtype)
    return sparse_sum(self, dim, dtype)


_METHODS = {
    "__add__": _m_add_,
    "__radd__": _m_radd,
    "add": _m_add,
    "__sub__": _m_sub_,
    "__rsub__": _m_rsub,
    "sub": _m_sub,
    "__matmul__": _m_matmul_,
    "__rmatmul__": _m_rmatmul,
    "mm": _m_mm,
    "matmul": _m_matmul,
    "sum": _m_sum,
}


def install() -> None:
    """The sparse tensor's methods that are these ops, then its conversions and refusals."""
    for name, f in _METHODS.items():
        f.__name__ = f.__qualname__ = name
        setattr(SparseCooTensor, name, f)
    _install_conversions()
