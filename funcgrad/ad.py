"""Automatic differentiation as IR → IR rewrites driven by each primitive's rules.

* :func:`jvp_program` — forward mode: a program taking primals and tangents.
* :func:`vjp_program` — reverse mode: a forward program returning outputs and
  residuals, and a backward program taking residuals and output cotangents.
* :func:`linearize_program` — forward mode split into the primal part (run
  now) and a linear tangent program (partial evaluation of the JVP).

Tangents and cotangents known to be zero stay symbolic (:class:`Zero`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from funcgrad import passes
from funcgrad.core import ad_util, dtypes, sharding_types
from funcgrad.core.errors import DerivedSource
from funcgrad.core.interp import (
    UNKNOWN,
    Tracer,
    _state,
    bind,
    current_builder,
    keeps_source,
    new_builder,
)
from funcgrad.core.ir import SHARDING_TYPES, Aval, Eqn, Literal, Program, Var
from funcgrad.core.zeros import Zero, is_zero


def tangent_aval(aval: Aval) -> Aval:
    """The abstract value of a tangent (or cotangent) for a primal of type ``aval``: the same
    shape and dtype, never weakly typed."""
    return aval.strip_weak()


def cotangent_aval(aval: Aval) -> Aval:
    """The abstract value of a cotangent for a primal of type ``aval``: its tangent's, with
    the unreduced and reduced mesh axes of its sharding swapped (JAX's ``to_ct_aval``: a
    partial sum's cotangent is replicated, a reduced value's is a partial sum)."""
    t = tangent_aval(aval)
    s = sharding_types.cotangent_sharding(t.sharding)
    return t if s is t.sharding else t.update(sharding=s)


def differentiable_dtype(dtype: np.dtype) -> bool:
    """Whether values of ``dtype`` carry tangents: floating and complex dtypes do, integer
    and boolean dtypes do not."""
    return dtypes.is_inexact(dtype)


def instantiate(x: Any, aval: Aval) -> Any:
    """Materialise a symbolic zero (co)tangent of a value with ``aval``."""
    return ad_util.instantiate(x, tangent_aval(aval))


_add = ad_util.add_tangents


# --------------------------------------------------------------------------- forward mode


@keeps_source
def jvp_eval(prog: Program, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
    """Evaluate ``prog`` and its JVP under the current interpreter.

    ``tangents`` entries may be :class:`Zero`. Returns (outputs, output tangents).
    """
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    tenv: dict[Var, Any] = {}
    for v, x, t in zip(prog.invars, primals, tangents):
        env[v] = x
        if not is_zero(t) and differentiable_dtype(v.aval.dtype):
            tenv[v] = t

    def read(a: Any) -> Any:
        return env[a] if type(a) is Var else a.val

    def tread(a: Any) -> Any:
        if type(a) is Var and a in tenv:
            return tenv[a]
        return Zero(tangent_aval(a.aval))

    st = _state
    for e in prog.eqns:
        if e.source:
            st.source = e.source
        ins = [read(a) for a in e.inputs]
        tins = [tread(a) for a in e.inputs]
        prim = e.prim
        if not prim.differentiable or all(is_zero(t) for t in tins):
            out = bind(prim, *ins, **e.params)
            outs = out if prim.multiple_results else [out]
            touts: list[Any] = [None] * len(outs)
        else:
            if prim.jvp is None:
                raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")
            out, tout = prim.jvp(ins, tins, **e.params)
            outs = out if prim.multiple_results else [out]
            touts = list(tout) if prim.multiple_results else [tout]
        for v, o, t in zip(e.outvars, outs, touts):
            env[v] = o
            if t is not None and not is_zero(t) and differentiable_dtype(v.aval.dtype):
                tenv[v] = t
    return [read(a) for a in prog.outvars], [tread(a) for a in prog.outvars]


def jvp_program(
    prog: Program,
    nonzero: Sequence[bool],
    known: Sequence[Any] | None = None,
    known_tangents: Sequence[Any] | None = None,
) -> tuple[Program, list[bool]]:
    """Forward-mode program: inputs (primals, tangents of ``nonzero`` inputs).

    Returns the program, whose outputs are (primal outputs, nonzero tangent
    outputs), and which output tangents are nonzero. ``known`` (and
    ``known_tangents``, one per input) are the input values when they are
    known, so rules that run user code (``custom_jvp``) can read them.
    """
    n = len(prog.invars)
    kp = list(known) if known is not None else [UNKNOWN] * n
    kt = list(known_tangents) if known_tangents is not None else [UNKNOWN] * n
    with new_builder("jvp") as b:
        primals = [b.new_arg(a, x) for a, x in zip(prog.in_avals, kp)]
        tangents: list[Any] = [
            b.new_arg(tangent_aval(a), t) if nz else Zero(tangent_aval(a))
            for a, nz, t in zip(prog.in_avals, nonzero, kt)
        ]
        outs, touts = jvp_eval(prog, primals, tangents)
        out_nz = [not is_zero(t) for t in touts]
        new = b.build(outs + [t for t in touts if not is_zero(t)])
    return passes.dce(new), out_nz


# --------------------------------------------------------------------------- reverse mode

#: marks a record whose primitive uses ``vjp`` (not ``vjp_fwd``/``vjp_bwd``)
NO_RESIDUALS = object()
#: marks a record of an equation none of whose inputs depends on the differentiated
#: inputs: it gets no cotangent rule (no residuals, and e.g. a ``while`` over constants
#: does not need reverse mode)
INACTIVE = object()


class VJPPrograms:
    """The two halves of a VJP: ``fwd(*primals) -> (*outs, *residuals)`` and
    ``bwd(*residuals, *out_cts) -> in_cts``; ``zero_cts[i]`` tells that input
    ``i``'s cotangent is identically zero (materialised as zeros by ``bwd``)."""

    def __init__(self, fwd: Program, bwd: Program, num_res: int, zero_cts: list[bool]) -> None:
        self.fwd = fwd
        self.bwd = bwd
        self.num_res = num_res
        self.zero_cts = zero_cts

    def __repr__(self) -> str:
        return f"VJPPrograms(residuals={self.num_res})\nfwd:\n{self.fwd}\nbwd:\n{self.bwd}"


def reverse_accumulate(
    steps: Iterable[Any],
    seeds: Iterable[tuple[Hashable, Any]],
    keys: Callable[[Any], tuple[Sequence[Hashable], Sequence[Hashable | None]]],
    transpose: Callable[[Any, list], Sequence[Any] | None],
    *,
    add: Callable[[Any, Any], Any] = _add,
    on_cotangent: Callable[[Hashable, Any], Any] | None = None,
    before: Callable[[Any, list], list] | None = None,
    after: Callable[[Any, list, Sequence[Any]], Sequence[Any]] | None = None,
    run_empty: Callable[[Any], bool] | None = None,
) -> dict[Hashable, Any]:
    """The reverse-accumulation loop: every backward pass in funcgrad (and compat's) runs it.

    ``steps`` come consumers first (reverse topological order); ``keys(step)`` gives the
    keys of the step's outputs and of its inputs (``None``: the input gets no cotangent).
    Each step's output cotangents are complete when it is reached: they are popped,
    passed through ``on_cotangent(key, ct)`` (hooks, ``retain_grad``, captures) and
    ``before(step, cts)``, transposed by ``transpose(step, cts)`` (``None`` where an output
    got no cotangent; the step may return ``None`` to stop there), passed through
    ``after(step, cts, in_cts)`` and added (``add``) into its inputs' cotangents.
    Cotangents that are ``None`` or symbolic zeros are never stored. A step whose output
    cotangents are all ``None`` is skipped unless ``run_empty(step)`` is true (PyTorch
    calls hooks with ``None`` there).

    Evaluation is whatever ``transpose`` and ``add`` do: called under a tracing builder
    the whole loop records one backward Program; called eagerly it runs each step now.
    Returns the cotangents left at keys no step produced (the inputs).
    """
    env: dict[Hashable, Any] = {}
    for k, g in seeds:
        if g is not None and not is_zero(g):
            prev = env.get(k)
            env[k] = g if prev is None else add(prev, g)
    pop, get = env.pop, env.get
    for s in steps:
        out_keys, in_keys = keys(s)
        cts = [pop(k, None) for k in out_keys]
        if on_cotangent is not None:
            cts = [c if c is None else on_cotangent(k, c) for k, c in zip(out_keys, cts)]
        for c in cts:  # (identity tests: cotangents may be tracers)
            if c is not None:
                break
        else:
            if run_empty is None or not run_empty(s):
                continue
        if before is not None:
            cts = before(s, cts)
        in_cts = transpose(s, cts)
        if in_cts is None:
            continue
        if after is not None:
            in_cts = after(s, cts, in_cts)
        for k, c in zip(in_keys, in_cts):
            if k is None or c is None or isinstance(c, Zero):
                continue
            prev = get(k)
            env[k] = c if prev is None else add(prev, c)
    return env


def _record_keys(rec: tuple) -> tuple[Sequence[Var], list]:
    e = rec[0]
    ins = [a if type(a) is Var and differentiable_dtype(a.aval.dtype) else None for a in e.inputs]
    return e.outvars, ins


def _record_transpose(rec: tuple, cts: list) -> Sequence[Any] | None:
    e, ins, outs, res = rec
    prim = e.prim
    if res is INACTIVE or not prim.differentiable:
        return None
    if all(c is None or is_zero(c) for c in cts):
        return None
    st = _state
    saved = st.source, st.walker
    src = e.source
    if src is not None:  # the backward equations point at the forward one
        st.source = src if isinstance(src, DerivedSource) else DerivedSource(src, prim.name)
        st.walker = sys._getframe()
    try:
        return _transpose_rule(e, ins, outs, res, cts)
    finally:
        st.source, st.walker = saved


def _transpose_rule(e: Any, ins: list, outs: list, res: Any, cts: list) -> Sequence[Any] | None:
    prim = e.prim
    cts = [Zero(tangent_aval(v.aval)) if c is None else c for v, c in zip(e.outvars, cts)]
    if res is not NO_RESIDUALS:
        in_cts = prim.vjp_bwd(res, cts, **e.params)
    else:
        if prim.vjp is None:
            raise NotImplementedError(f"Reverse-mode rule for '{prim.name}' not implemented")
        ct_arg = cts if prim.multiple_results else cts[0]
        out_arg = outs if prim.multiple_results else outs[0]
        in_cts = prim.vjp(ct_arg, *ins, out=out_arg, **e.params)
    if SHARDING_TYPES[0] and in_cts is not None:  # (a cotangent has its primal's type)
        in_cts = sharding_types.cast_cotangents(e.inputs, in_cts)
    return in_cts


def backward_pass(
    prog: Program, records: list[tuple[Any, list, list, Any]], out_cts: Sequence[Any]
) -> dict[Var, Any]:
    """Walk ``records`` (eqn, inputs, outputs, residuals) in reverse, accumulating cotangents."""
    seeds = [
        (v, ct)
        for v, ct in zip(prog.outvars, out_cts)
        if type(v) is Var and differentiable_dtype(v.aval.dtype)
    ]
    return reverse_accumulate(reversed(records), seeds, _record_keys, _record_transpose)


@keeps_source
def forward_pass(
    prog: Program, args: Sequence[Any], active_in: Sequence[bool] | None = None
) -> tuple[list, list]:
    """Evaluate ``prog`` recording each equation's inputs, outputs and residuals;
    ``active_in`` (default: all) marks the inputs that are differentiated."""
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    env.update(zip(prog.invars, args))
    act = [True] * len(prog.invars) if active_in is None else active_in
    active = {v for v, on in zip(prog.invars, act) if on and differentiable_dtype(v.aval.dtype)}
    records = []
    st = _state
    for e in prog.eqns:  # (loops, no generators: every recorded op's VJP walks here)
        if e.source:
            st.source = e.source
        ins = []
        on = False
        for a in e.inputs:
            if type(a) is Var:
                ins.append(env[a])
                if not on and a in active:
                    on = True
            else:
                ins.append(a.val)
        prim = e.prim
        res = NO_RESIDUALS
        if not on:
            res = INACTIVE
            out = bind(prim, *ins, **e.params)
        elif prim.vjp_fwd is not None and prim.differentiable:
            if prim.vjp_fwd_active:  # the rule wants to know which
                act = [type(a) is Var and a in active for a in e.inputs]  # inputs are active
                out, res = prim.vjp_fwd(*ins, active=act, **e.params)
            else:
                out, res = prim.vjp_fwd(*ins, **e.params)
        else:
            out = bind(prim, *ins, **e.params)
        if res is not INACTIVE and prim.differentiable:  # (stop_gradient: no derivative)
            for v in e.outvars:
                if differentiable_dtype(v.aval.dtype):
                    active.add(v)
        if prim.multiple_results:
            outs = list(out)
            env.update(zip(e.outvars, outs))
        else:
            outs = [out]
            env[e.outvars[0]] = out
        records.append((e, ins, outs, res))
    return [env[a] if type(a) is Var else a.val for a in prog.outvars], records


class _DeferState(threading.local):
    builder: Any = None


_defer = _DeferState()


def deferring_custom_bwd() -> bool:
    """Whether a ``custom_vjp``'s cotangent rule is being bound directly into a
    backward program built with ``defer_custom_bwd``: it then records a deferred
    call instead of running the user's ``bwd`` (see ``custom_vjp_bwd``)."""
    b = _defer.builder
    return b is not None and current_builder() is b


def vjp_program(
    prog: Program,
    ct_mask: Sequence[bool] | None = None,
    known: Sequence[Any] | None = None,
    defer_custom_bwd: bool = False,
    active: Sequence[bool] | None = None,
) -> VJPPrograms:
    """Split ``prog`` into a forward program that also returns residuals and a
    backward program mapping (residuals, output cotangents) to input cotangents.

    Residuals are exactly the forward values the backward rules reference.
    ``ct_mask`` selects the outputs that receive a cotangent (others, e.g. aux
    outputs, are forward-only). ``known`` are the primal values when they are
    known, so rules that run user code (``custom_vjp``'s ``fwd``) can read them.
    With ``defer_custom_bwd`` the user's ``custom_vjp`` ``bwd`` rules of ``prog``'s
    own equations are not run here: the backward program holds deferred calls
    that :func:`funcgrad.primitives.calls.run_backward` makes (``api.vjp``: the
    ``bwd`` runs when the returned function is applied, as in JAX). ``active``
    (default: all) marks the inputs that are differentiated; the others get zero
    cotangents and are not reported as perturbed to custom rules.
    """
    if ct_mask is None:
        ct_mask = [True] * len(prog.outvars)
    kp = list(known) if known is not None else [UNKNOWN] * len(prog.invars)
    with new_builder("vjp") as fb:
        args = [fb.new_arg(a, x) for a, x in zip(prog.in_avals, kp)]
        outs, records = forward_pass(prog, args, active)
        with new_builder("vjp") as bb:
            cts = [
                bb.new_arg(cotangent_aval(v.aval)) if m else None
                for v, m in zip(prog.outvars, ct_mask)
            ]
            saved, _defer.builder = _defer.builder, (bb if defer_custom_bwd else None)
            try:
                ct_env = backward_pass(prog, records, cts)
            finally:
                _defer.builder = saved
            in_cts = [ct_env.get(v) for v in prog.invars]
            zero_cts = [is_zero(c) for c in in_cts]
            in_cts = [instantiate(c, v.aval) for c, v in zip(in_cts, prog.invars)]
            if SHARDING_TYPES[0]:  # (an input's cotangent has the input's type)
                in_cts = sharding_types.cast_input_cotangents(prog.invars, in_cts)
            bwd = passes.prune_constvars(passes.dce(bb.build(in_cts)))
        # residuals: the backward's constants that are values of the forward trace
        res_idx = [
            i for i, c in enumerate(bwd.consts) if isinstance(c, Tracer) and c._builder is fb
        ]
        other = [i for i in range(len(bwd.consts)) if i not in set(res_idx)]
        residuals = [bwd.consts[i] for i in res_idx]
        bwd = Program(
            invars=tuple(bwd.constvars[i] for i in res_idx) + bwd.invars,
            constvars=tuple(bwd.constvars[i] for i in other),
            eqns=bwd.eqns,
            outvars=bwd.outvars,
            consts=tuple(bwd.consts[i] for i in other),
        )
        fwd = fb.build(list(outs) + residuals)
    return VJPPrograms(fwd, bwd, len(residuals), zero_cts)


def seeded_program(vp: VJPPrograms, n_out: int, seed: Any, keep: Sequence[bool]) -> Program:
    """One program ``primals -> (kept outputs, input cotangents)``: ``vp``'s forward
    followed by its backward seeded with the constant cotangent ``seed`` (one
    masked output, as in ``grad``).

    Having both halves in one program lets ``jit_call``'s fusion pass merge an
    inner jit's forward and backward calls into one, and lets eager ``grad``
    dispatch one compiled program.
    """
    fwd, bwd = vp.fwd, vp.bwd
    if len(fwd.consts) != len(fwd.constvars) or len(bwd.consts) != len(bwd.constvars):
        raise ValueError("seeded_program: the VJP programs must carry their constants")
    residuals = fwd.outvars[n_out:]
    (ct_var,) = bwd.invars[vp.num_res :]
    subst: dict[Var, Any] = dict(zip(bwd.invars, residuals))
    subst[ct_var] = Literal(np.asarray(seed, ct_var.aval.dtype), ct_var.aval)
    seeds: tuple = ()
    held = ct_var.aval.sharding
    if held is not None and (held.spec.unreduced or held.spec.reduced):
        # (a cotangent typed unreduced or reduced: the constant placed so, as JAX's seed)
        lit = Literal(np.asarray(seed, ct_var.aval.dtype), ct_var.aval.update(sharding=None))
        placed = Var(ct_var.aval)
        seeds, subst[ct_var] = (sharding_types.reshard_eqn(lit, held, placed),), placed

    def atom(a: Any) -> Any:
        return subst.get(a, a) if type(a) is Var else a

    bwd_eqns = seeds + tuple(
        Eqn(e.prim, tuple(atom(a) for a in e.inputs), e.outvars, e.params, e.source)
        for e in bwd.eqns
    )
    outs = [v for v, k in zip(fwd.outvars[:n_out], keep) if k]
    prog = Program(
        invars=fwd.invars,
        constvars=fwd.constvars + bwd.constvars,
        eqns=fwd.eqns + bwd_eqns,
        outvars=(*outs, *(atom(a) for a in bwd.outvars)),
        consts=fwd.consts + bwd.consts,
    )
    return passes.dce(prog)


# --------------------------------------------------------------------------- linearize


def partial_eval(
    prog: Program, unknown: Sequence[bool], known_vals: Sequence[Any]
) -> tuple[list[Any], Program, list[bool]]:
    """Evaluate the part of ``prog`` that depends only on known inputs now.

    Returns (known outputs or None for unknown ones, the residual program over
    the unknown inputs — its consts are the known values it needs — and which
    outputs are unknown).
    """
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    unk: set[Var] = set()
    for v, u, x in zip(prog.invars, unknown, known_vals):
        if u:
            unk.add(v)
        else:
            env[v] = x
    with new_builder("linearize") as b:
        for v, u in zip(prog.invars, unknown):
            if u:
                env[v] = b.new_arg(v.aval)
        staged: list = []
        for e in prog.eqns:
            if any(type(a) is Var and a in unk for a in e.inputs):
                staged.append(e)
                unk.update(e.outvars)
            else:
                ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
                saved = _state.stack
                _state.stack = saved[:-1]  # evaluate known eqns under the outer interpreter
                try:
                    out = bind(e.prim, *ins, **e.params)
                finally:
                    _state.stack = saved
                outs = out if e.prim.multiple_results else [out]
                env.update(zip(e.outvars, outs))
        for e in staged:
            ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
            out = bind(e.prim, *ins, **e.params)
            outs = out if e.prim.multiple_results else [out]
            env.update(zip(e.outvars, outs))
        out_unknown = [type(a) is Var and a in unk for a in prog.outvars]
        lin = b.build(
            [env[a] if type(a) is Var else a.val for a, u in zip(prog.outvars, out_unknown) if u]
        )
        known_outs = [
            None if u else (env[a] if type(a) is Var else a.val)
            for a, u in zip(prog.outvars, out_unknown)
        ]
    return known_outs, lin, out_unknown
