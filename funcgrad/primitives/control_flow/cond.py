"""``cond``: run one of several closed branch programs, chosen by an int32 index
(``fg.cond`` turns a boolean predicate into 0/1, ``fg.switch`` clamps)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad import ad, batching, passes
from funcgrad.core import dtypes, sharding_types, tiers
from funcgrad.core.interp import bind, eval_program, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.calls import close, host_inputs
from funcgrad.primitives.control_flow.common import (
    FAMILY,
    _check_inputs,
    _desc,
    _is_float,
    _jvp_instantiated,
    _run,
    _same,
    _strong,
    _tangents_out,
    _zeros,
    join_consts,
    trace_program,
)
from funcgrad.primitives.custom_calls import custom_jvp_call_p
from funcgrad.primitives.rules import rand
from funcgrad.primitives.shape import broadcast_in_dim
from funcgrad.primitives.sharding import typed_as

cond_p = Primitive("cond", family=FAMILY, multiple_results=True)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index: Aval, *ops: Aval, branches: tuple[Program, ...]) -> list[Aval]:
    if not branches:
        raise TypeError("cond: needs at least one branch")
    if index.shape != () or not dtypes.is_integer(index.dtype):
        raise TypeError(f"cond: the branch index must be an integer scalar, got {index}")
    out0 = branches[0].out_avals
    for i, b in enumerate(branches):
        if b.constvars:
            raise TypeError(f"cond: branch {i} is not a closed program")
        _check_inputs("cond", f"branch {i}", ops, b.in_avals)
        outs = b.out_avals
        if len(outs) != len(out0):
            raise TypeError(
                f"cond: branch 0 returns {len(out0)} outputs but branch {i} returns {len(outs)}"
            )
        for k, (a, o) in enumerate(zip(out0, outs)):
            if not _same(a, o):
                raise TypeError(
                    f"cond: branches must return identical types, but output {k} has "
                    f"{_desc(a)} in branch 0 and {_desc(o)} in branch {i}"
                )
    return [a.strip_weak() for a in out0]


def _cond_prune(used: list[bool], *, branches: tuple[Program, ...]) -> dict:
    return {"branches": tuple(passes.dce(b, used) for b in branches)}


cond_p.prune_outputs = _cond_prune


@cond_p.def_lower
def _cond_lower(index: Any, *ops: Any, branches: tuple[Program, ...]) -> list:
    out_avals = [a.strip_weak() for a in branches[0].out_avals]

    def branch_fn(prog: Program) -> Callable:
        fn = lower_program(prog)
        return lambda *xs: [_strong(o, a) for o, a in zip(fn(*xs), out_avals)]

    def run(index: Any, *ops: Any) -> list:
        fns = [branch_fn(b) for b in branches]
        if len(fns) == 1:
            return fns[0](*ops)
        return list(lax.switch(index, fns, *ops))

    return _run("cond", {"branches": branches}, run, [index, *ops])


@cond_p.def_host
def _cond_host(index: Any, *ops: Any, branches: tuple[Program, ...]) -> list:
    # the index as int32 (wrapping, as a conversion does) clamped into range, as the
    # lowering's lax.switch makes it
    i = int(np.asarray(index).astype(np.int32, copy=False))
    n = len(branches)
    b = branches[0 if i < 0 else n - 1 if i >= n else i]
    return tiers.host_eval(b, *host_inputs(b.invars, ops))


@cond_p.def_jvp
def _cond_jvp(primals: list, tangents: list, *, branches: tuple[Program, ...]) -> tuple:
    index, *ops = primals
    tops = tangents[1:]
    nz = [not is_zero(t) and _is_float(to_aval(x)) for x, t in zip(ops, tops)]
    out_avals = branches[0].out_avals
    out_nz = [False] * len(out_avals)
    for b in branches:
        _, onz = ad.jvp_program(b, nz)
        out_nz = [a or c for a, c in zip(out_nz, onz)]
    items = []
    for b in branches:
        jb, consts, _ = _jvp_instantiated(b, nz, out_nz)
        items.append((jb, consts))
    progs, consts = join_consts(items)
    ts = [t for t, z in zip(tops, nz) if z]
    outs = bind(cond_p, index, *consts, *ops, *ts, branches=tuple(progs))
    return _tangents_out(outs, len(out_avals), out_nz, out_avals)


def _typed_zeros(a: Aval) -> Any:
    """Zeros of ``a`` typed as ``a`` (another branch's residual: branches' outputs must
    agree in type)."""
    return typed_as(_zeros(a), a.sharding)


def _cond_vjp_fwd(index: Any, *ops: Any, branches: tuple[Program, ...]) -> tuple:
    out_avals = branches[0].out_avals
    n_out = len(out_avals)
    if not any(_is_float(to_aval(x)) for x in ops):
        return bind(cond_p, index, *ops, branches=branches), None
    mask = [_is_float(a) for a in out_avals]
    vps = [ad.vjp_program(b, mask) for b in branches]
    res_avals = [[v.aval for v in vp.fwd.outvars[n_out:]] for vp in vps]
    items = []
    for i, vp in enumerate(vps):
        fwd, fconsts = close(vp.fwd)

        def padded(*args: Any, fwd: Program = fwd, i: int = i) -> list:
            outs = eval_program(fwd, *args)
            res: list = []
            for j, avals in enumerate(res_avals):
                res.extend(outs[n_out:] if j == i else [_typed_zeros(a) for a in avals])
            return outs[:n_out] + res

        prog, extra = trace_program(padded, fwd.in_avals, "vjp")
        items.append((prog, (*extra, *fconsts)))
    progs, consts = join_consts(items)
    outs = bind(cond_p, index, *consts, *ops, branches=tuple(progs))
    return outs[:n_out], (index, outs[n_out:], vps)


def _cond_vjp_bwd(res: Any, cts: list, *, branches: tuple[Program, ...]) -> list:
    n_ops = len(branches[0].invars)
    if res is None:
        return [None] * (1 + n_ops)
    index, residuals, vps = res
    out_avals = branches[0].out_avals
    cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, out_avals) if _is_float(a)]
    counts = [vp.num_res for vp in vps]
    res_avals = [to_aval(r) for r in residuals]
    ct_avals = [to_aval(c) for c in cts]
    items = []
    for i, vp in enumerate(vps):
        bwd, bconsts = close(vp.bwd)
        start = sum(counts[:i])

        def fn(
            *args: Any, bwd: Program = bwd, start: int = start, k: int = counts[i], i: int = i
        ) -> list:
            nb = len(bwd.invars) - k - len(ct_avals)
            bc, rs, cs = (
                args[:nb],
                args[nb : nb + len(res_avals)],
                args[nb + len(res_avals) :],
            )
            outs = eval_program(bwd, *bc, *rs[start : start + k], *cs)
            # (each branch's cotangents typed as their primals' cotangents, as JAX's
            # transposes give them: a zero of one branch beside a partial sum of another)
            return list(sharding_types.cast_cotangents(branches[i].invars, outs))

        avals = [v.aval for v in bwd.invars[: len(bconsts)]] + res_avals + ct_avals
        prog, extra = trace_program(fn, avals, "vjp")
        items.append((prog, (*extra, *bconsts)))
    progs, consts = join_consts(items)
    in_cts = bind(cond_p, index, *consts, *residuals, *cts, branches=tuple(progs))
    zero = [all(vp.zero_cts[j] for vp in vps) for j in range(n_ops)]
    return [None] + [
        None if z or not _is_float(v.aval) else c
        for c, z, v in zip(in_cts, zero, branches[0].invars)
    ]


cond_p.vjp_fwd = _cond_vjp_fwd
cond_p.vjp_bwd = _cond_vjp_bwd


def _taken_only_jvp(primals: list, tangents: list) -> tuple:
    """The tangent of ``x`` where ``keep`` is true along the leading axis, else zero."""
    x, keep = primals
    t = rules.instantiate(tangents[0], to_aval(x).strip_weak())
    shape = to_aval(x).shape
    mask = broadcast_in_dim(keep, shape, (0,)) if len(shape) > 1 else keep
    return [x], [ew.select_n(mask, rules.zeros_like_aval(to_aval(t)), t)]


def _taken_only(x: Any, keep: Any) -> Any:
    """``x``, with (co)tangents zeroed (by selection, not multiplication) where
    ``keep`` is false along the leading batch axis."""
    identity, _ = trace_program(lambda a, k: [a], [to_aval(x), to_aval(keep)], "cond")
    return bind(custom_jvp_call_p, x, keep, program=identity, jvp=_taken_only_jvp)[0]


@cond_p.def_batch
def _cond_batch(args: list, dims: list, *, branches: tuple[Program, ...]) -> tuple:
    index, *ops = args
    idim, *odims = dims
    size = rules.batch_size(args, dims)
    n_out = len(branches[0].outvars)
    if idim is not None and any(passes.has_io_callback(b) for b in branches):
        # every branch runs for every example: a callback would run where not taken
        raise NotImplementedError("IO effect not supported in vmap-of-cond.")
    if idim is not None:
        # a per-example branch: evaluate every branch, then select per example. Each
        # branch sees its operands through an identity whose derivative is masked to
        # the examples that take it, so a branch's backward pass at the examples that
        # do not (log at 0, sqrt of a negative) cannot leak NaN into the gradient
        idx = rules.moveaxis(index, idim, 0)
        idx = ew.min(ew.max(idx, 0), len(branches) - 1)
        per_branch = []
        if len(branches) > 1:
            ops = [rules.bdim_to_front(o, d, size) for o, d in zip(ops, odims)]
            odims = [0] * len(ops)
        for k, b in enumerate(branches):
            ins = ops
            if len(branches) > 1:
                keep = ew.eq(idx, ew.convert_element_type(k, to_aval(idx).dtype))
                ins = [
                    _taken_only(o, keep) if dtypes.is_inexact(to_aval(o).dtype) else o for o in ops
                ]
            outs, ods = batching.batch_eval(b, ins, odims)
            per_branch.append([batching.move_dim(o, d, 0, size) for o, d in zip(outs, ods)])
        results = []
        for k in range(n_out):
            cases = [outs[k] for outs in per_branch]
            if len(cases) == 1:
                results.append(cases[0])
                continue
            shape = to_aval(cases[0]).shape
            which = broadcast_in_dim(idx, shape, (0,)) if len(shape) > 1 else idx
            results.append(ew.select_n(which, *cases))
        return results, [0] * n_out
    out_b = [False] * n_out
    for b in branches:
        _, ods = batching.batch_program(b, odims, size)
        out_b = [x or d is not None for x, d in zip(out_b, ods)]
    out_dims = [0 if x else None for x in out_b]
    items = []
    for b in branches:
        bp, _ = batching.batch_program(b, odims, size, out_dims=out_dims)
        items.append(close(bp))
    progs, consts = join_consts(items)
    outs = bind(cond_p, index, *consts, *ops, branches=tuple(progs))
    return outs, out_dims


@cond_p.def_examples
def _cond_examples(rng: np.random.Generator) -> list[Example]:
    f64 = np.dtype("float64")
    avals = [Aval((3,), f64), Aval((3,), f64)]
    b0, _ = trace_program(lambda x, y: [ew.mul(ew.sin(x), y), x], avals, "cond")
    b1, _ = trace_program(lambda x, y: [ew.sub(ew.exp(x), y), ew.cos(y)], avals, "cond")
    b2, _ = trace_program(lambda x, y: [ew.mul(x, y), ew.mul(y, y)], avals, "cond")
    x, y = rand(rng, (3,)), rand(rng, (3,))
    return [
        Example([np.int32(0), x, y], {"branches": (b0, b1)}),
        Example([np.int32(1), x, y], {"branches": (b0, b1)}),
        Example([np.int32(2), x, y], {"branches": (b0, b1, b2)}),
    ]


def cond(index: Any, *operands: Any, branches: Sequence[Program]) -> list:
    """``branches[index](*operands)`` for closed branch programs (lax-level)."""
    return bind(cond_p, index, *operands, branches=tuple(branches))
