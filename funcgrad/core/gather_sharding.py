"""The sharding types of XLA's general gather and scatter over explicit mesh axes.

JAX types a gather's or scatter's result only where it needs no communication: the
operand's batching dimensions and the indices' match (or one of each pair is unsplit),
dimensions the operand is sliced along (not in full) are unsplit, and the indices are
split along their batching dimensions only. Then each result dimension takes the split
of the dimension it comes from: a window dimension the operand's, an index dimension the
indices' (a batching pair's, whichever of the two is split). A scatter's result is the
operand's type, its unsplit batching and window dimensions taking the indices' or the
updates' splits. Where JAX asks for ``out_sharding=`` instead, these rules leave the
result untyped and JAX's lowering raises its error.
"""

from __future__ import annotations

from typing import Any

from funcgrad.core.ir import Aval
from funcgrad.core.sharding_types import mesh_of, spec_of, typed


def gather_spec(x: Aval, idx: Aval, dn: Any, slice_sizes: tuple) -> list | None:
    """The spec of ``gather(x, idx)``'s result, or ``None`` where JAX cannot type it."""
    sx, si = spec_of(x), list(spec_of(idx))
    pairs = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    if any(slice_sizes[d] != x.shape[d] and sx[d] is not None for d in dn.start_index_map):
        return None
    if any(sx[o] is not None and si[i] is not None and sx[o] != si[i] for o, i in pairs):
        return None
    batching = set(dn.start_indices_batching_dims)
    if any(e is not None for d, e in enumerate(si) if d not in batching):
        return None  # (the index vector and the other index dims unsplit)
    for o, i in pairs:
        si[i] = si[i] if si[i] is not None else sx[o]
    removed = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = iter(e for d, e in enumerate(sx) if d not in removed)
    index = iter(si[:-1])
    rank = len(dn.offset_dims) + idx.ndim - 1
    return [next(window) if d in dn.offset_dims else next(index) for d in range(rank)]


def gather_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """``gather_general``'s result typed as JAX types it (untyped where JAX refuses)."""
    x, idx = avals
    if x.sharding is None and idx.sharding is None:
        return outs
    spec = gather_spec(x, idx, params["dimension_numbers"], params["slice_sizes"])
    return outs if spec is None else [typed(outs[0], spec, mesh_of(avals))]


def _updates_batching_dims(dn: Any, idx: Aval, u: Aval) -> list[int]:
    """The updates' dimension of each indices batching dimension (the updates' scatter
    dimensions are the indices' dimensions but the index vector, in order)."""
    scatter_dims = [d for d in range(u.ndim) if d not in dn.update_window_dims]
    return [scatter_dims[i] for i in dn.scatter_indices_batching_dims]


def scatter_spec(x: Aval, idx: Aval, u: Aval, dn: Any) -> list | None:
    """The spec of a scatter's result, or ``None`` where JAX cannot type it."""
    sx, si, su = spec_of(x), spec_of(idx), spec_of(u)
    ubatch = _updates_batching_dims(dn, idx, u)
    for o, i, d in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, ubatch):
        named = {e for e in (sx[o], si[i], su[d]) if e is not None}
        if len(named) > 1:
            return None
    removed = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    owin = [d for d in range(x.ndim) if d not in removed]
    for ud, od in zip(dn.update_window_dims, owin):
        same = u.shape[ud] == x.shape[od] and su[ud] == sx[od]
        if not same and not (su[ud] is None and sx[od] is None):
            return None
    if any(sx[d] is not None for d in dn.inserted_window_dims):
        return None
    kept = set(ubatch) | set(dn.update_window_dims)
    if any(e is not None for d, e in enumerate(su) if d not in kept):
        return None
    ibatch = set(dn.scatter_indices_batching_dims)
    if any(e is not None for d, e in enumerate(si[:-1]) if d not in ibatch):
        return None
    if si and si[-1] is not None:
        return None
    out = list(sx)
    for o, i, d in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, ubatch):
        if out[o] is None:
            out[o] = si[i] if si[i] is not None else su[d]
    for ud, od in zip(dn.update_window_dims, owin):
        if out[od] is None:
            out[od] = su[ud]
    return out


def scatter_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """A scatter's result typed as JAX types it (untyped where JAX refuses)."""
    x, idx, u = avals
    if all(a.sharding is None for a in avals):
        return outs
    spec = scatter_spec(x, idx, u, params["dimension_numbers"])
    return outs if spec is None else [typed(outs[0], spec, mesh_of(avals))]
