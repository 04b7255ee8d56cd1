"""Torch linear algebra: ``matmul`` and its 2-D/batched/vector forms, ``einsum``,
``linear``."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import _c, acc
from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp


def _matmul_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.matmul(_c(x, dtype), _c(y, dtype))


@defop(samples=(Sample(((2, 3), (3, 4))), Sample(((3, 4), (4,))), Sample(((2, 3, 4), (4, 2)))))
def matmul(input: Tensor, other: Tensor) -> Tensor:
    return _matmul(input, other, None)


def _matmul(input: Tensor, other: Tensor, name: str | None) -> Tensor:
    a, b = input._st.a, other._st.a  # (their shapes and dtypes, read once)
    sa, sb = a.shape, b.shape
    nd = (len(sa), len(sb))
    if nd[0] == 0 or nd[1] == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {nd[0]}D and {nd[1]}D"
        )
    dt = a.dtype
    if dt != b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {input.dtype} != {other.dtype}"
        )
    if name is None:
        name = _MATMUL_NODES.get(
            nd, "MatmulBackward0" if builtins.max(nd) < 3 else "UnsafeViewBackward0"
        )
    if sa[-1] != sb[0 if nd[1] == 1 else -2]:
        a, b = tuple(sa), tuple(sb)
        if nd == (2, 2):
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})"
            )
        raise RuntimeError(f"matmul: shapes {list(a)} and {list(b)} are not aligned")
    return apply(_matmul_f, name, (input, other), (("dtype", dt),))


_MATMUL_NODES = {(1, 1): "DotBackward0", (2, 2): "MmBackward0", (2, 1): "MvBackward0"}


@defop(samples=Sample(((2, 3), (3, 2))))
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    return matmul(input, mat2)


@defop(samples=Sample(((2, 2, 3), (2, 3, 2))))
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    return _matmul(input, mat2, "BmmBackward0")


@defop(samples=Sample(((2, 3), (3,))))
def mv(input: Tensor, vec: Tensor) -> Tensor:
    return matmul(input, vec)


@defop(samples=Sample(((3,), (3,))))
def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The inner product of two 1-D tensors (PyTorch names the second ``tensor``)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"dot(): argument 'tensor' (position 2) must be Tensor, not {type(tensor).__name__}"
        )
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    return matmul(input, tensor)


def _einsum_f(*xs: Any, eq: str) -> Any:
    return fnp.einsum(eq, *xs)


@defop(
    out=False,
    method=False,
    node_name=False,
    samples=Sample(((2, 3), (3, 4)), method=False, prefix=("ij,jk->ik",)),
)
def einsum(equation: str, *operands: Any) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return apply(_einsum_f, "EinsumBackward0", operands, (("eq", equation),))


def _linear_f(x: Any, w: Any, *b: Any) -> Any:
    out = fnp.result_type(x, w, *b)
    a = acc(out)  # float16/bfloat16: accumulate, add the bias, round once
    y = fnp.matmul(_c(x, a), fnp.transpose(_c(w, a)))
    return (y + _c(b[0], a) if b else y).astype(out)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` as one op (one node in the graph)."""
    args = (input, weight) if bias is None else (input, weight, bias)
    return apply(_linear_f, "AddmmBackward0" if bias is not None else "MmBackward0", args)


def _inner_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.inner(_c(x, dtype), _c(y, dtype))


@defop(node_name=False, samples=(Sample(((2, 3), (4, 3))), Sample(((3,), (3,)))))
def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum product over the last dimensions (a product where either tensor is 0-d)."""
    if input._npdtype != other._npdtype:
        raise RuntimeError("both inputs should have same dtype")
    scalar = input.ndim == 0 or other.ndim == 0
    if not scalar and input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    if not scalar and input._npdtype == np.bool_:  # (PyTorch's dot or mm kernel refuses)
        kernel = "dot" if input.ndim == other.ndim == 1 else "addmm_impl_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    # (PyTorch's node: its product of a 0-d tensor, else the view of its tensordot)
    node = "MulBackward0" if scalar else "ViewBackward0"
    return apply(_inner_f, node, (input, other), (("dtype", input._npdtype),))


def _vdot_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.vdot(_c(x, dtype), _c(y, dtype))


@defop(node_name=False, samples=Sample(((3,), (3,))))
def vdot(input: Tensor, other: Tensor) -> Tensor:
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input._npdtype != other._npdtype:
        kinds = (_dt.scalar_type_name(x._npdtype) for x in (input, other))
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found {} and {}".format(*kinds)
        )
    if input._npdtype == np.bool_:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    n, m = input.shape[0], other.shape[0]
    if n != m:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively"
        )
    return apply(_vdot_f, "VdotBackward0", (input, other), (("dtype", input._npdtype),))
