"""Which node PyTorch records for an indexed write ``x[idx] = value``, from the index's
spec (``shape_ops.index_spec``): the write of ``x`` itself, of a view of it
(``CopySlices``) or a scatter (``IndexPutBackward0``)."""

from __future__ import annotations

import builtins
from typing import Any


def basic(spec: tuple) -> bool:
    """Basic indexing (slices, integers, ``None``, ``...``): PyTorch returns a view."""
    return builtins.all(s[0] != "a" for s in spec)


def sliced(spec: tuple) -> bool:
    """Whether PyTorch takes a view before writing the advanced indices (an integer, a
    ``None`` or a slice that is not all of its dim): the write is then ``CopySlices``."""
    full = ((None, None, None), (None, None, 1), (0, None, None), (0, None, 1))
    return builtins.any(s[0] in "dn" or (s[0] == "s" and s[1:] not in full) for s in spec)


def whole(spec: tuple, shape: tuple) -> bool:
    """Whether the index is every element (``x[...]``, ``x[:]``, ``x[()]``, slices over
    whole dims): PyTorch then writes ``x`` itself, not a view of it."""
    return builtins.all(
        s[0] == "s" and slice(s[1], s[2], s[3]).indices(n) == (0, n, 1) for s, n in zip(spec, shape)
    )


def setitem_node(spec: tuple, shape: tuple, value: Any) -> str:
    """The node of ``x[idx] = value``: ``fill_`` of a 0-d value or ``copy_`` of a tensor
    into all of ``x``; ``CopySlices`` for a view's write; ``IndexPutBackward0``."""
    if whole(spec, shape):
        if getattr(value, "ndim", 0) == 0:
            return "FillBackward3"
        return "torch::autograd::CopyBackwards"
    if basic(spec) or sliced(spec):
        return "torch::autograd::CopySlices"
    return "IndexPutBackward0"
