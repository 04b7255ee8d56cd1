"""``funcgrad.ops``: JAX's ``jax.ops``, the segment reductions.

``segment_sum(data, segment_ids)`` reduces the rows of ``data`` that share a segment id
(``segment_ids``: one integer per row) into one row per segment, as TensorFlow's ``segment_sum`` and JAX's: the output has
``num_segments`` rows (by default ``max(segment_ids) + 1``, which needs concrete ids),
segments no id names hold the reduction's identity, and ids outside ``[0,
num_segments)`` are dropped (``mode``, a ``lax.GatherScatterMode``, says otherwise).
Each is one ``lax.scatter_*`` into an array of identities, so it differentiates,
batches and compiles as those do; ``bucket_size`` reduces each bucket of that many rows
separately and then the buckets (JAX's option for the rounding of long sums).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import lax
from funcgrad import numpy as fnp
from funcgrad.numpy._core import check_arraylike
from funcgrad.sharding import auto_axes

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(kind: str, dtype: np.dtype) -> Any:
    """The identity of the reduction ``kind`` in ``dtype`` (JAX's choices)."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    low = kind == "max"
    if dtype == np.bool_:
        return not low
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return int(info.min if low else info.max)
    return -math.inf if low else math.inf


_SCATTER: dict[str, Callable[..., Any]] = {
    "sum": lax.scatter_add,
    "prod": lax.scatter_mul,
    "max": lax.scatter_max,
    "min": lax.scatter_min,
}
_REDUCE: dict[str, Callable[..., Any]] = {
    "sum": fnp.sum,
    "prod": fnp.prod,
    "max": fnp.max,
    "min": fnp.min,
}


def _segment(
    kind: str,
    data: Any,
    segment_ids: Any,
    num_segments: int | None,
    indices_are_sorted: bool,
    unique_indices: bool,
    bucket_size: int | None,
    mode: Any,
    out_sharding: Any = None,
) -> Any:
    name = f"segment_{kind}"
    check_arraylike(name, data, segment_ids)
    data = fnp.asarray(data)
    ids = fnp.asarray(segment_ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {ids.dtype}")
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise ValueError(
            f"{name}: segment_ids must be one-dimensional with one id per row of data, "
            f"got segment_ids of shape {ids.shape} and data of shape {data.shape}"
        )
    if num_segments is None:
        num_segments = int(np.max(np.asarray(ids))) + 1  # concrete ids only, as JAX's
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    mode = lax.GatherScatterMode.FILL_OR_DROP if mode is None else mode
    if out_sharding is not None:
        spec = getattr(out_sharding, "spec", out_sharding)
        if kind != "sum" and spec.unreduced:
            raise NotImplementedError(f"unreduced for {kind} is not yet supported.")
        if bucket_size is not None:
            raise NotImplementedError(f"{name}: out_sharding with bucket_size")
    dtype, rest = data.dtype, data.shape[1:]
    window = tuple(range(1, data.ndim))
    if bucket_size is None:
        init = fnp.full((num_segments, *rest), _identity(kind, dtype), dtype=dtype)
        index, inserted = ids[..., None], (0,)
    else:
        buckets = -(-ids.shape[0] // int(bucket_size))
        init = fnp.full((buckets, num_segments, *rest), _identity(kind, dtype), dtype=dtype)
        rows = fnp.arange(ids.shape[0], dtype=ids.dtype) // int(bucket_size)
        index, inserted = fnp.stack([rows, ids], axis=-1), (0, 1)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=window,
        inserted_window_dims=inserted,
        scatter_dims_to_operand_dims=inserted,
    )

    def scatter(init: Any, index: Any, data: Any) -> Any:
        return _SCATTER[kind](
            init,
            index,
            data,
            dnums,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
        )

    if out_sharding is not None:  # JAX's: the scatter with the mesh's axes automatic
        return auto_axes(scatter, out_sharding=out_sharding)(init, index, data)
    res = scatter(init, index, data)
    if bucket_size is not None:
        res = _REDUCE[kind](res, axis=0).astype(dtype)
    return res


def segment_sum(
    data: Any,
    segment_ids: Any,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The sum of the rows of ``data`` in each segment (0 for an empty one)."""
    return _segment(
        "sum", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode, out_sharding,
    )  # fmt: skip


def segment_prod(
    data: Any,
    segment_ids: Any,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The product of the rows of ``data`` in each segment (1 for an empty one)."""
    return _segment(
        "prod", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode, out_sharding,
    )  # fmt: skip


def segment_max(
    data: Any,
    segment_ids: Any,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The maximum of the rows of ``data`` in each segment (``-inf``, the dtype's
    minimum or ``False`` for an empty one)."""
    return _segment(
        "max", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode, out_sharding,
    )  # fmt: skip


def segment_min(
    data: Any,
    segment_ids: Any,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The minimum of the rows of ``data`` in each segment (``inf``, the dtype's
    maximum or ``True`` for an empty one)."""
    return _segment(
        "min", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
        bucket_size, mode, out_sharding,
    )  # fmt: skip
