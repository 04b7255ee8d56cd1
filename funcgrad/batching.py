"""Vectorisation (``vmap``) as an IR → IR rewrite driven by each primitive's batching rule.

A batched value carries one batch axis, at any position (``dim``), or none
(``None``: the same for every example). Rules move the batch axis only when
they must.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.core import ad_util, tiers
from funcgrad.core.interp import (
    UNKNOWN,
    _state,
    bind,
    is_tracing,
    keeps_source,
    new_builder,
    to_aval,
)
from funcgrad.core.ir import Aval, Program, Var
from funcgrad.tree_util import tree_flatten, tree_unflatten


@keeps_source
def batch_eval(
    prog: Program, args: Sequence[Any], dims: Sequence[int | None]
) -> tuple[list[Any], list[int | None]]:
    """Evaluate ``prog`` on batched ``args`` under the current interpreter."""
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    denv: dict[Var, int | None] = {}
    env.update(zip(prog.invars, args))
    denv.update(zip(prog.invars, dims))
    st = _state
    for e in prog.eqns:
        if e.source:
            st.source = e.source
        ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
        ds = [denv.get(a) if type(a) is Var else None for a in e.inputs]
        prim = e.prim
        if all(d is None for d in ds):
            out = bind(prim, *ins, **e.params)
            outs = out if prim.multiple_results else [out]
            out_ds: list[int | None] = [None] * len(outs)
        else:
            if prim.batch is None:
                raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
            out, od = prim.batch(ins, ds, **e.params)
            outs = list(out) if prim.multiple_results else [out]
            out_ds = list(od) if prim.multiple_results else [od]
        for v, o, d in zip(e.outvars, outs, out_ds):
            env[v] = o
            denv[v] = d
    outs = [env[a] if type(a) is Var else a.val for a in prog.outvars]
    return outs, [denv.get(a) if type(a) is Var else None for a in prog.outvars]


def unbatched_aval(aval: Aval, dim: int | None) -> Aval:
    """``aval`` with its batch axis ``dim`` removed (unchanged when ``dim`` is ``None``)."""
    if dim is None:
        return aval
    shape = list(aval.shape)
    shape.pop(dim)
    s = aval.sharding
    if s is None:
        return aval.update(shape=tuple(shape))
    # (a value split over explicit axes keeps its other dimensions' splits, as JAX types
    # the values a vmapped function sees)
    parts = list(s.spec.partitions)
    del parts[dim]
    kept = type(s)(s.mesh, s.spec.update(partitions=tuple(parts)))
    return aval.update(shape=tuple(shape), sharding=kept)


def batched_aval(aval: Aval, dim: int | None, size: int) -> Aval:
    """``aval`` with a batch axis of length ``size`` inserted at ``dim`` (unchanged when
    ``dim`` is ``None``)."""
    if dim is None:
        return aval
    shape = list(aval.shape)
    shape.insert(dim, size)
    return aval.update(shape=tuple(shape))


def move_dim(x: Any, src: int | None, dst: int | None, size: int) -> Any:
    """Put ``x``'s batch axis at ``dst`` (broadcasting an unbatched ``x``); ``dst=None`` requires unbatched."""
    if dst is None:
        if src is not None:
            raise ValueError("cannot unbatch a batched value")
        return x
    if src is None:
        x = ad_util.bdim_to_front(x, None, size)
        src = 0
    return ad_util.moveaxis(x, src, dst)


def batch_program(
    prog: Program,
    in_dims: Sequence[int | None],
    size: int,
    out_dims: Sequence[int | None] | None = None,
) -> tuple[Program, list[int | None]]:
    """The batched program. With ``out_dims`` given, outputs are moved there
    (a ``0`` forces a batch axis even on outputs that came out unbatched)."""
    with new_builder("vmap") as b:
        args = [b.new_arg(batched_aval(a, d, size)) for a, d in zip(prog.in_avals, in_dims)]
        outs, ods = batch_eval(prog, args, in_dims)
        if out_dims is not None:
            outs = [move_dim(o, d, t, size) for o, d, t in zip(outs, ods, out_dims)]
            ods = list(out_dims)
        new = b.build(outs)
    return new, ods


def batch_size_of(x: Any, dim: int) -> int:
    """The length of ``x``'s axis ``dim`` (its batch size when ``dim`` is its batch axis)."""
    return to_aval(x).shape[dim]


def vmap_leading(fun: Callable[..., Any], *args: Any) -> Any:
    """``fun`` vectorised over axis 0 of every array leaf of ``args`` (pytrees), with
    every output batched at axis 0: the program-level ``vmap`` that primitive rules
    use (they sit below the user API and may not import it)."""
    leaves, in_tree = tree_flatten(args)
    size = to_aval(leaves[0]).shape[0]
    avals = [unbatched_aval(to_aval(x), 0) for x in leaves]
    with new_builder("vmap") as b:
        out = fun(*tree_unflatten(in_tree, [b.new_arg(a, UNKNOWN) for a in avals]))
        out_leaves, out_tree = tree_flatten(out)
        prog = b.build(out_leaves)
    dims = [0] * len(leaves)
    if is_tracing():
        outs, ods = batch_eval(prog, leaves, dims)
    else:  # eagerly: one (cached, compiled once it recurs) batched program
        bprog, ods = batch_program(prog, dims, size)
        outs = tiers.run(bprog, *leaves)
    return tree_unflatten(out_tree, [move_dim(o, d, 0, size) for o, d in zip(outs, ods)])
