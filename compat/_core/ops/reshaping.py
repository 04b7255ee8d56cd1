"""Reshaping and rearranging ops as op-table rows: ``ravel``, ``swapaxes``, ``unflatten``,
splits by direction (``vsplit``, ``hsplit``, ``dsplit``,
``split_with_sizes``) and ``unfold`` windows."""

from __future__ import annotations

import builtins
import math
from typing import Any

from compat._core import views as _views
from compat._core.ops.selecting import tensor_split
from compat._core.optable import Sample, defop
from compat._core.shape_ops import reshape, split, transpose
from compat._core.tensor import Tensor, _wrap_dim, apply


@defop(out=False, node_name=False, samples=Sample(((2, 3),)))
def ravel(input: Tensor) -> Tensor:
    """``input.contiguous().view(-1)``: a view of a contiguous input, else a copy (a
    non-contiguous 1-D input too, which ``reshape`` would return as it is)."""
    return reshape(input.contiguous(), -1)


# (NumPy's keyword names: ``swapdims`` is ``transpose``'s alias, ``dim0``/``dim1``)
@defop(out=False, samples=Sample(((2, 3, 2),), args=(0, 2)))
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return transpose(input, axis0, axis1)


# (``Tensor.unflatten`` is Python in PyTorch: no ``axis=``)
@defop(
    out=False,
    node_name=False,
    samples=Sample(((2, 6),), args=(1, (2, 3))),
    numpy_names=("function",),
)
def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    axis = _wrap_dim(dim, input.ndim)
    sizes = list(sizes)
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = input.shape[axis] // known
    if math.prod(sizes) != input.shape[axis]:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({input.shape[axis]}) in the input tensor"
        )
    shape = (*input.shape[:axis], *sizes, *input.shape[axis + 1 :])
    return reshape(input, *shape)


def _dir_split(input: Tensor, sections: Any, dim: int, name: str, min_dim: int) -> tuple:

    if input.ndim < min_dim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a "
            f"tensor with {input.ndim} dimensions!"
        )
    if isinstance(sections, int) and input.shape[dim] % sections:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {input.shape[dim]} is not divisible by the split_size {sections}!"
        )
    return tensor_split(input, sections, dim)


@defop(out=False, overloads=True, node_name=False, samples=Sample(((4, 2),), args=(2,)))
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    return _dir_split(input, indices_or_sections, 0, "vsplit", 2)


@defop(
    out=False,
    overloads=True,
    node_name=False,
    samples=(Sample(((2, 4),), args=(2,)), Sample(((6,),), args=([1, 4],))),
)
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    return _dir_split(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


@defop(out=False, overloads=True, node_name=False, samples=Sample(((2, 2, 4),), args=(2,)))
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    return _dir_split(input, indices_or_sections, 2, "dsplit", 3)


@defop(function=False, node_name=False, samples=Sample(((5, 2),), args=([2, 3],)))
def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    return split(input, list(split_sizes), dim)


def _unfold_f(x: Any, *, axis: int, size: int, step: int) -> Any:
    return _views.unfold_windows(x, axis, size, step)


@defop(
    function=False,
    node_name=False,
    samples=(Sample(((7,),), args=(0, 2, 1)), Sample(((3, 6),), args=(1, 3, 2))),
)
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Windows of ``size`` elements every ``step`` along ``dimension``, as a new last dim:
    a view of ``input`` (overlapping windows share its elements)."""
    axis = _wrap_dim(dimension, builtins.max(input.ndim, 1))
    if size > input.shape[axis]:
        raise RuntimeError(
            f"maximum size for tensor at dimension {axis} is {input.shape[axis]} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    st = (("axis", axis), ("size", int(size)), ("step", int(step)))
    out = apply(_unfold_f, "UnfoldBackward0", (input,), st)
    if input.ndim == 0:
        return out
    return _views.make_view(out, input, ("uf", axis, int(size), int(step)))
