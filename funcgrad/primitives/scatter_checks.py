"""The well-formedness checks of XLA's general gather and scatter dimension numbers, in
the order and the words of ``jax.lax``'s shape rules (``TypeError`` each), so that code
matching JAX's messages sees the same sentence.

:func:`check_gather` and :func:`check_scatter` take avals (anything with ``shape``) and
the dimension numbers; they return nothing and raise at the first problem, as XLA's
shape inference does: the index vector is the last axis of the indices.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

__all__ = ["check_gather", "check_scatter"]


def _sorted(dims: Sequence[int], op: str, name: str) -> None:
    if any(b < a for a, b in itertools.pairwise(dims)):
        raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _unique(dims: Sequence[int], op: str, name: str) -> None:
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _range_msg(name: str, op: str, rank: int, dim: int) -> str:
    return f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {dim}."


def _in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(_range_msg(name, op, rank, d))


def _ends_in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    """The range check of a sorted list: its first and last entries (as JAX's, which
    reports neither a bad 0 nor a middle entry)."""
    if not dims:
        return
    bad = dims[0] if dims[0] < 0 else (dims[-1] if dims[-1] >= rank else None)
    if bad:
        raise TypeError(_range_msg(name, op, rank, bad))


def _disjoint(a: Sequence[int], b: Sequence[int], op: str, na: str, nb: str) -> None:
    if set(a) & set(b):
        raise TypeError(f"{na} and {nb} in {op} op must be disjoint; got: {a} and {b}.")


def _ordered_dims(dims: Sequence[int], rank: int, op: str, name: str, order: str) -> None:
    """Sorted (``s``), unique (``u``) and in range (``r``), checked in ``order`` (JAX's
    rules check them in different orders for different lists)."""
    checks = {"s": _sorted, "u": _unique}
    for c in order:
        if c == "r":
            _ends_in_range(dims, rank, op, name)
        else:
            checks[c](dims, op, name)


def _batching(
    op: str,
    x: Any,
    idx: Any,
    operand_dims: Sequence[int],
    index_dims: Sequence[int],
    index_name: str,
) -> tuple[int, ...]:
    """The batching dimensions' checks shared by gather and scatter; the operand's
    batch shape."""
    iv = len(idx.shape) - 1
    _unique(index_dims, op, index_name)
    _in_range(index_dims, len(idx.shape), op, index_name)
    Op = op.capitalize()
    if iv in index_dims:
        raise TypeError(
            f"{Op} op cannot have the index vector dimension as a batching dimension; "
            f"got {index_dims}."
        )
    if len(operand_dims) != len(index_dims):
        sep = "" if op == "gather" else " "  # (JAX's gather sentence lacks the space)
        raise TypeError(
            f"{Op} op requires equal numbers of operand_batching_dims and {index_name}, "
            f"got {operand_dims} and{sep}{index_dims}."
        )
    ob = tuple(x.shape[i] for i in operand_dims)
    ib = tuple(idx.shape[i] for i in index_dims)
    if ob != ib:
        raise TypeError(
            f"{Op} op requires operand batching dimensions and indices batching dimensions "
            f"to have the same shape, got {ob} and {ib}."
        )
    return ob


def check_gather(x: Any, idx: Any, dn: Any, slice_sizes: Sequence[int]) -> None:
    """``lax.gather``'s dimension numbers and slice sizes against the operand ``x`` and
    the indices ``idx``."""
    op, rank, iv = "gather", len(x.shape), len(idx.shape) - 1
    if iv < 0:
        raise TypeError(
            "Gather index leaf dimension must be within [0, rank(indices) + 1). "
            f"rank(indices) is {len(idx.shape)} and gather index leaf dimension is {iv}."
        )
    offset = dn.offset_dims
    _sorted(offset, op, "offset_dims")
    _unique(offset, op, "offset_dims")
    out_rank = len(offset) + iv
    for i, d in enumerate(offset):
        if not 0 <= d < out_rank:
            raise TypeError(
                f"Offset dimension {i} in gather op is out of bounds; got {d}, but should "
                f"have been in [0, {out_rank})"
            )
    sim = dn.start_index_map
    if len(sim) != idx.shape[iv]:
        raise TypeError(
            f"Gather op has {len(sim)} elements in start_index_map and the bound of "
            f"dimension index_vector_dim={iv} of indices is {idx.shape[iv]}. These two "
            "numbers must be equal."
        )
    for i, d in enumerate(sim):
        if not 0 <= d < rank:
            raise TypeError(f"Invalid start_index_map; domain is [0, {rank}), got: {i}->{d}.")
    _unique(sim, op, "start_index_map")
    collapsed, obd = dn.collapsed_slice_dims, dn.operand_batching_dims
    _ordered_dims(collapsed, rank, op, "collapsed_slice_dims", "sru")
    _ordered_dims(obd, rank, op, "operand_batching_dims", "usr")
    _disjoint(collapsed, obd, op, "collapsed_slice_dims", "operand_batching_dims")
    _disjoint(sim, obd, op, "start_index_map", "operand_batching_dims")
    _batching(op, x, idx, obd, dn.start_indices_batching_dims, "start_indices_batching_dims")
    if rank != len(slice_sizes):
        raise TypeError(
            "Gather op must have one slice size for every input dimension; got: "
            f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={rank}"
        )
    if len(slice_sizes) != len(offset) + len(collapsed) + len(obd):
        raise TypeError(
            "All components of the offset index in a gather op must either be a offset "
            f"dimension or explicitly collapsed/batching; got len(slice_sizes)="
            f"{len(slice_sizes)}, output_slice_sizes={offset}, collapsed_slice_dims="
            f"{collapsed}, operand_batching_dims={obd}."
        )
    if all(idx.shape):  # (with no indices nothing is sliced: any size goes)
        for i, (s, n) in enumerate(zip(slice_sizes, x.shape)):
            if not 0 <= s <= n:
                raise TypeError(
                    f"Slice size at index {i} in gather op is out of range, must be within "
                    f"[0, {n} + 1), got {s}."
                )
    for i, d in enumerate(collapsed):
        if slice_sizes[d] != 1:
            raise TypeError(
                "Gather op can only collapse slice dims with bound 1, but bound is "
                f"{slice_sizes[d]} for index {d} at position {i}."
            )
    for i, d in enumerate(obd):
        if slice_sizes[d] > 1:
            raise TypeError(
                "Gather op can only have operand batching dims with bound 0/1, but bound is "
                f"{slice_sizes[d]} for index {d} at position {i}."
            )


def check_scatter(x: Any, idx: Any, u: Any, dn: Any) -> None:
    """``lax.scatter``'s dimension numbers against the operand ``x``, the indices ``idx``
    and the updates ``u``."""
    op, rank, iv = "scatter", len(x.shape), len(idx.shape) - 1
    if iv < 0:
        raise TypeError(
            "Scatter index leaf dimension must be within [0, rank(indices) + 1). "
            f"rank(indices) is {len(idx.shape)} and scatter index leaf dimension is {iv}."
        )
    uwd, iwd, obd = dn.update_window_dims, dn.inserted_window_dims, dn.operand_batching_dims
    sdims = dn.scatter_dims_to_operand_dims
    want = iv + len(uwd)
    if len(u.shape) != want:
        raise TypeError(f"Updates tensor must be of rank {want}; got {len(u.shape)}.")
    _ordered_dims(uwd, len(u.shape), op, "update_window_dims", "sur")
    _ordered_dims(iwd, rank, op, "inserted_window_dims", "sur")
    _ordered_dims(obd, rank, op, "operand_batching_dims", "sur")
    _disjoint(iwd, obd, op, "inserted_window_dims", "operand_batching_dims")
    _disjoint(sdims, obd, op, "scatter_dims_to_operand_dims", "operand_batching_dims")
    sibd = dn.scatter_indices_batching_dims
    ob = _batching(op, x, idx, obd, sibd, "scatter_indices_batching_dims")
    # each batching dim of the indices, as a dimension of the updates
    scatter_pos: list[int | None] = list(range(iv))
    for w in uwd:
        scatter_pos.insert(w, None)
    ub = tuple(u.shape[scatter_pos.index(i)] for i in sibd)
    if ob != ub:
        raise TypeError(
            "Scatter op requires operand batching dimensions and updates batching dimensions "
            f"to have the same shape, got {ob} and {ub}."
        )
    window = len(uwd) + len(iwd) + len(obd)
    if rank != window:
        raise TypeError(
            f"Scatter op has window of size {window}; doesn't match operand of rank {rank}."
        )
    if len(sdims) != idx.shape[iv]:
        raise TypeError(
            f"Scatter op has {len(sdims)} elements in scatter_dims_to_operand_dims and the "
            f"bound of dimension index_vector_dim={iv} of indices is {idx.shape[iv]}. These "
            "two numbers must be equal"
        )
    for i, d in enumerate(sdims):
        if not 0 <= d < rank:
            raise TypeError(
                f"Invalid scatter_dims_to_operand_dims mapping; domain is [0, {rank}), "
                f"got: {i}->{d}."
            )
    _unique(sdims, op, "scatter_dims_to_operand_dims")
    removed = set(iwd) | set(obd)
    bounds = [n for i, n in enumerate(x.shape) if i not in removed]
    for w, n in zip(uwd, bounds):
        if u.shape[w] > n:
            raise TypeError(
                "Bounds of the window dimensions of updates must not exceed the bounds of the "
                f"corresponding dimensions of operand. For dimension {w}, updates bound is "
                f"{u.shape[w]}, operand bound is {n}."
            )
    batch = idx.shape[:iv]
    for d, n in zip([d for d in range(len(u.shape)) if d not in uwd], batch):
        if u.shape[d] != n:
            raise TypeError(
                "Bounds of the scatter dimensions of updates must be the same as the bounds "
                "of the corresponding dimensions of scatter indices. For scatter dimension "
                f"{d}, updates bound is {u.shape[d]}, indices bound is {n}."
            )
