"""PyTorch's memory-overlap checks between the tensor an op writes and its inputs.

compat's arrays are immutable, so an op whose output shares memory with an input still
computes a defined result (as if the input had been cloned); PyTorch refuses such writes
(its kernels would read elements they already overwrote), and code written for it never
relies on them. These checks give PyTorch's errors where its ``TensorIterator`` and
indexing kernels give them: :func:`check_partial` (an input that overlaps the written
tensor in part, or lies on the same memory with other strides: the same memory with the
same layout is allowed) and :func:`check_none` (the index ops: any shared memory).
Tensors whose elements overlap each other (an ``expand``) or whose layout is not dense
are "too hard" to compare, as in PyTorch, and pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import views as _views
from compat._core.tensor import Tensor

__all__ = [
    "check_none",
    "check_partial",
    "check_setitem",
    "debug_has_internal_overlap",
    "internal_overlap",
]

NO, FULL, PARTIAL, TOO_HARD = range(4)

_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor "
    "refer to a single memory location. Please clone() the tensor before performing the "
    "operation."
)


def _dense(shape: tuple, strides: tuple) -> bool:
    """Whether the elements fill one block of memory, each once (some order of the dims
    is contiguous; dims of size 1 do not count)."""
    dims = sorted((s, n) for n, s in zip(shape, strides) if n != 1)
    expected = 1
    for s, n in dims:
        if s != expected:
            return False
        expected *= n
    return True


def internal_overlap(t: Tensor) -> bool:
    """Whether two elements of ``t`` share memory (a stride 0 over a dim of 2 or more)."""
    shape, strides, _ = _views.layout_of(t)
    return any(s == 0 and n > 1 for n, s in zip(shape, strides))


def debug_has_internal_overlap(input: Tensor) -> int:
    """``torch._debug_has_internal_overlap``: PyTorch's verdict on ``input``'s own
    elements: 0 (none: a dense block), 1 (some share memory: a stride 0 over a dim of 2 or
    more) or 2 (too hard to tell)."""
    shape, strides, _ = _views.layout_of(input)
    if _dense(shape, strides):
        return NO
    return 1 if internal_overlap(input) else 2


def _status(out: Tensor, t: Tensor) -> int:
    if out is t:
        return FULL
    if out._view is None and t._view is None:
        return NO  # two tensors with storages of their own
    if out.numel() == 0 or t.numel() == 0:
        return NO
    if _views.storage_key(out) != _views.storage_key(t):
        return NO
    (s1, st1, o1), (s2, st2, o2) = _views.layout_of(out), _views.layout_of(t)
    if not (_dense(s1, st1) and _dense(s2, st2)):
        return TOO_HARD
    b1, b2 = o1 * out.element_size(), o2 * t.element_size()
    e1, e2 = b1 + out.nbytes, b2 + t.nbytes
    if (b1, e1) == (b2, e2):
        return FULL if tuple(st1) == tuple(st2) else PARTIAL
    return PARTIAL if b1 < e2 and b2 < e1 else NO


def _tensors(args: Any) -> list:
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (tuple, list)):
            out += [x for x in a if isinstance(x, Tensor)]
    return out


def check_partial(out: Tensor, args: Any) -> None:
    """PyTorch's error for an input among ``args`` that overlaps ``out`` in part (or on the
    same memory with another layout): ``TensorIterator``'s check of in-place and ``out=``
    ops."""
    plain = out._view is None
    for t in args:
        if isinstance(t, Tensor):
            if t is out or (plain and t._view is None):
                continue  # (the common case, decided without the layouts)
            if _status(out, t) == PARTIAL:
                raise RuntimeError(_MESSAGE)
        elif isinstance(t, (tuple, list)):
            check_partial(out, t)


def check_none(out: Tensor, args: Any) -> None:
    """PyTorch's error for an input among ``args`` (an index, a source, a mask) that shares
    any memory with ``out``: the indexing ops' check."""
    for t in _tensors(args):
        if _status(out, t) in (FULL, PARTIAL):
            raise RuntimeError(_MESSAGE)


def _one_mask(idx: Any) -> bool:
    """Whether ``idx``'s one tensor index is a bool mask of 1 or more dims (the rest ints,
    slices, ``None`` or ``...``): PyTorch's ``x[idx] = value`` is a ``masked_fill_``."""
    items = idx if isinstance(idx, tuple) else (idx,)
    masks = [i for i in items if isinstance(i, Tensor)]
    others = [i for i in items if isinstance(i, (list, np.ndarray))]
    return len(masks) == 1 and not others and masks[0]._npdtype == np.bool_ and masks[0].ndim > 0


def check_setitem(self: Tensor, idx: Any, advanced: bool, value: Any, getitem: Any) -> None:
    """PyTorch's overlap errors for ``self[idx] = value``: an advanced index is
    ``index_put_`` (``value`` may share no memory with ``self``); a basic one writes the view
    ``self[idx]`` with ``copy_`` (a partial overlap refused). Only a ``value`` that is a
    view of ``self``'s memory is looked at."""
    if not isinstance(value, Tensor) or value._view is None:
        return
    if _views.storage_key(value) != _views.storage_key(self):
        return
    if value.ndim == 0 and (not advanced or _one_mask(idx)):
        # (PyTorch fills the view, or ``masked_fill_``s with a single bool mask, with a 0-d
        # value's number: read before written)
        return
    if advanced:
        check_none(self, (value,))
    else:
        check_partial(getitem(self, idx), (value,))
