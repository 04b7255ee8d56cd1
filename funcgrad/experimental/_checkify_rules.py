"""The ``checkify`` rewrite: a program in, the same program threading an error value out.

:func:`run` walks a program's equations, binding each again under the current
interpreter (so the rewrite records into whatever builder is active), and updates an
error state (:class:`State`: ``pred``, ``code`` and one payload slot per signature)
after the equations that can fail: ``check`` (the user's, or an error re-raised by
``check_error``), automatic checks (NaN produced from NaN-free operands, division by
zero, out-of-bounds ``dynamic_slice``/``dynamic_update_slice`` and indexing) and the
equations holding sub-programs, whose programs are rewritten in turn (``jit_call``,
``checkpoint``, ``cond``, ``while``, ``scan``). The first failure wins: once ``pred`` is
set, later checks leave the state alone.

Codes are local to one ``checkify`` call, given in the order the rewrite meets the
checks, so tracing the same function again gives the same program (its compiled form is
reused). The rules of this transform are its own table, keyed by primitive, as JAX's
``checkify`` keeps its own: the primitives' modules know nothing of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core.ad_util import close
from funcgrad.core.interp import bind, new_builder, to_aval
from funcgrad.core.ir import Eqn, Program, Var
from funcgrad.primitives import checks
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import reductions as red
from funcgrad.primitives import shape as sh
from funcgrad.primitives.calls import checkpoint_p, jit_call_p, widen_placement
from funcgrad.primitives.checks import (
    DivisionByZeroError,
    ErrorInfo,
    NaNError,
    OOBError,
    Sig,
    Site,
    check_p,
)
from funcgrad.primitives.control_flow.common import join_consts
from funcgrad.primitives.control_flow.cond import cond_p
from funcgrad.primitives.control_flow.scan import scan_p
from funcgrad.primitives.control_flow.while_loop import while_p
from funcgrad.primitives.custom_calls import custom_jvp_call_p, custom_vjp_call_p
from funcgrad.primitives.indexing import dynamic_slice_p, dynamic_update_slice_p
from funcgrad.primitives.scatter import (
    gather_general_p,
    scatter_add_general_p,
    scatter_general_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
)

_I32 = np.dtype(np.int32)


class Context:
    """One ``checkify`` call: the enabled error kinds and the sites met, by code."""

    def __init__(self, enabled: frozenset) -> None:
        self.enabled = enabled
        self.sites: list[Site] = []

    def code(self, site: Site) -> int:
        self.sites.append(site)
        return len(self.sites) - 1


class State:
    """The error threaded through a program: ``pred`` (a check failed), ``code`` (the
    first that did) and the payload slots, by signature (order kept)."""

    def __init__(self, pred: Any, code: Any, slots: dict[Sig, list]) -> None:
        self.pred, self.code, self.slots = pred, code, slots

    @staticmethod
    def empty(sigs: Sequence[Sig] = ()) -> State:
        return State(np.bool_(False), np.int32(-1), {s: _zeros(s) for s in sigs})

    @staticmethod
    def from_leaves(sigs: Sequence[Sig], leaves: Sequence[Any]) -> State:
        pred, code, slots = ErrorInfo(tuple(sigs)).split(leaves)
        return State(pred, code, dict(zip(sigs, slots)))

    def sigs(self) -> list[Sig]:
        return list(self.slots)

    def leaves(self, sigs: Sequence[Sig] | None = None) -> list:
        """Flat leaves, with the slots of ``sigs`` (zeros where this state has none)."""
        out = [self.pred, self.code]
        for s in self.slots if sigs is None else sigs:
            out.extend(self.slots.get(s) or _zeros(s))
        return out


def _zeros(sig: Sig) -> list:
    return [np.zeros(shape, dt) for shape, dt in sig]


def layout_avals(sigs: Sequence[Sig]) -> list:
    return [to_aval(x) for x in State.empty(sigs).leaves()]


def update(st: State, fail: Any, code: Any, sig: Sig, payload: list) -> State:
    """``st`` after a check that ``fail``s with ``code`` and ``payload`` (the first
    failure kept)."""
    fire = ew.bitwise_and(fail, ew.bitwise_not(st.pred))
    slots = dict(st.slots)
    old = slots.get(sig) or _zeros(sig)
    slots[sig] = [ew.select_n(fire, o, p) for o, p in zip(old, payload)]
    code = ew.select_n(fire, st.code, code if not isinstance(code, int) else np.int32(code))
    return State(ew.bitwise_or(st.pred, fail), code, slots)


def _any(x: Any) -> Any:
    a = to_aval(x)
    return red.reduce_or(x, tuple(range(a.ndim))) if a.ndim else x


# --------------------------------------------------------------------------- the walk


def run(ctx: Context, prog: Program, st: State, args: Sequence[Any]) -> tuple[State, list]:
    """Evaluate ``prog`` on ``args`` under the current interpreter, threading ``st``."""
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    env.update(zip(prog.invars, args))
    for e in prog.eqns:
        ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
        rule = RULES.get(e.prim)
        if rule is not None:
            st, outs = rule(ctx, st, ins, e)
        else:
            outs = _default(ctx, e, ins)
            if NaNError in ctx.enabled and _nan_checked(e):
                st = _nan_check(ctx, st, e, ins, outs)
        env.update(zip(e.outvars, outs))
    return st, [env[a] if type(a) is Var else a.val for a in prog.outvars]


def _bind(e: Eqn, ins: Sequence[Any], **params: Any) -> list:
    out = bind(e.prim, *ins, **(params or e.params))
    return list(out) if e.prim.multiple_results else [out]


def _programs(params: dict) -> bool:
    return any(
        isinstance(v, Program) or (isinstance(v, tuple) and any(isinstance(p, Program) for p in v))
        for v in params.values()
    )


def _default(ctx: Context, e: Eqn, ins: Sequence[Any]) -> list:
    """An equation with no rule: bound again (the checks inside a sub-program of an
    unknown call are dropped, as outside ``checkify`` they could not run)."""
    if _programs(e.params):
        return _bind(e, ins, **{k: strip(v) for k, v in e.params.items()})
    return _bind(e, ins)


def strip(v: Any) -> Any:
    """A program (or tuple of programs) without its ``check`` equations, recursively."""
    if isinstance(v, tuple):
        return tuple(strip(p) for p in v)
    if not isinstance(v, Program):
        return v
    eqns, changed = [], False
    for e in v.eqns:
        if e.prim is check_p:
            changed = True
            continue
        if _programs(e.params):
            params = {k: strip(p) for k, p in e.params.items()}
            if any(params[k] is not p for k, p in e.params.items()):
                changed = True
                e = Eqn(e.prim, e.inputs, e.outvars, params, e.source)
        eqns.append(e)
    return v.replace(eqns=tuple(eqns)) if changed else v


# --------------------------------------------------------------------------- automatic checks


def _inexact(x: Any) -> bool:
    return to_aval(x).dtype.kind in "fc"


def _nan_checked(e: Eqn) -> bool:
    """A NaN can be born here: an equation with a floating output and no sub-program."""
    if e.prim.effectful or _programs(e.params):
        return False
    return any(v.aval.dtype.kind in "fc" for v in e.outvars)


def _has_nan(xs: Sequence[Any]) -> Any:
    out = None
    for x in xs:
        if isinstance(x, (float, complex)):
            if x != x:
                return np.bool_(True)
            continue
        if not _inexact(x):
            continue
        n = _any(ew.ne(x, x))
        out = n if out is None else ew.bitwise_or(out, n)
    return np.bool_(False) if out is None else out


def _nan_check(ctx: Context, st: State, e: Eqn, ins: Sequence[Any], outs: Sequence[Any]) -> State:
    fail = ew.bitwise_and(_has_nan(outs), ew.bitwise_not(_has_nan(ins)))
    site = Site(NaNError, e.prim.name)
    return update(st, fail, ctx.code(site), (), [])


def _div_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    outs = _bind(e, ins)
    if DivisionByZeroError in ctx.enabled:
        y = ins[1]
        zero = np.zeros((), to_aval(y).dtype)
        fail = _any(ew.eq(y, zero))
        st = update(st, fail, ctx.code(Site(DivisionByZeroError)), (), [])
    if NaNError in ctx.enabled:
        st = _nan_check(ctx, st, e, ins, outs)
    return st, outs


def oob_update(
    ctx: Context, st: State, prim: str, shape: tuple, starts: Any, axes: Any, fail: Any
) -> State:
    """``st`` after an index check: ``starts`` (int32, flat) the indices checked,
    ``axes`` their operand axes (int32, flat) and ``fail`` where they are out of bounds;
    the payload is the first failing ``(index, axis, size)``."""
    k = red.argmax(ew.convert_element_type(fail, _I32), axis=0, index_dtype=_I32)
    sizes = np.asarray(shape, np.int32) if shape else np.zeros((1,), np.int32)
    axis = _take(axes, k)
    size = _take(sizes, axis)
    parts = [sh.reshape(v, (1,)) for v in (_take(starts, k), axis, size)]
    payload = sh.concatenate(*parts, dimension=0)
    site = Site(OOBError, prim, tuple(shape), sig=(((3,), "int32"),))
    return update(st, _any(fail), ctx.code(site), site.sig, [payload])


def _take(x: Any, i: Any) -> Any:
    """``x[i]`` of a 1-d ``x`` at a traced int32 ``i``."""
    return sh.squeeze(ix.dynamic_slice(x, i, slice_sizes=(1,)), (0,))


def first_failing(leaves: Sequence[Any], batch_ndim: int) -> list:
    """Error leaves batched over ``batch_ndim`` leading axes, reduced to the first
    failing example's (example 0's when none fails)."""
    shape = to_aval(leaves[0]).shape[:batch_ndim]
    size = int(np.prod(shape))
    flat = [sh.reshape(x, (size, *to_aval(x).shape[batch_ndim:])) for x in leaves]
    i = red.argmax(ew.convert_element_type(flat[0], _I32), axis=0, index_dtype=_I32)
    out = []
    for x in flat:
        a = to_aval(x)
        zeros = [np.int32(0)] * (a.ndim - 1)
        row = ix.dynamic_slice(x, i, *zeros, slice_sizes=(1, *a.shape[1:]))
        out.append(sh.squeeze(row, (0,)))
    return out


def _slice_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    outs = _bind(e, ins)
    if OOBError not in ctx.enabled:
        return st, outs
    if e.prim is dynamic_slice_p:
        x, *starts = ins
        sizes = e.params["slice_sizes"]
    else:
        x, upd, *starts = ins
        sizes = to_aval(upd).shape
    shape = to_aval(x).shape
    if not shape:
        return st, outs
    idx = sh.concatenate(
        *[sh.reshape(ew.convert_element_type(s, _I32), (1,)) for s in starts], dimension=0
    )
    lim = np.asarray([n - k for n, k in zip(shape, sizes)], np.int32)
    fail = ew.bitwise_or(ew.lt(idx, np.zeros((), _I32)), ew.gt(idx, lim))
    axes = np.arange(len(shape), dtype=np.int32)
    return oob_update(ctx, st, e.prim.name, shape, idx, axes, fail), outs


def _vector_index_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    """``lax.gather``/``lax.scatter*`` with dimension numbers: every start index (the
    last axis of ``indices`` is the index vector) within ``[0, dim - slice size]``, as
    JAX's check; a scatter's result is NaN-checked too."""
    outs = _bind(e, ins)
    if OOBError in ctx.enabled:
        x, idx = ins[0], ins[1]
        dn = e.params["dimension_numbers"]
        xa, ia = to_aval(x), to_aval(idx)
        if e.prim is gather_general_p:
            axes, sizes = tuple(dn.start_index_map), tuple(e.params["slice_sizes"])
        else:
            axes = tuple(dn.scatter_dims_to_operand_dims)
            sizes = _scatter_window(xa.ndim, to_aval(ins[2]).shape, dn)
        k = ia.shape[-1] if ia.ndim else 0
        if k and ia.size:
            reps = ia.size // k
            flat = sh.reshape(ew.convert_element_type(idx, _I32), (ia.size,))
            upper = np.tile(np.asarray([xa.shape[d] - sizes[d] for d in axes], np.int32), reps)
            fail = ew.bitwise_or(ew.lt(flat, np.int32(0)), ew.gt(flat, upper))
            axes_flat = np.tile(np.asarray(axes, np.int32), reps)
            st = oob_update(ctx, st, e.prim.name, xa.shape, flat, axes_flat, fail)
    if NaNError in ctx.enabled and e.prim is not gather_general_p:
        st = _nan_check(ctx, st, e, ins, outs)
    return st, outs


def _scatter_window(ndim: int, upd_shape: tuple, dn: Any) -> tuple[int, ...]:
    """The sizes of the operand window each scatter index writes."""
    removed = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    it = iter(dn.update_window_dims)
    return tuple(1 if d in removed else upd_shape[next(it)] for d in range(ndim))


# --------------------------------------------------------------------------- check


def _check_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    info: ErrorInfo = e.params["info"]
    pred, code, slots = info.split(ins)
    on = [(c, s) for c, s in info.sites if s.kind in ctx.enabled]
    if not on:
        if e.params["debug"]:  # (left for an enclosing checkify: a no-op elsewhere)
            bind(check_p, *ins, **e.params)
        return st, []
    if len(on) == len(info.sites):
        fail = pred
    else:
        fail = ew.bitwise_and(pred, _any_eq(code, [c for c, _ in on]))
    mine = {c: ctx.code(s) for c, s in on}
    if len(mine) == 1:
        new_code: Any = np.int32(next(iter(mine.values())))
    else:
        new_code = np.int32(-1)
        for c, m in mine.items():
            new_code = ew.select_n(ew.eq(code, np.int32(c)), new_code, np.int32(m))
    fire = ew.bitwise_and(fail, ew.bitwise_not(st.pred))
    new_slots = dict(st.slots)
    for sig, vals in zip(info.sigs, slots):
        old = new_slots.get(sig) or _zeros(sig)
        new_slots[sig] = [ew.select_n(fire, o, v) for o, v in zip(old, vals)]
    code_out = ew.select_n(fire, st.code, new_code)
    return State(ew.bitwise_or(st.pred, fail), code_out, new_slots), []


def _any_eq(code: Any, cs: list[int]) -> Any:
    out = None
    for c in cs:
        m = ew.eq(code, np.int32(c))
        out = m if out is None else ew.bitwise_or(out, m)
    return out


# --------------------------------------------------------------------------- sub-programs


def rewrite(
    ctx: Context,
    fn: Callable[[State, list], tuple[State, list]],
    sigs: Sequence[Sig],
    avals: Sequence[Any],
    out_sigs: Sequence[Sig] | None = None,
) -> tuple[Program, tuple, list[Sig]]:
    """Trace ``fn(state, args)`` over an error of layout ``sigs`` and ``avals`` into a
    closed program ``(consts, err, args) -> (err, outs)``; returns it, its consts and
    the output layout (``out_sigs`` when given: the state is padded to it)."""
    with new_builder("checkify") as b:
        err = [b.new_arg(a) for a in layout_avals(sigs)]
        args = [b.new_arg(a) for a in avals]
        st, outs = fn(State.from_leaves(sigs, err), args)
        got = st.sigs()
        if out_sigs is not None:
            extra = [s for s in got if s not in out_sigs]
            if extra:
                raise RuntimeError(f"checkify: unexpected error payloads {extra}")
        lay = list(out_sigs) if out_sigs is not None else got
        prog = b.build([*st.leaves(lay), *outs])
    prog, consts = close(prog)
    return prog, consts, lay


def _union(*layouts: Sequence[Sig]) -> list[Sig]:
    out: list[Sig] = []
    for lay in layouts:
        out.extend(s for s in lay if s not in out)
    return out


def _call_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    prog: Program = e.params["program"]
    sigs = st.sigs()

    def body(s: State, args: list) -> tuple[State, list]:
        return run(ctx, prog, s, args)

    new, consts, lay = rewrite(ctx, body, sigs, [to_aval(x) for x in ins])
    n = len(layout_avals(lay))
    leaves = st.leaves()
    # (a jit's shardings: the error state's operands and results are unplaced)
    params = widen_placement({**e.params, "program": new}, len(consts) + len(leaves), n)
    outs = bind(e.prim, *consts, *leaves, *ins, **params)
    return State.from_leaves(lay, outs[:n]), list(outs[n:])


def _copy_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    """A custom-derivative call: bound as it is (its rules kept, its checks dropped),
    and its primal program's checks evaluated beside it on the same operands."""
    outs = _default(ctx, e, ins)
    st, _ = run(ctx, e.params["program"], st, ins)
    return st, outs


def _cond_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    index, *ops = ins
    branches: tuple[Program, ...] = e.params["branches"]
    avals = [to_aval(x) for x in ops]
    sigs = st.sigs()

    def branch(b: Program) -> Callable:
        return lambda s, args: run(ctx, b, s, args)

    first = [rewrite(ctx, branch(b), sigs, avals)[2] for b in branches]
    lay = _union(sigs, *first)
    items = []
    for b in branches:
        prog, consts, _ = rewrite(ctx, branch(b), sigs, avals, out_sigs=lay)
        items.append((prog, consts))
    progs, consts = join_consts(items)
    outs = bind(cond_p, index, *consts, *st.leaves(), *ops, branches=tuple(progs))
    n = len(layout_avals(lay))
    return State.from_leaves(lay, outs[:n]), list(outs[n:])


def _scan_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    p = e.params
    prog: Program = p["program"]
    nc, ncar = p["num_consts"], p["num_carry"]
    consts, carry, xs = ins[:nc], ins[nc : nc + ncar], ins[nc + ncar :]
    avals = [to_aval(x) for x in consts]

    def body(s: State, args: list) -> tuple[State, list]:
        c, rest = args[:nc], args[nc:]
        return run(ctx, prog, s, [*c, *rest])

    # (consts, err, carry, x): the consts first, as scan wants them
    def traced(sigs: Sequence[Sig], out_sigs: Sequence[Sig] | None) -> tuple:
        in_avals = [*avals, *prog.in_avals[nc:]]
        return rewrite(ctx, body, sigs, in_avals, out_sigs)

    lay = _union(st.sigs(), traced(st.sigs(), None)[2])
    new, closure, _ = traced(lay, lay)
    n_err = len(layout_avals(lay))
    k = len(closure)
    new = _consts_first(new, k, n_err, nc)
    outs = bind(
        scan_p,
        *closure,
        *consts,
        *st.leaves(lay),
        *carry,
        *xs,
        program=new,
        length=p["length"],
        reverse=p["reverse"],
        num_consts=k + nc,
        num_carry=n_err + ncar,
    )
    return State.from_leaves(lay, outs[:n_err]), list(outs[n_err:])


def _while_rule(ctx: Context, st: State, ins: list, e: Eqn) -> tuple[State, list]:
    p = e.params
    cprog: Program = p["cond_program"]
    bprog: Program = p["body_program"]
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    if checks.is_masked_loop(bprog):
        raise ValueError(checks.MASKED_LOOP_ERROR)
    cc, bc, init = ins[:ncc], ins[ncc : ncc + nbc], ins[ncc + nbc :]
    # the condition's checks on the initial carry, then the body's and the condition's
    # on each new carry (JAX's order: the condition runs before every iteration)
    st, _ = run(ctx, cprog, st, [*cc, *init])
    cc_avals = [to_aval(x) for x in cc]
    bc_avals = [to_aval(x) for x in bc]
    carry_avals = [a.strip_weak() for a in bprog.in_avals[nbc:]]

    def body(s: State, args: list) -> tuple[State, list]:
        b, c, carry = args[:nbc], args[nbc : nbc + ncc], args[nbc + ncc :]
        s, new = run(ctx, bprog, s, [*b, *carry])
        s, _ = run(ctx, cprog, s, [*c, *new])
        return s, new

    def traced(sigs: Sequence[Sig], out_sigs: Sequence[Sig] | None) -> tuple:
        return rewrite(ctx, body, sigs, [*bc_avals, *cc_avals, *carry_avals], out_sigs)

    lay = _union(st.sigs(), traced(st.sigs(), None)[2])
    new_body, bclosure, _ = traced(lay, lay)
    n_err = len(layout_avals(lay))
    k = len(bclosure)
    new_body = _consts_first(new_body, k, n_err, nbc + ncc)
    # (closure, bc, cc, err, carry) -> (err, carry): consts are closure, bc, cc
    stripped = strip(cprog)
    err_avals = layout_avals(lay)
    with new_builder("checkify") as b:
        c_in = [b.new_arg(a) for a in cc_avals]
        _ = [b.new_arg(a) for a in err_avals]
        carry_in = [b.new_arg(a) for a in carry_avals]
        out = bind_program(stripped, [*c_in, *carry_in])
        cond_new = b.build(out)
    cond_new, cclosure = close(cond_new)
    outs = bind(
        while_p,
        *cclosure,
        *cc,
        *bclosure,
        *bc,
        *cc,
        *st.leaves(lay),
        *init,
        cond_program=cond_new,
        body_program=new_body,
        cond_nconsts=len(cclosure) + ncc,
        body_nconsts=k + nbc + ncc,
    )
    return State.from_leaves(lay, outs[:n_err]), list(outs[n_err:])


def _consts_first(prog: Program, k: int, n_err: int, n: int) -> Program:
    """``prog`` of inputs ``(closure[k], err[n_err], consts[n], rest)`` with the ``n``
    consts moved before the error inputs (loops take their consts first)."""
    order = [*range(k), *range(k + n_err, k + n_err + n), *range(k, k + n_err)]
    order += list(range(k + n_err + n, len(prog.invars)))
    return prog.replace(invars=tuple(prog.invars[i] for i in order))


def bind_program(prog: Program, args: Sequence[Any]) -> list:
    """``prog`` evaluated on ``args`` under the current interpreter."""
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    env.update(zip(prog.invars, args))
    for e in prog.eqns:
        outs = _bind(e, [env[a] if type(a) is Var else a.val for a in e.inputs])
        env.update(zip(e.outvars, outs))
    return [env[a] if type(a) is Var else a.val for a in prog.outvars]


#: this transform's rules, by primitive (the rest: bound again, NaN-checked)
RULES: dict[Any, Callable[..., tuple[State, list]]] = {
    check_p: _check_rule,
    ew.div_p: _div_rule,
    dynamic_slice_p: _slice_rule,
    dynamic_update_slice_p: _slice_rule,
    jit_call_p: _call_rule,
    checkpoint_p: _call_rule,
    cond_p: _cond_rule,
    scan_p: _scan_rule,
    while_p: _while_rule,
    custom_jvp_call_p: _copy_rule,
    custom_vjp_call_p: _copy_rule,
    gather_general_p: _vector_index_rule,
    scatter_general_p: _vector_index_rule,
    scatter_add_general_p: _vector_index_rule,
    scatter_mul_p: _vector_index_rule,
    scatter_min_p: _vector_index_rule,
    scatter_max_p: _vector_index_rule,
}
