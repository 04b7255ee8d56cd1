"""``shard_map``: per-device code over a device mesh, as one equation holding its body.

The body is a closed :class:`Program` over **local** values: its first inputs are the
tokens of the mesh's axes (one per axis, in ``mesh.axis_names`` order: the device's index
along it), then one input per operand, each a shard of the global operand as its
partition spec cuts it. ``in_specs``/``out_specs`` hold one normalised spec per operand
and per output: a tuple with, for each array dimension, the tuple of mesh axis names it
is split over (``()``: not split). An output whose spec leaves a mesh axis out is
replicated over it.

The rules work on the body as a whole, like the control-flow primitives:

* lowering: the body lowered under JAX's per-device map on the mesh (collectives lower
  to ``jax.lax``'s, the tokens to ``axis_index``), inside the enclosing ``jax.jit``;
* JVP: the body's JVP program, tangents sharded as their primals;
* VJP: the body's forward and backward programs, each one ``shard_map``; residuals
  leave the forward as one block per device (a leading axis split over every mesh
  axis). As JAX without varying-axes checks (``check_vma=False``), the cotangent of an
  output replicated over axes is divided by their size, and the cotangent of an
  operand replicated over axes is summed over them (``psum``) — so ``grad`` of a
  program equals ``grad`` of the same computation on one device;
* batching: the body batched, a batched operand split nowhere along its batch axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from funcgrad import ad, batching
from funcgrad.core import dtypes, sharding_types
from funcgrad.core.interp import bind, eval_program, new_builder, to_aval
from funcgrad.core.ir import Aval, Program, typed_sharding
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Primitive
from funcgrad.core.zeros import is_zero
from funcgrad.primitives import collectives as col
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.sharding import sharding_constraint_p

FAMILY = "shard_map"

Spec = tuple[tuple[Any, ...], ...]

shard_map_p = Primitive("shard_map", family=FAMILY, multiple_results=True, vjp_fwd_active=True)


# --------------------------------------------------------------------------- shapes


def factor(mesh: Any, names: Sequence[Any]) -> int:
    """The number of shards along a dimension split over the mesh axes ``names``."""
    return math.prod(mesh.shape[n] for n in names)


def local_aval(aval: Aval, spec: Spec, mesh: Any, what: str, fn: str | None = None) -> Aval:
    """One device's block of a global ``aval`` cut by ``spec`` (``what`` names it in errors,
    ``fn`` the mapped function)."""
    shape = list(aval.shape)
    for d, names in enumerate(spec):
        k = factor(mesh, names)
        if shape[d] % k:
            head = "shard_map" if fn is None else f"shard_map applied to the function '{fn}'"
            raise ValueError(
                f"{head}: {what} of shape {aval.shape} maps its dimension {d} (of size "
                f"{shape[d]}) to mesh axes {names} (of total size {k}), but {k} does not "
                f"evenly divide {shape[d]}: array sizes must be evenly divisible by the "
                "mesh axes their spec names"
            )
        shape[d] //= k
    return aval.update(shape=tuple(shape))


def global_aval(aval: Aval, spec: Spec, mesh: Any) -> Aval:
    """The global aval of local blocks ``aval`` assembled by ``spec``."""
    shape = list(aval.shape)
    for d, names in enumerate(spec):
        shape[d] *= factor(mesh, names)
    return aval.update(shape=tuple(shape))


def unmentioned(mesh: Any, spec: Spec) -> tuple:
    """The mesh axes ``spec`` does not split over (the value is replicated over them)."""
    used = {n for names in spec for n in names}
    return tuple(n for n in mesh.axis_names if n not in used)


def partition_spec(spec: Spec) -> PartitionSpec:
    """The JAX ``PartitionSpec`` of a normalised spec."""
    entries = [None if not n else n[0] if len(n) == 1 else n for n in spec]
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)


def close_body(prog: Program, ntok: int) -> tuple[Program, tuple]:
    """``prog`` with its constants as inputs right after the ``ntok`` tokens (they are
    operands replicated on every device), and the constants' values."""
    if not prog.constvars:
        return prog, ()
    invars = prog.invars[:ntok] + prog.constvars + prog.invars[ntok:]
    return Program(invars, (), prog.eqns, prog.outvars, ()), prog.consts


def trace_body(mesh: Any, fn: Any, local: Sequence[Aval]) -> Program:
    """Trace ``fn(tokens, *local values) -> list`` as a body (tokens first)."""
    with new_builder("shard_map") as b:
        toks = [b.new_arg(col.TOKEN_AVAL) for _ in mesh.axis_names]
        args = [b.new_arg(a) for a in local]
        return b.build(list(fn(toks, *args)))


def frames(mesh: Any, toks: Sequence[Any], vma: bool = False) -> list[col.AxisFrame]:
    """The axis frames of ``mesh`` whose tokens are ``toks`` (``vma``: the user's body of
    a ``shard_map`` with ``check_vma=True`` is being traced)."""
    return [col.AxisFrame(n, mesh.shape[n], t, vma) for n, t in zip(mesh.axis_names, toks)]


def _call(operands: Sequence[Any], body: Program, mesh, in_specs, out_specs, check_vma) -> list:
    return bind(
        shard_map_p,
        *operands,
        body=body,
        mesh=mesh,
        in_specs=tuple(in_specs),
        out_specs=tuple(out_specs),
        check_vma=check_vma,
    )


def _replicated(aval: Aval) -> Spec:
    return ((),) * aval.ndim


# --------------------------------------------------------------------------- rules


@shard_map_p.def_abstract_eval
def _abstract(*avals: Aval, body, mesh, in_specs, out_specs, check_vma) -> list[Aval]:
    ntok = len(mesh.axis_names)
    want = body.in_avals[ntok:]
    if len(avals) != len(want) or len(in_specs) != len(avals):
        raise TypeError(f"shard_map: expected {len(want)} operands, got {len(avals)}")
    for i, (a, spec, w) in enumerate(zip(avals, in_specs, want)):
        loc = local_aval(a, spec, mesh, f"operand {i}")
        if loc.shape != w.shape or loc.dtype != w.dtype:
            raise TypeError(f"shard_map: operand {i}'s block is {loc}, the body expects {w}")
    return [global_aval(a, s, mesh) for a, s in zip(body.out_avals, out_specs)]


def _sharding_rule(avals: list, outs: list, *, mesh, out_specs, **_: Any) -> list:
    """The outputs typed with their ``out_specs`` over the mesh's explicit axes."""
    return [
        o.update(sharding=typed_sharding(NamedSharding(mesh, partition_spec(s)), o.ndim))
        for o, s in zip(outs, out_specs)
    ]


shard_map_p.sharding_rule = _sharding_rule


@shard_map_p.def_lower
def _lower(*vals: Any, body, mesh, in_specs, out_specs, check_vma) -> list:
    fn = lower_program(body)
    names = mesh.axis_names

    def per_device(*xs: Any) -> tuple:
        toks = [jax.lax.axis_index(n) for n in names]
        return tuple(fn(*toks, *xs))

    mapped = jax.shard_map(
        per_device,
        mesh=mesh,
        in_specs=tuple(partition_spec(s) for s in in_specs),
        out_specs=tuple(partition_spec(s) for s in out_specs),
        check_vma=False,  # funcgrad checked replication on its own program
    )
    return list(mapped(*vals))


@shard_map_p.def_jvp
def _jvp(primals: list, tangents: list, *, body, mesh, in_specs, out_specs, check_vma):
    ntok = len(mesh.axis_names)
    nz = [not is_zero(t) for t in tangents]
    jprog, out_nz = ad.jvp_program(body, [False] * ntok + nz)
    jprog, consts = close_body(jprog, ntok)
    specs_in = [
        *[_replicated(to_aval(c)) for c in consts],
        *in_specs,
        *[s for s, z in zip(in_specs, nz) if z],
    ]
    specs_out = [*out_specs, *[s for s, z in zip(out_specs, out_nz) if z]]
    operands = [*consts, *primals, *[t for t in tangents if not is_zero(t)]]
    outs = _call(operands, jprog, mesh, specs_in, specs_out, check_vma)
    n = len(out_specs)
    rest = iter(outs[n:])
    return outs[:n], [next(rest) if z else rules.zero_of(o) for z, o in zip(out_nz, outs[:n])]


def _residual_spec(mesh: Any, aval: Aval) -> Spec:
    """A residual leaves the forward as one block per device: a new leading axis split
    over every mesh axis."""
    return (tuple(mesh.axis_names),) + ((),) * aval.ndim


def _vjp_fwd(*primals: Any, body, mesh, in_specs, out_specs, check_vma, active=None) -> tuple:
    ntok = len(mesh.axis_names)
    vp = ad.vjp_program(body, active=None if active is None else [False] * ntok + list(active))
    n = len(out_specs)
    fwd, consts = close_body(vp.fwd, ntok)
    # a residual that is a token needs no block: the backward map has the same tokens
    where = {id(v): k for k, v in enumerate(fwd.invars[:ntok])}
    kinds = [where.get(id(r)) for r in fwd.outvars[n:]]
    res_avals = [a for a, k in zip(fwd.out_avals[n:], kinds) if k is None]

    def blocks(toks: list, *args: Any) -> list:
        outs = eval_program(fwd, *toks, *args)
        res = [r for r, k in zip(outs[n:], kinds) if k is None]
        return outs[:n] + [sh.reshape(r, (1, *to_aval(r).shape)) for r in res]

    fwd = trace_body(mesh, blocks, fwd.in_avals[ntok:])
    specs_in = [*[_replicated(to_aval(c)) for c in consts], *in_specs]
    specs_out = [*out_specs, *[_residual_spec(mesh, a) for a in res_avals]]
    outs = _call([*consts, *primals], fwd, mesh, specs_in, specs_out, check_vma)
    return outs[:n], (vp, outs[n:], res_avals, kinds)


def _vjp_bwd(res: tuple, cts: list, *, body, mesh, in_specs, out_specs, check_vma) -> list:
    vp, residuals, res_avals, kinds = res
    ntok = len(mesh.axis_names)
    out_local = body.out_avals
    nz_in = [not z for z in vp.zero_cts[ntok:]]
    live = [not is_zero(c) for c in cts]
    # the blocks of the nonzero cotangents only (a symbolic zero has no array to cut)
    ct_avals = [
        local_aval(to_aval(c), s, mesh, "a cotangent")
        for c, s, on in zip(cts, out_specs, live)
        if on
    ]

    def backward(toks: list, *args: Any) -> list:
        fr = frames(mesh, toks)
        blocks = iter(sh.reshape(r, a.shape) for r, a in zip(args, res_avals))
        res_vals = [next(blocks) if k is None else toks[k] for k in kinds]
        it = iter(args[len(res_avals) :])
        ct_vals = []
        for a, s, on in zip(out_local, out_specs, live):
            if not on:
                ct_vals.append(rules.zeros_like_aval(a.strip_weak()))
                continue
            c = next(it)
            k = factor(mesh, unmentioned(mesh, s))
            if k > 1 and dtypes.is_inexact(a.dtype):  # every device holds the cotangent
                c = ew.div(c, np.array(k, to_aval(c).dtype))
            ct_vals.append(c)
        in_cts = eval_program(vp.bwd, *res_vals, *ct_vals)[ntok:]
        outs = []
        for c, s, on in zip(in_cts, in_specs, nz_in):
            if not on:
                continue
            axes = unmentioned(mesh, s)
            if axes:  # the operand is replicated over these axes: sum what each device got
                c = col.all_reduce(col.psum_p, c, [f for f in fr if f.name in axes])
            outs.append(c)
        return outs

    res_specs = [_residual_spec(mesh, a) for a in res_avals]
    res_blocks = [a.update(shape=(1, *a.shape)) for a in res_avals]
    local = [*res_blocks, *ct_avals]
    bprog, consts = close_body(trace_body(mesh, backward, local), ntok)
    specs_in = [
        *[_replicated(to_aval(c)) for c in consts],
        *res_specs,
        *[s for s, on in zip(out_specs, live) if on],
    ]
    specs_out = [s for s, on in zip(in_specs, nz_in) if on]
    live_cts = [_typed_as(c, s, mesh) for c, s in zip(cts, out_specs) if not is_zero(c)]
    operands = [*consts, *residuals, *live_cts]
    outs = iter(_call(operands, bprog, mesh, specs_in, specs_out, check_vma))
    return [next(outs) if on else None for on in nz_in]


def _typed_as(ct: Any, spec: Spec, mesh: Any) -> Any:
    """A cotangent split as its output is, over a mesh whose axes are all explicit (JAX
    checks the operands' types against ``in_specs`` there): one computed untyped (e.g.
    a reduction's broadcast seed) is resharded."""
    types = tuple(getattr(mesh, "axis_types", ()) or ())
    if not types or any(t != AxisType.Explicit for t in types):
        return ct
    want = tuple(None if not names else names[0] if len(names) == 1 else names for names in spec)
    got = sharding_types.spec_of(sharding_types.typeof(ct, to_aval(ct)))
    if tuple(got) == want:
        return ct
    target = NamedSharding(mesh, partition_spec(spec))
    return bind(sharding_constraint_p, ct, sharding=target, kind="reshard")


shard_map_p.vjp_fwd = _vjp_fwd
shard_map_p.vjp_bwd = _vjp_bwd


@shard_map_p.def_batch
def _batch(args: list, dims: list, *, body, mesh, in_specs, out_specs, check_vma) -> tuple:
    ntok = len(mesh.axis_names)
    size = rules.batch_size(args, dims)
    args = [a if d is None else rules.moveaxis(a, d, 0) for a, d in zip(args, dims)]
    bdims = [None if d is None else 0 for d in dims]
    with new_builder("vmap") as b:
        ins = [
            b.new_arg(batching.batched_aval(a, d, size))
            for a, d in zip(body.in_avals, [None] * ntok + bdims)
        ]
        outs, ods = batching.batch_eval(body, ins, [None] * ntok + bdims)
        out_dims = [None if d is None else 0 for d in ods]
        outs = [batching.move_dim(o, d, t, size) for o, d, t in zip(outs, ods, out_dims)]
        bprog = b.build(outs)
    bprog, consts = close_body(bprog, ntok)
    specs_in = [
        *[_replicated(to_aval(c)) for c in consts],
        *[s if d is None else ((), *s) for s, d in zip(in_specs, bdims)],
    ]
    specs_out = [s if d is None else ((), *s) for s, d in zip(out_specs, out_dims)]
    return _call([*consts, *args], bprog, mesh, specs_in, specs_out, check_vma), out_dims


shard_map_p.def_examples(col.no_examples)
