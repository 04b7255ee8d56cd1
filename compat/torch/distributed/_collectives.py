"""The collectives of compat's ``torch.distributed``: each runs as an XLA collective
between one device per process (``funcgrad.distributed.ProcessGroup``) and writes its
result into the tensors in place, as PyTorch's do. All calls are synchronous:
``async_op=True`` returns a completed :class:`Work`."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core.tensor import Tensor
from compat.torch.distributed._group import (
    ReduceOp,
    _array,
    _call,
    _done,
    _group,
    _not_member,
    _op,
    _rank_in,
    _write,
)


def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False):
    """Reduce ``tensor`` over the group with ``op``, in place on every process."""
    g = _group(group)
    if _not_member(g, "all_reduce"):
        return None
    x = _array(tensor, "all_reduce")
    _write(tensor, _call(g._g.all_reduce, x, _op(op)))
    return _done(async_op)


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: Any = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
):
    """Reduce ``tensor`` over the group into rank ``dst``'s tensor (others keep theirs)."""
    g = _group(group)
    if _not_member(g, "reduce"):
        return None
    d = (
        group_dst
        if group_dst is not None
        else _rank_in(g, 0 if dst is None else dst, "reduce", "dst")
    )
    out = _call(g._g.all_reduce, _array(tensor, "reduce"), _op(op))
    if g._g.rank == d:
        _write(tensor, out)
    return _done(async_op)


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
):
    """Rank ``src``'s ``tensor`` copied into every process's ``tensor``."""
    g = _group(group)
    if _not_member(g, "broadcast"):
        return None
    s = (
        group_src
        if group_src is not None
        else _rank_in(g, 0 if src is None else src, "broadcast", "root")
    )
    _write(tensor, _call(g._g.broadcast, _array(tensor, "broadcast"), s))
    return _done(async_op)


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None, async_op: bool = False):
    """Every process's ``tensor`` into ``tensor_list`` (one entry per rank)."""
    g = _group(group)
    if _not_member(g, "all_gather"):
        return None
    if len(tensor_list) != g._g.size:
        raise ValueError(
            f"all_gather: tensor_list has {len(tensor_list)} entries for a group of "
            f"{g._g.size} processes"
        )
    x = _array(tensor, "all_gather")
    for i, t in enumerate(tensor_list):
        if tuple(t.shape) != tuple(x.shape):
            raise RuntimeError(
                f"all_gather: invalid tensor size at index {i} (expected {tuple(x.shape)}, "
                f"got {tuple(t.shape)})"
            )
    out = _call(g._g.all_gather, x)
    for i, t in enumerate(tensor_list):
        _write(t, out[i])
    return _done(async_op)


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group: Any = None, async_op: bool = False
):
    """Every process's ``input_tensor`` concatenated along dim 0 into ``output_tensor``."""
    g = _group(group)
    if _not_member(g, "all_gather_into_tensor"):
        return None
    x = _array(input_tensor, "all_gather_into_tensor")
    n = g._g.size
    want = (n * x.shape[0], *x.shape[1:]) if x.ndim else (n,)
    if tuple(output_tensor.shape) != want:
        raise RuntimeError(
            f"all_gather_into_tensor: output of shape {tuple(output_tensor.shape)} does not hold "
            f"{n} inputs of shape {tuple(x.shape)} concatenated along dim 0 (expected {want})"
        )
    out = _call(g._g.all_gather, x)
    _write(output_tensor, out.reshape(tuple(output_tensor.shape)))
    return _done(async_op)


def reduce_scatter_tensor(
    output: Tensor, input: Tensor, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False
):
    """Reduce ``input`` (``size`` chunks along dim 0) over the group; rank ``i`` gets chunk ``i``."""
    g = _group(group)
    if _not_member(g, "reduce_scatter_tensor"):
        return None
    x = _array(input, "reduce_scatter_tensor")
    n = g._g.size
    o = tuple(output.shape)
    if x.shape != ((n * o[0], *o[1:]) if o else (n,)):
        raise RuntimeError(
            f"reduce_scatter_tensor: input of shape {tuple(x.shape)} is not {n} chunks of the "
            f"output's shape {o} along dim 0"
        )
    out = _call(g._g.reduce_scatter, x.reshape((n, *o)), _op(op))
    _write(output, out)
    return _done(async_op)


def gather(
    tensor: Tensor,
    gather_list: list | None = None,
    dst: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
):
    """Every process's ``tensor`` into rank ``dst``'s ``gather_list``."""
    g = _group(group)
    if _not_member(g, "gather"):
        return None
    d = (
        group_dst
        if group_dst is not None
        else _rank_in(g, 0 if dst is None else dst, "gather", "dst")
    )
    out = _call(g._g.all_gather, _array(tensor, "gather"))
    if g._g.rank == d:
        if gather_list is None or len(gather_list) != g._g.size:
            raise ValueError("gather: the destination needs a gather_list with one entry per rank")
        for i, t in enumerate(gather_list):
            _write(t, out[i])
    return _done(async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None):
    """Wait until every process of the group reaches the barrier."""
    g = _group(group)
    if _not_member(g, "barrier"):
        return None
    _call(g._g.barrier, "barrier")
    return _done(async_op)


def monitored_barrier(group: Any = None, timeout: Any = None, wait_all_ranks: bool = False):
    """:func:`barrier` (its timeout is the group's collective timeout); every barrier here
    already names the processes that did not arrive."""
    return barrier(group)


def scatter(
    tensor: Tensor,
    scatter_list: list | None = None,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
):
    """Rank ``src``'s ``scatter_list[i]`` into rank ``i``'s ``tensor``."""
    g = _group(group)
    if _not_member(g, "scatter"):
        return None
    s = (
        group_src
        if group_src is not None
        else _rank_in(g, 0 if src is None else src, "scatter", "src")
    )
    x = _array(tensor, "scatter")
    n = g._g.size
    if g._g.rank == s:
        if scatter_list is None or len(scatter_list) != n:
            raise ValueError("scatter: the source needs a scatter_list with one tensor per rank")
        for i, t in enumerate(scatter_list):
            if tuple(t.shape) != tuple(x.shape) or t.dtype != tensor.dtype:
                raise RuntimeError(
                    f"scatter: scatter_list[{i}] is {t.dtype} of shape {tuple(t.shape)}; the "
                    f"output tensor is {tensor.dtype} of shape {tuple(x.shape)}"
                )
        stacked = np.stack([np.asarray(_array(t, "scatter")) for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("scatter: scatter_list must be empty on non-source ranks")
        stacked = np.zeros((n, *x.shape), x.dtype)
    _write(tensor, np.asarray(_call(g._g.broadcast, stacked, s))[g._g.rank])
    return _done(async_op)


def _same_blocks(tensors: list, what: str, n: int) -> list:
    if len(tensors) != n:
        raise ValueError(f"{what}: {len(tensors)} tensors for a group of {n} processes")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(first.shape) or t.dtype != first.dtype:
            raise NotImplementedError(
                f"{what}: tensor {i} is {t.dtype} of shape {tuple(t.shape)} and tensor 0 "
                f"{first.dtype} of shape {tuple(first.shape)}; compat exchanges blocks of one "
                "shape and dtype only"
            )
    return [np.asarray(_array(t, what)) for t in tensors]


def all_to_all(
    output_tensor_list: list, input_tensor_list: list, group: Any = None, async_op: bool = False
):
    """Rank ``i``'s ``input_tensor_list[j]`` into rank ``j``'s ``output_tensor_list[i]``."""
    g = _group(group)
    if _not_member(g, "all_to_all"):
        return None
    n = g._g.size
    blocks = _same_blocks(input_tensor_list, "all_to_all", n)
    _same_blocks(output_tensor_list, "all_to_all", n)
    if tuple(output_tensor_list[0].shape) != blocks[0].shape:
        raise RuntimeError(
            f"all_to_all: output tensors of shape {tuple(output_tensor_list[0].shape)} do not "
            f"match the input tensors' {blocks[0].shape}"
        )
    out = np.asarray(_call(g._g.all_to_all, np.stack(blocks)))
    for i, t in enumerate(output_tensor_list):
        _write(t, out[i])
    return _done(async_op)


def all_to_all_single(
    output: Tensor,
    input: Tensor,
    output_split_sizes: list | None = None,
    input_split_sizes: list | None = None,
    group: Any = None,
    async_op: bool = False,
):
    """Split ``input`` along dim 0 into one chunk per rank, exchange the chunks, concatenate
    what arrives into ``output`` (equal splits; uneven ones are not supported)."""
    g = _group(group)
    if _not_member(g, "all_to_all_single"):
        return None
    n = g._g.size
    for sizes in (output_split_sizes, input_split_sizes):
        if sizes is not None and len(set(int(v) for v in sizes)) > 1:
            raise NotImplementedError(
                f"all_to_all_single: uneven split sizes {list(sizes)} are not supported by compat"
            )
    x = _array(input, "all_to_all_single")
    if x.ndim == 0 or x.shape[0] % n or tuple(output.shape) != tuple(x.shape):
        raise RuntimeError(
            f"all_to_all_single: input of shape {tuple(x.shape)} and output of shape "
            f"{tuple(output.shape)} must match and split into {n} equal chunks along dim 0"
        )
    out = _call(g._g.all_to_all, x.reshape((n, x.shape[0] // n, *x.shape[1:])))
    _write(output, out.reshape(tuple(x.shape)))
    return _done(async_op)


def reduce_scatter(
    output: Tensor,
    input_list: list,
    op: Any = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
):
    """Reduce ``input_list`` (one tensor per rank) over the group; rank ``i`` gets the
    reduction of every process's ``input_list[i]`` in ``output``."""
    g = _group(group)
    if _not_member(g, "reduce_scatter"):
        return None
    blocks = _same_blocks(input_list, "reduce_scatter", g._g.size)
    if tuple(output.shape) != blocks[0].shape:
        raise RuntimeError(
            f"reduce_scatter: output of shape {tuple(output.shape)} does not match the inputs' "
            f"{blocks[0].shape}"
        )
    _write(output, _call(g._g.reduce_scatter, np.stack(blocks), _op(op)))
    return _done(async_op)
