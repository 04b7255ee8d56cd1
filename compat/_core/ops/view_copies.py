"""PyTorch's ``*_copy`` view ops as op-table rows (``torch.view_copy``,
``torch.diagonal_copy``, ``torch.slice_copy``, ...): the view op's result as a new
contiguous tensor that shares nothing with its input, recorded for autograd under the
view node's name with ``_copy`` appended (``ViewBackward0_copy``), with ``out=``.
PyTorch generates them for functionalization; code and tests call them by name.
``narrow_copy`` and the multi-output copies live in :mod:`compat._core.tensor_copies`."""

from __future__ import annotations

from typing import Any

from compat._core import dtypes as _dt
from compat._core import restride as _restride
from compat._core import shape_ops as _shape
from compat._core.ops import reshaping as _reshaping
from compat._core.ops import selecting as _selecting
from compat._core.ops import spectral as _spectral
from compat._core.optable import Sample, defop
from compat._core.shape_ops import _clone_f
from compat._core.tensor import Tensor, _wrap_dim, apply

#: the rows' options: a ``torch`` function with ``out=``, no Tensor method (PyTorch has none)
_ROW: dict[str, Any] = {"method": False}


def _copy(view: Tensor, node: str) -> Tensor:
    """``view``'s value in memory of its own, recorded as PyTorch's ``node``."""
    return apply(_clone_f, node, (view,))


@defop(**_ROW, samples=(Sample(((2, 3),), args=((3, 2),)), Sample(((6,),), args=((2, -1),))))
def view_copy(input: Tensor, size: Any) -> Tensor:
    """``input.view(size)`` copied (PyTorch reshapes a non-contiguous input: no stride
    error), or ``input.view(dtype)`` copied."""
    if isinstance(size, _dt.dtype):
        return _copy(_shape.view(input, size), "ViewBackward0_copy")
    return _copy(_shape.reshape(input, size), "ViewBackward0_copy")


@defop(
    **_ROW,
    samples=(
        Sample(((3, 4),)),
        Sample(((2, 3, 3),), kwargs=(("offset", -1), ("dim1", 1), ("dim2", 2))),
    ),
)
def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _copy(_selecting.diagonal(input, offset, dim1, dim2), "DiagonalBackward0_copy")


@defop(
    **_ROW,
    samples=(Sample(((4, 3),), args=(0, 1, 3)), Sample(((4, 5),), args=(1, -4, None, 2))),
)
def slice_copy(
    input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    """``input`` sliced ``start:end:step`` along ``dim``, copied."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    axis = _wrap_dim(dim, input.ndim)
    idx = (slice(None),) * axis + (slice(start, end, step),)
    return _copy(input[idx], "SliceBackward0_copy")


@defop(**_ROW, samples=Sample(((4, 3),), args=(1, -1)))
def select_copy(input: Tensor, dim: int, index: int) -> Tensor:
    return _copy(_selecting.select(input, dim, index), "SelectBackward0_copy")


@defop(**_ROW, samples=Sample(((3, 1),), args=((2, 3, 4),)))
def expand_copy(input: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    return _copy(_shape.expand(input, *size), "ExpandBackward0_copy")


@defop(**_ROW, samples=Sample(((2, 3, 4),), args=((2, 0, 1),)))
def permute_copy(input: Tensor, dims: Any) -> Tensor:
    return _copy(_shape.permute(input, *dims), "PermuteBackward0_copy")


@defop(**_ROW, samples=Sample(((2, 3, 4),), args=(0, -1)))
def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return _copy(_shape.transpose(input, dim0, dim1), "TransposeBackward0_copy")


@defop(**_ROW, samples=Sample(((2, 3),)))
def t_copy(input: Tensor) -> Tensor:
    return _copy(_shape.t(input), "TBackward0_copy")


@defop(**_ROW, samples=Sample(((2, 3),), args=(1,)))
def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    return _copy(_shape.unsqueeze(input, dim), "UnsqueezeBackward0_copy")


@defop(
    **_ROW,
    samples=(
        Sample(((1, 3, 1),)),
        Sample(((1, 3, 1),), args=(2,)),
        Sample(((1, 3, 1),), args=((0, 2),)),
    ),
)
def squeeze_copy(input: Tensor, dim: Any = None) -> Tensor:
    # (PyTorch's node numbers: 0 for all dims, 1 for one, 2 for a list of dims)
    n = 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1
    return _copy(_shape.squeeze(input, dim), f"SqueezeBackward{n}_copy")


@defop(**_ROW, samples=Sample(((2, 3),), args=((2, 2), (1, 2))))
def as_strided_copy(
    input: Tensor, size: Any, stride: Any, storage_offset: int | None = None
) -> Tensor:
    view = _restride.as_strided(input, size, stride, storage_offset)
    return _copy(view, "AsStridedBackward0_copy")


@defop(**_ROW, samples=Sample(((2, 3),)))
def alias_copy(input: Tensor) -> Tensor:
    return _copy(input.view_as(input), "AliasBackward0_copy")


@defop(**_ROW, samples=Sample(((7,),), args=(0, 3, 2)))
def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    return _copy(_reshaping.unfold(input, dimension, size, step), "UnfoldBackward0_copy")


@defop(**_ROW, samples=Sample(((2, 3),), dtype="complex128", grad=False))
def view_as_real_copy(input: Tensor) -> Tensor:
    return _copy(_spectral.view_as_real(input), "ViewAsRealBackward0_copy")


@defop(**_ROW, samples=Sample(((3, 2),), grad=False))
def view_as_complex_copy(input: Tensor) -> Tensor:
    return _copy(_spectral.view_as_complex(input), "ViewAsComplexBackward0_copy")
