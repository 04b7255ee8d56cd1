"""Collectives of picklable Python objects: each object is pickled to bytes, the byte
counts are gathered first, then the bytes, padded to the largest count (a power of
two, so few programs are compiled), as PyTorch's object collectives do."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from compat.torch.distributed._group import (
    _bucket,
    _call,
    _group,
    _not_member,
    _padded,
    _rank_in,
)

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list"]


def _gather_bytes(g: Any, data: bytes) -> list[bytes]:
    """Every member's ``data``, in group-rank order."""
    counts = np.asarray(_call(g._g.all_gather, np.array([len(data)], np.int32))).reshape(-1)
    size = _bucket(int(counts.max()))
    got = np.asarray(_call(g._g.all_gather, _padded(data, size)))
    return [got[i, : int(c)].tobytes() for i, c in enumerate(counts)]


def _broadcast_bytes(g: Any, data: bytes | None, src: int) -> bytes:
    """Member ``src``'s ``data`` on every member."""
    count = np.array([0 if data is None else len(data)], np.int32)
    n = int(np.asarray(_call(g._g.broadcast, count, src)).reshape(-1)[0])
    got = np.asarray(_call(g._g.broadcast, _padded(data or b"", _bucket(n)), src))
    return got[:n].tobytes()


def _src(g: Any, src: int | None, group_src: int | None, what: str) -> int:
    if group_src is not None:
        return group_src
    return _rank_in(g, 0 if src is None else src, what, "src")


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    """Every process's ``obj`` into ``object_list`` (one entry per rank)."""
    g = _group(group)
    if _not_member(g, "all_gather_object"):
        return
    if len(object_list) != g._g.size:
        raise ValueError(
            f"all_gather_object: object_list has {len(object_list)} entries for a group of "
            f"{g._g.size} processes"
        )
    for i, data in enumerate(_gather_bytes(g, pickle.dumps(obj))):
        object_list[i] = pickle.loads(data)


def gather_object(
    obj: Any,
    object_gather_list: list | None = None,
    dst: int | None = None,
    group: Any = None,
    group_dst: int | None = None,
) -> None:
    """Every process's ``obj`` into rank ``dst``'s ``object_gather_list``."""
    g = _group(group)
    if _not_member(g, "gather_object"):
        return
    d = group_dst if group_dst is not None else _rank_in(g, 0 if dst is None else dst, "", "dst")
    got = _gather_bytes(g, pickle.dumps(obj))
    if g._g.rank == d:
        if object_gather_list is None or len(object_gather_list) != g._g.size:
            raise ValueError(
                "gather_object: the destination needs an object_gather_list with one entry per rank"
            )
        for i, data in enumerate(got):
            object_gather_list[i] = pickle.loads(data)


def broadcast_object_list(
    object_list: list,
    src: int | None = None,
    group: Any = None,
    device: Any = None,
    group_src: int | None = None,
) -> None:
    """Rank ``src``'s ``object_list`` entries into every process's ``object_list``."""
    g = _group(group)
    if _not_member(g, "broadcast_object_list"):
        return
    s = _src(g, src, group_src, "broadcast_object_list")
    mine = g._g.rank == s
    data = _broadcast_bytes(g, pickle.dumps(list(object_list)) if mine else None, s)
    if not mine:
        got = pickle.loads(data)
        if len(got) != len(object_list):
            raise RuntimeError(
                f"broadcast_object_list: rank {g._g.ranks[s]} sent {len(got)} objects; this "
                f"process's list has {len(object_list)} entries"
            )
        object_list[:] = got


def scatter_object_list(
    scatter_object_output_list: list,
    scatter_object_input_list: list | None = None,
    src: int | None = None,
    group: Any = None,
    group_src: int | None = None,
) -> None:
    """Rank ``src``'s ``scatter_object_input_list[i]`` into rank ``i``'s
    ``scatter_object_output_list[0]``."""
    g = _group(group)
    if _not_member(g, "scatter_object_list"):
        return
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    s = _src(g, src, group_src, "scatter_object_list")
    mine = g._g.rank == s
    if mine and (scatter_object_input_list is None or len(scatter_object_input_list) != g._g.size):
        raise ValueError("scatter_object_list: the source needs one input object per rank")
    data = _broadcast_bytes(g, pickle.dumps(list(scatter_object_input_list)) if mine else None, s)
    scatter_object_output_list[0] = pickle.loads(data)[g._g.rank]
