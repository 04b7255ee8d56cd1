"""The host tier's index arithmetic for ``gather_general`` and the scatters
(:mod:`funcgrad.primitives.scatter` registers the rules): where each window reads or
writes in a flattened operand, which windows lie inside it, gather's fill values, and
the scatter rule built on NumPy's unbuffered ``ufunc.at``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def host_clamp(i: Any, hi: Any) -> np.ndarray:
    """(host rules) integer indices ``i`` of any dtype clamped into ``[0, hi]`` (an int, or
    one per entry of the last axis), as int64 (``np.clip`` costs ~10x as much)."""
    i = np.asarray(i)
    if i.dtype == np.uint64:  # (not to wrap round in int64)
        i = np.minimum(i, np.asarray(hi, np.uint64))
    return np.minimum(np.maximum(i.astype(np.int64), 0), hi)


def locate(shape, idx, index_map, op_batch, idx_batch, kept, window, clip) -> tuple:
    """Where a gather reads or a scatter writes: the flat indices into an
    operand of ``shape``, shaped ``idx.shape[:-1]`` (one window per index vector) + the
    window's ``kept`` dims (``window``: its size in every operand dim); and which windows
    lie wholly inside the operand (``True`` when ``clip``: starts clamp so all do)."""
    idx = np.asarray(idx)
    lead = idx.shape[:-1]
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    starts = host_clamp(idx, np.array([shape[d] - window[d] for d in index_map], np.int64))
    ok = True if clip else np.logical_and.reduce(starts == idx, axis=-1)
    flat = starts @ np.array([strides[d] for d in index_map], np.int64)
    for od, bd in zip(op_batch, idx_batch):
        pos = np.arange(0, lead[bd] * strides[od], strides[od])
        flat = flat + pos.reshape([-1 if j == bd else 1 for j in range(len(lead))])
    flat = flat.reshape(lead + (1,) * len(kept))
    for j, d in enumerate(kept):
        step = np.arange(0, window[d] * strides[d], strides[d])
        flat = flat + step.reshape([-1 if m == j else 1 for m in range(-len(lead), len(kept))])
    return flat, ok


def fill_value(dtype: np.dtype, fill_value: Any) -> Any:
    """Gather's ``fill`` value: ``fill_value``, else NaN, the least signed or greatest
    unsigned integer, or ``True`` (as JAX)."""
    if fill_value is not None:
        return fill_value
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if dtype.kind == "i" else info.max
    return True if dtype.kind == "b" else np.nan


def scatter_rule(put: Any) -> Any:
    """The host rule of a scatter whose writes ``put(flat_operand, flat_indices, values)``
    makes; out-of-bounds windows are dropped unless ``mode`` is ``clip`` (XLA's, and so
    ``promise_in_bounds``'s, semantics)."""

    def rule(x, idx, u, *, dimension_numbers, mode, **kw: Any) -> Any:
        dn, out, u = dimension_numbers, np.array(x, order="C"), np.asarray(u)
        drop = (*dn.inserted_window_dims, *dn.operand_batching_dims)
        kept = [d for d in range(out.ndim) if d not in drop]
        window = [1] * out.ndim
        for d, wd in zip(kept, dn.update_window_dims):
            window[d] = u.shape[wd]
        flat, ok = locate(
            out.shape,
            idx,
            dn.scatter_dims_to_operand_dims,
            dn.operand_batching_dims,
            dn.scatter_indices_batching_dims,
            kept,
            window,
            mode == "clip",
        )
        scattered = [d for d in range(u.ndim) if d not in dn.update_window_dims]
        u = u.transpose((*scattered, *dn.update_window_dims)).astype(out.dtype, copy=False)
        if ok is not True:
            flat, u = flat[ok], u[ok]
        put(out.reshape(-1), flat.reshape(-1), u.reshape(-1))
        return out

    return rule


def set_at(a: Any, i: Any, v: Any) -> None:
    a[i] = v
