"""The ``*_copy`` forms of view ops real code calls by name: ``narrow_copy`` and
``split_with_sizes_copy`` (PyTorch's copies of ``narrow``/``split_with_sizes``: contiguous
tensors sharing nothing with the input, recorded for autograd under their own node names).
"""

from __future__ import annotations

from typing import Any

from compat._core import dtypes as _dt
from compat._core.ops import selecting as _selecting
from compat._core.out_arg import write_out
from compat._core.shape_ops import _clone_f, split
from compat._core.tensor import Tensor, apply

__all__ = ["narrow_copy", "split_with_sizes_copy"]


def _copy_of(view: Tensor, name: str) -> Tensor:
    """A recorded copy of ``view`` (its own storage), under PyTorch's node ``name``."""
    return apply(_clone_f, name, (view,))


def narrow_copy(
    input: Tensor, dim: int, start: Any, length: int, *, out: Tensor | None = None
) -> Tensor:
    """``input.narrow(dim, start, length)`` as a new contiguous tensor (PyTorch's
    ``NarrowCopyBackward0``), written into ``out`` if given."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "narrow_copy(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    r = _copy_of(_selecting.narrow(input, dim, start, length), "NarrowCopyBackward0")
    return r if out is None else write_out("narrow_copy", r, out)


def split_with_sizes_copy(
    input: Tensor, split_sizes: Any, dim: int = 0, *, out: Any = None
) -> tuple | None:
    """``input.split_with_sizes(split_sizes, dim)`` as new contiguous tensors; with ``out``
    (a list of tensors, one per piece) they are written there and ``None`` returned, as
    PyTorch's."""
    pieces = split(input, list(split_sizes), dim)
    if out is None:
        return tuple(_copy_of(p, "SplitWithSizesBackward0_copy") for p in pieces)
    if len(out) != len(pieces):
        raise RuntimeError(
            f"split_with_sizes_copy_out expected an out= argument of size {len(pieces)}, got "
            f"size {len(out)}"
        )
    for p, o in zip(pieces, out):
        if isinstance(o, Tensor) and o._npdtype != p._npdtype:
            raise RuntimeError(
                f"Expected out tensor to have dtype {_dt.type_meta_name(p._npdtype)}, but got "
                f"{_dt.type_meta_name(o._npdtype)} instead"
            )
        write_out("split_with_sizes_copy", p.detach() if not p.requires_grad else p, o)
    return None
