"""PyTorch's readings of boolean indices that NumPy's rules do not cover.

* A bool scalar in an index (``x[True]``, ``x[False, ...]``, a 0-d bool or ``uint8``
  tensor) adds a dim of size 1 at its place, indexed by ``[0]`` (``True``) or by an empty
  index (``False``): an advanced index, so the result is a copy. :func:`bool_scalars`
  rewrites such an index into that form.
* A ``uint8`` tensor index is a mask, as a bool one, with PyTorch's deprecation warning
  (:func:`is_mask`).
* An advanced-index write on an expanded tensor warns (:func:`warn_expanded_index_put`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core.creation import _leaf
from compat._core.tensor import Tensor
from compat._core.warn_once import warn_user

UINT8_INDEX = (
    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
    "instead. "  # (PyTorch's, its trailing space too)
)


def _warn_uint8() -> None:
    warn_user(UINT8_INDEX)


def is_mask(i: Any, arr: np.ndarray) -> bool:
    """Whether the index ``i`` (as the array ``arr``) is a mask: bool, or a ``uint8``
    tensor or array (deprecated: warns)."""
    if arr.dtype == np.bool_:
        return True
    if arr.dtype == np.uint8 and isinstance(i, (Tensor, np.ndarray)):
        _warn_uint8()
        return True
    return False


def _scalar_bool(i: Any) -> bool | None:
    if isinstance(i, (bool, np.bool_)):
        return bool(i)
    if isinstance(i, Tensor) and i.ndim == 0 and i._npdtype in (np.bool_, np.uint8):
        if i._npdtype == np.uint8:
            _warn_uint8()
        return bool(i._st.array)
    return None


def _consumed(i: Any) -> int:
    """How many dims of the indexed tensor the index item ``i`` takes."""
    if i is None or i is Ellipsis or isinstance(i, (bool, np.bool_)):
        return 0
    if isinstance(i, Tensor):
        if i.ndim == 0 and i._npdtype in (np.bool_, np.uint8):
            return 0
        return i.ndim if i._npdtype in (np.bool_, np.uint8) else 1
    if isinstance(i, (list, np.ndarray)):
        a = np.asarray(i)
        return a.ndim if a.dtype == np.bool_ else 1
    return 1


def bool_scalars(x: Tensor, idx: Any) -> tuple[Tensor, Any]:
    """``(x', idx')`` with ``x'[idx']`` PyTorch's ``x[idx]`` where ``idx`` holds bool
    scalars: each becomes a new dim of ``x'`` (a view) indexed by ``[0]`` or ``[]``."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not any(
        isinstance(i, (bool, np.bool_)) or (isinstance(i, Tensor) and i.ndim == 0) for i in items
    ):
        return x, idx
    flags = [_scalar_bool(i) for i in items]
    if all(b is None for b in flags):
        return x, idx
    rest = x.ndim - sum(_consumed(i) for i in items)
    d = 0
    out: list = []
    for i, b in zip(items, flags):
        if b is not None:
            x = x.unsqueeze(d)
            out.append(_leaf(np.zeros(1 if b else 0, np.int64), False))
            d += 1
        else:
            d += max(rest, 0) if i is Ellipsis else _consumed(i)
            out.append(i)
    return x, tuple(out)


def check_uint8_fill(indices: Any, value: Any) -> None:
    """PyTorch writes one value through a single mask index with ``masked_fill_``, which
    refuses a ``uint8`` mask: its error (an assignment or ``index_put_``)."""
    one = indices[0] if isinstance(indices, (tuple, list)) and len(indices) == 1 else indices
    if not (isinstance(one, Tensor) and one._npdtype == np.uint8 and one.ndim):
        return
    if not isinstance(value, Tensor) or value.numel() == 1:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
        )


EXPANDED_INDEX_PUT = (
    "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
    "performing this operation. This also applies to advanced indexing e.g. tensor[indices] "
    "= tensor"
)


def overlapping(t: Tensor) -> bool:
    """Whether elements of the view ``t`` share memory (an ``expand``)."""
    info = t._view
    if info is None:
        return False
    shape, strides, _ = info.layout
    return any(s == 0 and n > 1 for n, s in zip(shape, strides))


def warn_expanded_index_put(idx: Any, value: Any) -> None:
    """PyTorch's warning for an advanced-index write on an expanded tensor (and, for one
    value through a single mask, which PyTorch then writes with ``masked_fill_``, that
    op's warning too)."""
    warn_user(EXPANDED_INDEX_PUT)
    one = idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx
    if (
        isinstance(one, Tensor)
        and one._npdtype == np.bool_
        and (not isinstance(value, Tensor) or value.numel() == 1)
    ):
        warn_user(
            "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
            "before performing this operation. This also applies to advanced indexing e.g. "
            "tensor[mask] = scalar"
        )
