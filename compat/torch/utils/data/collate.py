"""Collation (``torch/utils/data/_utils/collate.py``): a list of samples -> one batch.

``default_collate`` stacks tensors, NumPy arrays and numbers into tensors with a new
leading batch dimension and recurses into dicts, namedtuples, tuples and lists (as
PyTorch: tuples become lists, Python floats become float64, ints int64, strings
stay a list). ``collate(batch, collate_fn_map=...)`` is the extensible form.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import creation as _creation
from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core.ops.array_rows import stack
from compat._core.tensor import Tensor

_NOT_NUMERIC = re.compile(r"[SaUO]")  # NumPy dtype codes of strings and objects

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)

CollateMap = dict[type | tuple[type, ...], Callable]


def _from_array(arr: np.ndarray) -> Tensor:
    return Tensor._make(np.asarray(arr, order="C"))


def collate_tensor_fn(batch: list, *, collate_fn_map: CollateMap | None = None) -> Tensor:
    """``torch.stack(batch)``; tensors outside autograd are stacked in NumPy (one transfer)."""
    first = batch[0]
    shape, dtype = first._st.a.shape, first._st.a.dtype
    plain = all(
        isinstance(t, Tensor)
        and t._st.a.shape == shape
        and t._st.a.dtype == dtype
        and not (t._requires_grad and _gm.is_grad_enabled())
        for t in batch
    )
    if plain:
        return _from_array(np.stack([np.asarray(t._st.array) for t in batch]))
    return stack(batch, 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: CollateMap | None = None) -> Any:
    """Arrays are stacked like tensors; string and object arrays are an error."""
    first = batch[0]
    if _NOT_NUMERIC.search(first.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(first.dtype))
    if all(
        isinstance(a, np.ndarray) and a.shape == first.shape and a.dtype == first.dtype
        for a in batch
    ):
        return _from_array(np.stack(batch))
    return collate([_from_array(np.asarray(a)) for a in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: CollateMap | None = None) -> Tensor:
    """NumPy scalars -> a 1-D tensor of their dtype."""
    return _from_array(np.asarray(batch))


def collate_float_fn(batch: list, *, collate_fn_map: CollateMap | None = None) -> Tensor:
    return _creation.tensor(batch, dtype=_dt.float64)


def collate_int_fn(batch: list, *, collate_fn_map: CollateMap | None = None) -> Tensor:
    return _creation.tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: CollateMap | None = None) -> list:
    return batch


default_collate_fn_map: CollateMap = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def _rebuild_like(elem: Any, items: dict | list, make: Callable) -> Any:
    """A container of ``elem``'s type holding ``items`` (a plain dict/list if it cannot be)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(items)
            return clone
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(items):
                clone[i] = v
            return clone
        return make(items)
    except TypeError:
        return items


def collate(batch: list, *, collate_fn_map: CollateMap | None = None) -> Any:
    """Collate ``batch`` using ``collate_fn_map`` (exact type first, then ``isinstance`` in order)
    for leaves and recursing into mappings, namedtuples and sequences."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for kind, fn in collate_fn_map.items():
            if isinstance(elem, kind):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        items = {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        return _rebuild_like(elem, items, elem_type)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns a list for tuples
        return _rebuild_like(elem, columns, elem_type)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch: list) -> Any:
    """PyTorch's default ``collate_fn``: stack a list of samples into a batch (see module doc)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars inside ``data`` become tensors (no batching): the ``collate_fn``
    when automatic batching is off (``batch_size=None``)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "bytes_"):
        if isinstance(data, np.ndarray) and _NOT_NUMERIC.search(data.dtype.str) is not None:
            return data
        return _from_array(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        items = {k: default_convert(data[k]) for k in data}
        return _rebuild_like(data, items, elem_type)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_like(data, [default_convert(d) for d in data], elem_type)
    return data
