"""The ``ragged_dot_general`` primitive: a ``dot_general`` whose lhs has one *ragged*
dimension split into consecutive groups by ``group_sizes`` (``jax.lax``'s semantics).

Three modes, by where the ragged dimension ``r`` of the lhs is:

* *non-contracting* (``r`` a free dimension): the rhs has one *group* dimension; the
  rows of group ``g`` along ``r`` are multiplied by the rhs slice ``g``;
* *contracting* (``r`` contracted): each group contracts its own rows only, and the
  result has a leading group dimension;
* *batch* (``r`` a batch dimension): the groups change nothing (a plain ``dot_general``).

``group_sizes`` has shape ``(g,)`` or ``(*prefix, g)``, where ``prefix`` are the lhs
dimensions before ``r`` that JAX lists (batch dimensions, then the free or contracted
dimensions before ``r``). Rows past the last group count in no group (zero rows).

The primitive lowers to ``jax.lax.ragged_dot_general``. Its derivative and batching
rules are written on the *dense* form: the ragged operand expanded to
``(g, *shape)`` with group ``g``'s rows kept and every other row zero, and a
``dot_general`` over it (contracting or batching the group dimension), so every rule is
a ``dot_general``/``select`` that transforms again (``g`` times the operand's memory).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import linalg, rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.reductions import cumsum, reduce_sum
from funcgrad.primitives.rules import rand

FAMILY = "linalg"

#: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` as int tuples
DotDims = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]


def _rest(n: int, *used: Sequence[int]) -> list[int]:
    taken = {d for u in used for d in u}
    return [d for d in range(n) if d not in taken]


def mode_of(ndim: int, dims: DotDims, ragged: int) -> str:
    """``'noncontracting'``, ``'contracting'`` or ``'batch'``: where the ragged dim is."""
    (lc, _), (lb, _) = dims
    if ragged in lc:
        return "contracting"
    if ragged in lb:
        return "batch"
    return "noncontracting"


def prefix_dims(mode: str, ndim: int, ragged: int, batch: Sequence[int], contract: Sequence[int]):
    """The operand dimensions ``group_sizes`` runs over before its group axis (JAX's)."""
    batch, contract = list(batch), list(contract)
    if mode == "noncontracting":
        free = _rest(ndim, contract, batch)
        return batch + free[: free.index(ragged)]
    if mode == "contracting":
        return batch + contract[: contract.index(ragged)]
    return batch[: batch.index(ragged)]


def _in_range(d: int, rank: int, what: str, arg: str) -> None:
    if not 0 <= d < rank:
        raise TypeError(
            f"ragged_dot_general requires {what} numbers to be nonnegative and less than the "
            f"number of axes of the {arg} value, got {d} for {arg} of rank {rank}."
        )


ragged_dot_general_p = Primitive("ragged_dot_general", family=FAMILY)


@ragged_dot_general_p.def_abstract_eval
def _abstract_eval(
    lhs: Aval,
    rhs: Aval,
    group_sizes: Aval,
    *,
    dimension_numbers: DotDims,
    lhs_ragged: int,
    rhs_group: tuple[int, ...],
    preferred_element_type: Any = None,
) -> Aval:
    _in_range(lhs_ragged, lhs.ndim, "lhs ragged dimension", "lhs")
    mode = mode_of(lhs.ndim, dimension_numbers, lhs_ragged)
    (lc, rc), (lb, rb) = dimension_numbers
    if group_sizes.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.ndim != 1:
        want = tuple(lhs.shape[i] for i in prefix_dims(mode, lhs.ndim, lhs_ragged, lb, lc))
        want += (group_sizes.shape[-1],)
        if group_sizes.shape != want:
            raise TypeError(f"expected group_sizes to have shape {want}, got {group_sizes.shape}.")
    g = group_sizes.shape[-1]
    if mode != "noncontracting":
        if rhs_group:
            raise TypeError(
                "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged "
                "dimension is contracting or batch."
            )
    else:
        if len(rhs_group) != 1:
            raise TypeError(
                "ragged_dot_general requires exactly one rhs group dimension when lhs ragged "
                "dimension is noncontracting."
            )
        (rg,) = rhs_group
        _in_range(rg, rhs.ndim, "rhs group dimension", "rhs")
        if rg in rb or rg in rc:
            raise TypeError(
                "ragged_dot_general requires rhs group dimension numbers to be distinct from "
                "contracting and batch dimensions."
            )
        if rhs.shape[rg] != g:
            raise TypeError(f"expected rhs group dimension size to be {g}, got {rhs.shape[rg]}.")
    if not np.issubdtype(group_sizes.dtype, np.integer):
        raise TypeError(
            "ragged_dot_general requires that group_sizes.dtype is subtype of np.integer."
        )
    # the rhs group dimension is no free dimension of the result
    rhs_view = rhs
    if rhs_group:
        rhs_view = Aval(tuple(n for i, n in enumerate(rhs.shape) if i != rhs_group[0]), rhs.dtype)
        dims = ((lc, _drop(rc, rhs_group[0])), (lb, _drop(rb, rhs_group[0])))
    else:
        dims = dimension_numbers
    out = linalg.dot_general_p.abstract_eval(
        lhs, rhs_view, dimension_numbers=dims, preferred_element_type=preferred_element_type
    )
    if mode == "contracting":
        out = Aval((g, *out.shape), out.dtype, out.weak_type)
    return Aval(out.shape, out.dtype, False)


def _drop(dims: Sequence[int], gone: int) -> tuple[int, ...]:
    """``dims`` of the rhs renumbered with dimension ``gone`` taken out."""
    return tuple(d - (d > gone) for d in dims)


@ragged_dot_general_p.def_lower
def _lower(lhs, rhs, group_sizes, *, dimension_numbers, lhs_ragged, rhs_group, **kw: Any):
    rdn = lax.RaggedDotDimensionNumbers(dimension_numbers, (lhs_ragged,), rhs_group)
    dtype = np.result_type(lhs.dtype, rhs.dtype)  # (both operands in one type, as dot's)
    lhs, rhs = lax.convert_element_type(lhs, dtype), lax.convert_element_type(rhs, dtype)
    return lax.ragged_dot_general(lhs, rhs, group_sizes, rdn, **kw)


# ----------------------------------------------------------------------- dense form


def _dense(x: Any, dim: int, gs: Any, prefix: Sequence[int]) -> Any:
    """``x`` as ``(g, *x.shape)``: slice ``g`` keeps the rows of group ``g`` along ``dim``
    (``gs`` of shape ``(g,)``, or ``(*x.shape[prefix], g)``) and zeros the others."""
    xa = to_aval(x)
    shape = (to_aval(gs).shape[-1], *xa.shape)
    keep = _group_mask(shape, dim, gs, prefix)
    spread = sh.broadcast_in_dim(x, shape, tuple(range(1, xa.ndim + 1)))
    return ew.select_n(keep, sh.full(shape, 0, xa.dtype), spread)


def _group_mask(shape: tuple[int, ...], dim: int, gs: Any, prefix: Sequence[int]) -> Any:
    """Booleans of ``shape`` (``(g, *x.shape)``): whether row ``i`` along ``dim`` is in
    group ``g``."""
    ga = to_aval(gs)
    ends = cumsum(gs, axis=ga.ndim - 1)
    starts = ew.sub(ends, gs)
    if ga.ndim > 1:  # the group axis first, then the prefix dimensions where x has them
        perm = (ga.ndim - 1, *range(ga.ndim - 1))
        ends, starts = sh.transpose(ends, perm), sh.transpose(starts, perm)
    where = (0, *(1 + p for p in prefix)) if ga.ndim > 1 else (0,)
    ends, starts = (sh.broadcast_in_dim(v, shape, where) for v in (ends, starts))
    rows = sh.iota(ga.dtype, shape, dim + 1)
    return ew.bitwise_and(ew.ge(rows, starts), ew.lt(rows, ends))


def _undense(d: Any, dim: int, gs: Any, prefix: Sequence[int]) -> Any:
    """The transpose of :func:`_dense`: each group's kept rows summed into one array."""
    da = to_aval(d)
    keep = _group_mask(da.shape, dim, gs, prefix)
    return reduce_sum(ew.select_n(keep, sh.full(da.shape, 0, da.dtype), d), (0,))


def _inc(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _plan(lhs: Aval, rhs: Aval, dims: DotDims, ragged: int, rhs_group: tuple) -> tuple:
    """How the primitive is a ``dot_general`` of dense forms: ``(mode, lhs prefix, rhs
    ragged dim and prefix, the dense dot's dimension numbers)``."""
    (lc, rc), (lb, rb) = dims
    mode = mode_of(lhs.ndim, dims, ragged)
    lp = prefix_dims(mode, lhs.ndim, ragged, lb, lc)
    if mode == "noncontracting":
        dense_dims = ((_inc(lc) + (0,), (*rc, rhs_group[0])), (_inc(lb), tuple(rb)))
        return mode, lp, None, None, dense_dims
    if mode == "contracting":
        rr = rc[lc.index(ragged)]
        rp = prefix_dims(mode, rhs.ndim, rr, rb, rc)
        dense_dims = ((_inc(lc), _inc(rc)), ((0, *_inc(lb)), (0, *_inc(rb))))
        return mode, lp, rr, rp, dense_dims
    return mode, lp, None, None, dims


def _as_dense(lhs: Any, rhs: Any, gs: Any, dims: DotDims, ragged: int, rhs_group: tuple):
    """``(dense lhs, dense rhs, the dense dot's numbers)`` with ``gs`` broadcast over the
    lhs prefix as JAX reads a ``(g,)`` group_sizes."""
    la, ra = to_aval(lhs), to_aval(rhs)
    mode, lp, rr, rp, ddims = _plan(la, ra, dims, ragged, rhs_group)
    if mode == "batch":
        return lhs, rhs, ddims, None
    gs = _full_sizes(gs, la, lp)
    dl = _dense(lhs, ragged, gs, lp)
    dr = _dense(rhs, rr, gs, rp) if mode == "contracting" else rhs
    return dl, dr, ddims, (gs, lp, rr, rp)


def _full_sizes(gs: Any, la: Aval, prefix: Sequence[int]) -> Any:
    ga = to_aval(gs)
    if ga.ndim == 1 and prefix:
        shape = (*(la.shape[p] for p in prefix), ga.shape[0])
        gs = sh.broadcast_in_dim(gs, shape, (len(shape) - 1,))
    return gs


# ----------------------------------------------------------------------- rules


@ragged_dot_general_p.def_jvp
def _jvp(primals: list, tangents: list, **p: Any) -> tuple:
    (lhs, rhs, gs), (tl, tr, _) = primals, tangents
    out = bind(ragged_dot_general_p, lhs, rhs, gs, **p)
    t: Any = Zero(to_aval(out).strip_weak())
    if not is_zero(tl):
        t = rules.add_tangents(t, bind(ragged_dot_general_p, tl, rhs, gs, **p))
    if not is_zero(tr):
        t = rules.add_tangents(t, bind(ragged_dot_general_p, lhs, tr, gs, **p))
    return out, t


@ragged_dot_general_p.def_vjp
def _vjp(ct: Any, lhs: Any, rhs: Any, gs: Any, *, out: Any, **p: Any) -> tuple:
    dims, ragged, rg = p["dimension_numbers"], p["lhs_ragged"], p["rhs_group"]
    dl, dr, ddims, how = _as_dense(lhs, rhs, gs, dims, ragged, rg)
    gl, gr = linalg.dot_general_p.vjp(ct, dl, dr, out=None, dimension_numbers=ddims)
    if how is not None:
        sizes, lp, rr, rp = how
        gl = None if gl is None else _undense(gl, ragged, sizes, lp)
        if rr is not None and gr is not None:
            gr = _undense(gr, rr, sizes, rp)
    return gl, gr, None


@ragged_dot_general_p.def_batch
def _batch(args: list, bdims: list, **p: Any) -> tuple:
    """A new leading dot batch dimension on both operands (an unbatched one broadcast),
    and on ``group_sizes`` (whose prefix starts with the lhs batch dimensions)."""
    n = rules.batch_size(args, bdims)
    lhs, rhs, gs = (rules.bdim_to_front(a, d, n) for a, d in zip(args, bdims))
    dims, ragged, rg = p["dimension_numbers"], p["lhs_ragged"], p["rhs_group"]
    (lc, rc), (lb, rb) = dims
    la = to_aval(lhs)
    mode = mode_of(la.ndim - 1, dims, ragged)
    lp = prefix_dims(mode, la.ndim - 1, ragged, lb, lc)
    ga = to_aval(gs)
    if ga.ndim == 2 and lp:  # (n, g): its prefix (the lhs's) broadcast in between
        shape = (n, *(la.shape[1 + d] for d in lp), ga.shape[-1])
        gs = sh.broadcast_in_dim(gs, shape, (0, len(shape) - 1))
    new = dict(
        p,
        dimension_numbers=((_inc(lc), _inc(rc)), ((0, *_inc(lb)), (0, *_inc(rb)))),
        lhs_ragged=ragged + 1,
        rhs_group=_inc(rg),
    )
    out = bind(ragged_dot_general_p, lhs, rhs, gs, **new)
    return out, (1 if mode == "contracting" else 0)


def _host(lhs, rhs, gs, *, dimension_numbers, lhs_ragged, rhs_group, preferred_element_type=None):
    """NumPy: the dense form (each group's rows masked) and one ``dot_general``."""
    lhs, rhs, gs = np.asarray(lhs), np.asarray(rhs), np.asarray(gs)
    mode, lp, rr, rp, ddims = _plan(
        Aval(lhs.shape, lhs.dtype),
        Aval(rhs.shape, rhs.dtype),
        dimension_numbers,
        lhs_ragged,
        rhs_group,
    )
    dot = linalg.dot_general_p.host
    if mode == "batch":
        return dot(lhs, rhs, dimension_numbers=ddims, preferred_element_type=preferred_element_type)
    if gs.ndim == 1 and lp:
        gs = np.broadcast_to(gs, (*(lhs.shape[d] for d in lp), gs.shape[0]))

    def dense(x: np.ndarray, dim: int, prefix: Sequence[int]) -> np.ndarray:
        ends = np.cumsum(gs, axis=-1)
        starts = ends - gs
        # (*prefix, g) -> (g, *x.shape) with ones where x has no prefix dimension
        order = [gs.ndim - 1, *range(gs.ndim - 1)]
        shape = [1] * (x.ndim + 1)
        shape[0] = gs.shape[-1]
        for k, d in enumerate(prefix):
            shape[1 + d] = gs.shape[k]
        ends = np.transpose(ends, order).reshape(shape)
        starts = np.transpose(starts, order).reshape(shape)
        rows = np.arange(x.shape[dim]).reshape(
            [-1 if i == dim + 1 else 1 for i in range(x.ndim + 1)]
        )
        keep = (rows >= starts) & (rows < ends)
        return np.where(keep, x[None], np.zeros((), x.dtype))

    dl = dense(lhs, lhs_ragged, lp)
    dr = dense(rhs, rr, rp) if mode == "contracting" else rhs
    return dot(dl, dr, dimension_numbers=ddims, preferred_element_type=preferred_element_type)


ragged_dot_general_p.host = _host


@ragged_dot_general_p.def_examples
def _examples(rng: np.random.Generator) -> list[Example]:
    def ex(ls, rs, sizes, dims, ragged, group) -> Example:
        return Example(
            [rand(rng, ls), rand(rng, rs), np.asarray(sizes, np.int32)],
            {"dimension_numbers": dims, "lhs_ragged": ragged, "rhs_group": group},
        )

    return [
        # (m, k) x (g, k, n): rows in groups of 2, 0 and 3 (one row in no group)
        ex((6, 3), (3, 3, 4), [2, 0, 3], (((1,), (1,)), ((), ())), 0, (0,)),
        # the contraction split into groups: a leading group dimension
        ex((4, 5), (5, 3), [2, 3], (((1,), (0,)), ((), ())), 1, ()),
        # with a batch dimension and per-batch group sizes
        ex((2, 5, 3), (2, 3, 4), [[1, 4], [3, 1]], (((2,), (1,)), ((0,), (0,))), 2, ()),
        # a batch dimension before the ragged free dimension, the group dim last in rhs
        ex((2, 4, 3), (2, 3, 5, 2), [[1, 3], [4, 0]], (((2,), (1,)), ((0,), (0,))), 1, (3,)),
    ]


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    dimension_numbers: DotDims,
    lhs_ragged: int,
    rhs_group: tuple[int, ...],
    preferred_element_type: Any = None,
) -> Any:
    """Bind ``ragged_dot_general`` (operands already arrays, dimension numbers checked)."""
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
    return bind(
        ragged_dot_general_p,
        lhs,
        rhs,
        group_sizes,
        dimension_numbers=dimension_numbers,
        lhs_ragged=lhs_ragged,
        rhs_group=tuple(rhs_group),
        preferred_element_type=pet,
    )
