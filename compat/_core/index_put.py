"""``put``/``put_`` (writes at flat indices) and ``index_put``/``index_put_`` (writes at
advanced indices), with PyTorch's ``accumulate=True``: repeated indices add up.

Both are built from ops that record for autograd: a flat ``scatter``/``scatter_add`` of
the reshaped tensor, the positions of an advanced index found by indexing a tensor of
flat positions; the in-place forms copy the result into ``self``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import creation as _cr
from compat._core import dtypes as _dt
from compat._core import index_bools as _index_bools
from compat._core import overlap as _overlap
from compat._core.tensor import Tensor

__all__ = ["index_put", "index_put_", "masked_fill_check", "put", "put_", "setitem_dtype_check"]


def _flat_index(index: Tensor, n: int) -> Tensor:
    """``index`` as 1-D positions in ``[0, n)`` (negative ones counted from the end)."""
    idx = np.asarray(index.detach().numpy()).reshape(-1)
    bad = (idx >= n) | (idx < -n)
    if bad.any():
        raise IndexError(
            f"out of range: tried to access index {int(idx[bad][0])} on a tensor of {n} elements."
        )
    return _cr.tensor(np.where(idx < 0, idx + n, idx), dtype=_dt.int64)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source``'s values written at the flat positions
    ``index`` (row-major, as if ``input`` were 1-D); added to them if ``accumulate``."""
    if index.dtype != _dt.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_name(index)}")
    if source.dtype != input.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_name(input)} and source.dtype = {_name(source)}"
        )
    if source.numel() != index.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    flat = input.reshape(-1)
    idx = _flat_index(index, flat.numel())
    src = source.reshape(-1)
    out = flat.scatter_add(0, idx, src) if accumulate else flat.scatter(0, idx, src)
    return out.reshape(input.shape)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """:func:`put` in place (the index and source may share no memory with ``self``)."""
    _overlap.check_none(self, (index, source))
    return self.copy_(put(self, index, source, accumulate))


def index_put(
    input: Tensor, indices: tuple | list, values: Tensor, accumulate: bool = False
) -> Tensor:
    """A copy of ``input`` with ``values`` written at ``input[indices]`` (an advanced
    index: a tuple of integer or bool tensors), added to what is there if ``accumulate``
    (repeated positions add up)."""
    if not isinstance(values, Tensor):
        values = _cr.tensor(values, dtype=input.dtype)
    if values.dtype != input.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_name(input)} for the destination and {_name(values)} for the source."
        )
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 1, but got {type(t).__name__}"
            )
    _index_bools.check_uint8_fill(tuple(indices), values)
    positions = _cr.tensor(np.arange(input.numel(), dtype=np.int64).reshape(tuple(input.shape)))
    picked = positions[tuple(indices)]  # (once: a uint8 mask warns once, as PyTorch's)
    where = picked.reshape(-1)
    src = values.expand(picked.shape).reshape(-1)
    flat = input.reshape(-1)
    # (a scatter's derivative gives each written value its position's gradient, repeated
    # positions included, as PyTorch's IndexPutBackward0)
    out = flat.scatter_add(0, where, src) if accumulate else flat.scatter(0, where, src)
    return out.reshape(input.shape)


def index_put_(
    self: Tensor, indices: tuple | list, values: Tensor, accumulate: bool = False
) -> Tensor:
    """:func:`index_put` in place (the indices and values may share no memory with
    ``self``)."""
    _overlap.check_none(self, (*indices, values))
    if _index_bools.overlapping(self):
        if accumulate:  # (PyTorch adds each write to the memory place it reaches)
            raise RuntimeError(
                "compat: index_put_(accumulate=True) on an expanded tensor is not supported; "
                "clone() the tensor first"
            )
        self[tuple(indices)] = values  # (PyTorch's warning, and the write)
        return self
    return self.copy_(index_put(self, indices, values, accumulate))


def _name(t: Tensor) -> str:
    return _dt.scalar_type_name(t._npdtype)


def setitem_dtype_check(self: Tensor, idx: Any, advanced: bool, value: Tensor) -> None:
    """PyTorch's refusal of a Tensor value of another dtype written through an advanced
    index (its ``index_put_``; compat cast it), except a one-element value under a single
    bool mask, which PyTorch's ``index_put_`` hands to ``masked_fill_`` (a cast)."""
    if not advanced:
        return  # basic indexing: a view, then copy_ (which casts)
    items = idx if isinstance(idx, tuple) else (idx,)
    adv = [
        it
        for it in items
        if isinstance(it, (list, np.ndarray)) or (isinstance(it, Tensor) and it.ndim > 0)
    ]
    if len(adv) == 1 and value.numel() == 1:
        kind = adv[0]._npdtype if isinstance(adv[0], Tensor) else np.asarray(adv[0]).dtype
        if kind == np.bool_:
            return
    raise RuntimeError(
        "Index put requires the source and destination dtypes match, got "
        f"{_name(self)} for the destination and {_name(value)} for the source."
    )


def masked_fill_check(mask: Any, value: Any) -> None:
    """PyTorch's ``masked_fill`` errors: the mask must be bool, a value tensor 0-d (compat
    filled by a non-bool mask, and broadcast a value tensor of 1+ dims)."""
    if isinstance(mask, Tensor) and mask._npdtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_dt.type_meta_name(mask._npdtype)}"
        )
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )
