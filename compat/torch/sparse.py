"""``torch.sparse``: products, sums and softmaxes of sparse COO tensors
(:mod:`compat.torch._sparse_coo` holds the layout and the kernels)."""

from __future__ import annotations

from typing import Any

from compat._core import dtypes as _dt
from compat._core.tensor import Tensor
from compat._core.warn_once import warn_once
from compat.torch import _sparse_coo
from compat.torch import _sparse_ops as _sp

__all__ = [
    "DoubleTensor",
    "FloatTensor",
    "LongTensor",
    "addmm",
    "log_softmax",
    "mm",
    "softmax",
    "sum",
]


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``sparse @ dense`` (or ``dense @ sparse``): a dense result; gradients reach the
    dense operand and the sparse operand's values."""
    if reduce != "sum":
        raise _sparse_coo.refuse(f"sparse.mm (reduce={reduce!r})")
    return _sp.sparse_mm(mat1, mat2, "sparse.mm")


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    return _sp.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:
    """The sum of a sparse tensor's entries, all (dense scalar) or over ``dim``."""
    if not isinstance(input, _sparse_coo.SparseCooTensor):
        raise RuntimeError("torch.sparse.sum: expected a sparse COO input")
    return _sp.sparse_sum(input, dim, dtype)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Softmax over ``dim`` of the specified entries (unspecified ones are ``-inf``)."""
    return _sp.sparse_softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``log`` of :func:`softmax`, computed stably."""
    return _sp.sparse_softmax(input, dim, dtype, log=True)


def _deprecated(form: str, modern: str) -> None:
    warn_once(
        f"sparse.SparseTensor({form})",
        f"torch.sparse.SparseTensor({form}, *, device=) is deprecated.  Please use "
        f"torch.sparse_coo_tensor({modern}, dtype=, device=).",
    )


def _legacy(dtype: _dt.dtype, name: str) -> Any:
    def make(*args: Any, device: Any = None) -> Tensor:
        if args and all(isinstance(a, int) for a in args):  # sizes: an empty tensor
            _deprecated("shape", "shape")
            empty = _sparse_coo.sparse_coo_tensor([[]] * len(args), [], args, dtype=dtype)
            return empty if device is None else empty.to(device)
        if len(args) not in (2, 3):
            raise TypeError(f"torch.sparse.{name}(): expected (indices, values[, size]) or sizes")
        form = "indices, values, shape" if len(args) == 3 else "indices, values"
        _deprecated(form, form)
        return _sparse_coo.sparse_coo_tensor(*args, dtype=dtype, device=device)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (
        f"PyTorch's legacy constructor ``torch.sparse.{name}(indices, values, size)`` (or "
        "sizes: empty), a sparse COO tensor of its dtype (``torch.sparse_coo_tensor``)."
    )
    return make


FloatTensor = _legacy(_dt.float32, "FloatTensor")
DoubleTensor = _legacy(_dt.float64, "DoubleTensor")
LongTensor = _legacy(_dt.int64, "LongTensor")
