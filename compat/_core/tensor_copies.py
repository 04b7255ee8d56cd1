"""The ``*_copy`` forms of view ops that are no op-table row: ``narrow_copy`` and the
multi-output ``split_copy``, ``split_with_sizes_copy``, ``unbind_copy`` (PyTorch's copies
of ``narrow``/``split``/``unbind``: contiguous tensors sharing nothing with the input,
recorded for autograd under their own node names; ``out=`` a list for the multi-output
ones). The single-output copies are rows: :mod:`compat._core.ops.view_copies`.
"""

from __future__ import annotations

from typing import Any

from compat._core import dtypes as _dt
from compat._core.ops import selecting as _selecting
from compat._core.out_arg import write_out
from compat._core.shape_ops import _clone_f, split, unbind
from compat._core.tensor import Tensor, apply

__all__ = ["narrow_copy", "split_copy", "split_with_sizes_copy", "unbind_copy"]


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


def _pieces_copied(name: str, pieces: tuple, node: str, out: Any, kernel: str = "") -> tuple | None:
    """The copies of a multi-output view op's ``pieces`` under ``node``; with ``out`` (a
    list of tensors, one per piece) written there and ``None`` returned, as PyTorch's
    (whose count error names the ``kernel``)."""
    if out is None:
        return tuple(_copy_of(p, node) for p in pieces)
    if len(out) != len(pieces):
        raise RuntimeError(
            f"{kernel or name + '_out'} expected an out= argument of size {len(pieces)}, got "
            f"size {len(out)}"
        )
    for p, o in zip(pieces, out):
        if isinstance(o, Tensor) and o._npdtype != p._npdtype:
            raise RuntimeError(
                f"Expected out tensor to have dtype {_dt.type_meta_name(p._npdtype)}, but got "
                f"{_dt.type_meta_name(o._npdtype)} instead"
            )
        write_out(name, p.detach() if not p.requires_grad else p, o)
    return None


def split_with_sizes_copy(
    input: Tensor, split_sizes: Any, dim: int = 0, *, out: Any = None
) -> tuple | None:
    """``input.split_with_sizes(split_sizes, dim)`` as new contiguous tensors; with ``out``
    (a list of tensors, one per piece) they are written there and ``None`` returned, as
    PyTorch's."""
    pieces = split(input, list(split_sizes), dim)
    return _pieces_copied("split_with_sizes_copy", pieces, "SplitWithSizesBackward0_copy", out)


def split_copy(input: Tensor, split_size: Any, dim: int = 0, *, out: Any = None) -> tuple | None:
    """``input.split(split_size, dim)`` as new contiguous tensors (``out`` as
    :func:`split_with_sizes_copy`'s)."""
    pieces = split(input, split_size, dim)
    return _pieces_copied(
        "split_copy", pieces, "SplitBackward0_copy", out, "split_copy_Tensor_out()"
    )


def unbind_copy(input: Tensor, dim: int = 0, *, out: Any = None) -> tuple | None:
    """``input.unbind(dim)`` as new contiguous tensors (``out`` as
    :func:`split_with_sizes_copy`'s)."""
    pieces = unbind(input, dim)
    return _pieces_copied("unbind_copy", pieces, "UnbindBackward0_copy", out, "unbind_copy_int_out")
