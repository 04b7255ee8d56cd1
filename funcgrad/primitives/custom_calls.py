"""The custom-derivative call primitives: ``custom_jvp_call``, ``custom_vjp_call`` and
``custom_vjp_bwd`` (a ``custom_vjp`` backward rule whose call is deferred until the
backward program runs), with :func:`run_backward`.

Their parameters are the callables :mod:`funcgrad.custom` builds from the user's
rules: ``jvp(primals, tangents) -> (outs, tangents_out)``, ``fwd(primals, active)
-> (outs, residuals)`` and ``bwd(residuals, cts) -> cts_in`` (lists; symbolic
zeros allowed). Their transformation rules use :mod:`funcgrad.ad` and
:mod:`funcgrad.batching` on traced functions, never the user API above them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from funcgrad import ad, batching, passes, taylor
from funcgrad.core import dtypes, tiers
from funcgrad.core.ad_util import close
from funcgrad.core.interp import (
    Tracer,
    bind,
    eval_program,
    is_tracing,
    new_builder,
    to_aval,
)
from funcgrad.core.ir import Aval, Program, Var
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.calls import FAMILY, _check_call_avals, _sub_program, host_call
from funcgrad.primitives.rules import rand
from funcgrad.tree_util import tree_flatten, tree_unflatten


def _vjp_of(fun: Callable[..., list], primals: list) -> tuple[list, Callable[[list], list]]:
    """``(fun(*primals), pullback)`` for a function of flat lists, evaluated under the
    current interpreter (the program-level ``vjp`` that rules use)."""
    avals = [to_aval(p) for p in primals]
    with new_builder("vjp") as b:
        prog = b.build(list(fun(*[b.new_arg(a, p) for a, p in zip(avals, primals)])))
    vp = ad.vjp_program(prog, known=primals)
    res = eval_program(vp.fwd, *primals)
    n = len(prog.outvars)
    outs, residuals = res[:n], res[n:]

    def pullback(cts: list) -> list:
        return eval_program(vp.bwd, *residuals, *cts)

    return outs, pullback


# --------------------------------------------------------------------------- custom_jvp_call

custom_jvp_call_p = Primitive(
    "custom_jvp_call", family=FAMILY, multiple_results=True, vjp_fwd_active=True
)


@custom_jvp_call_p.def_abstract_eval
def _custom_jvp_abstract_eval(*avals: Aval, program: Program, jvp: Callable) -> list[Aval]:
    return _check_call_avals("custom_jvp_call", avals, program)


@custom_jvp_call_p.def_lower
def _custom_jvp_lower(*vals: Any, program: Program, jvp: Callable) -> list:
    return lower_program(program)(*vals)


@custom_jvp_call_p.def_host
def _custom_jvp_host(*vals: Any, program: Program, jvp: Callable) -> list:
    return host_call(program, vals)


@custom_jvp_call_p.def_jvp
def _custom_jvp_jvp(primals: list, tangents: list, *, program: Program, jvp: Callable) -> tuple:
    # zero tangents stay symbolic: the rule wrapper instantiates them or, for rules
    # defined with symbolic_zeros=True, passes them as SymbolicZero
    outs, touts = jvp(list(primals), list(tangents))
    return list(outs), list(touts)


class _InlineFlag(threading.local):
    depth = 0


_inline = _InlineFlag()


def inline_custom_jvp() -> bool:
    """Whether ``custom_jvp`` functions are being called inside the transpose of a
    custom rule's tangent map (they then run their own body; see ``custom_jvp``)."""
    return _inline.depth > 0


class _Linearized:
    """The residuals of a ``custom_jvp`` rule's tangent map, computed in the forward, and
    its transpose (``bwd``): what the backward of a ``custom_jvp_call`` needs."""

    __slots__ = ("act", "avals", "bwd", "out", "residuals", "tout_dtype")

    def __init__(self, act: list, avals: list, out: int, tout_dtype: np.dtype, bwd: Program,
                 residuals: list) -> None:  # fmt: skip
        #: which inputs are differentiated, their avals, and the differentiable output
        self.act, self.avals, self.out = act, avals, out
        self.tout_dtype, self.bwd, self.residuals = tout_dtype, bwd, residuals


def _custom_jvp_vjp_fwd(
    *primals: Any, program: Program, jvp: Callable, active: list | None = None
) -> tuple:
    # The rule is linearized here, in the forward, as JAX's partial evaluation does: the
    # values its tangent map reads of the primals (for ``relu``, which elements are
    # positive) are residuals, and the rule's own primal outputs are the call's outputs
    # when they have its avals, so the backward only transposes a linear map (it
    # recomputed the whole rule, the function included, from the primals).
    act = [True] * len(primals) if active is None else list(active)
    avals = [to_aval(p).strip_weak() for p in primals]
    tan_avals = [a for a, on in zip(avals, act) if on]
    out_avals = [v.aval for v in program.outvars]
    n_out = len(out_avals)
    diff = [i for i, a in enumerate(out_avals) if dtypes.is_inexact(a.dtype)]
    if len(diff) != 1:
        # (with several, an output without a cotangent must contribute nothing, not a
        # product with zero: JAX's symbolic zeros; the backward then runs the rule on
        # the live outputs alone, recomputing it from the primals)
        outs = bind(custom_jvp_call_p, *primals, program=program, jvp=jvp)
        return outs, (list(primals), act)
    tout_dtypes: list = []

    def outs_and_tangents(*t: Any) -> list:
        it = iter(t)
        tans = [next(it) if on else Zero(a) for a, on in zip(avals, act)]
        outs, touts = jvp(list(primals), tans)
        touts = [touts[i] for i in diff]
        tout_dtypes.extend(to_aval(t).dtype for t in touts)
        return [*outs, *(rules.instantiate(t, t.aval) if is_zero(t) else t for t in touts)]

    _inline.depth += 1
    try:
        with new_builder("vjp") as b:
            traced = b.build(outs_and_tangents(*[b.new_arg(a) for a in tan_avals]))
        vp = ad.vjp_program(traced, ct_mask=[False] * n_out + [True] * len(diff))
    finally:
        _inline.depth -= 1
    # (the tangent outputs are pruned: the forward computes the outputs and residuals)
    keep = vp.fwd.outvars[:n_out] + vp.fwd.outvars[n_out + len(diff) :]
    fwd = passes.dce(vp.fwd.replace(outvars=keep))
    used = passes.used_invars(fwd)
    fwd = fwd.replace(invars=tuple(v for v, u in zip(fwd.invars, used) if u))
    # (a rule whose residuals read its tangents is not linear in them; zeros, as before)
    vals = eval_program(fwd, *[rules.zeros_like_aval(a) for a, u in zip(tan_avals, used) if u])
    outs = vals[:n_out]
    if any(to_aval(o) != a for o, a in zip(outs, out_avals)):
        outs = bind(custom_jvp_call_p, *primals, program=program, jvp=jvp)
    return outs, _Linearized(act, avals, diff[0], tout_dtypes[0], vp.bwd, vals[n_out:])


def _custom_jvp_vjp_bwd(
    res: _Linearized | tuple, cts: list, *, program: Program, jvp: Callable
) -> list:
    # the custom JVP is linear in the tangents: its VJP in the tangents is the transpose;
    # inputs that are not differentiated get symbolic zero tangents (as in JAX)
    if isinstance(res, _Linearized):  # (one differentiable output, linearized forward)
        ct, d = cts[res.out], res.tout_dtype
        if is_zero(ct):
            return [Zero(a) for a in res.avals]
        # (the rule's tangent may be wider than the output: weakly typed primals)
        ct = ct if to_aval(ct).dtype == d else ew.convert_element_type(ct, d)
        got = iter(eval_program(res.bwd, *res.residuals, ct))
        return [next(got) if on else Zero(a) for a, on in zip(res.avals, res.act)]
    primals, act = res
    avals = [to_aval(p).strip_weak() for p in primals]
    zeros = [rules.zeros_like_aval(a) for a, on in zip(avals, act) if on]
    # outputs with a zero cotangent are left out of the transposed map (as JAX's
    # symbolic zeros: they contribute nothing, not a product with zero)
    live = [not is_zero(c) for c in cts]
    if not any(live):
        return [Zero(a) for a in avals]

    def tangent_map(*t: Any) -> list:
        it = iter(t)
        tans = [next(it) if on else Zero(a) for a, on in zip(avals, act)]
        touts = jvp(primals, tans)[1]
        return [
            rules.instantiate(t, t.aval) if is_zero(t) else t for t, on in zip(touts, live) if on
        ]

    _inline.depth += 1
    try:
        touts, pullback = _vjp_of(tangent_map, zeros)
    finally:
        _inline.depth -= 1
    cts = [c for c, on in zip(cts, live) if on]
    # the rule's tangents may be wider than the outputs (weakly typed primals)
    cts = [
        c if to_aval(c).dtype == to_aval(t).dtype else ew.convert_element_type(c, to_aval(t).dtype)
        for c, t in zip(cts, touts)
    ]
    got = iter(pullback(cts))
    return [next(got) if on else Zero(a) for a, on in zip(avals, act)]


custom_jvp_call_p.vjp_fwd = _custom_jvp_vjp_fwd
custom_jvp_call_p.vjp_bwd = _custom_jvp_vjp_bwd
custom_jvp_call_p.jet = taylor.inline_jet  # (the function's own series, as JAX's jet)


def _batch_all_to_front(args: list, dims: list, program: Program) -> tuple:
    """Custom-rule calls batch every operand and output at axis 0: returns the moved
    operands, the batched closed program (``None`` if batching introduced constants)
    and the number of outputs."""
    size = rules.batch_size(args, dims)
    args = [rules.bdim_to_front(a, d, size) for a, d in zip(args, dims)]
    n_out = len(program.outvars)
    bprog, _ = batching.batch_program(program, [0] * len(args), size, out_dims=[0] * n_out)
    bprog, consts = close(bprog)
    return args, (None if consts else bprog), n_out


@custom_jvp_call_p.def_batch
def _custom_jvp_batch(args: list, dims: list, *, program: Program, jvp: Callable) -> tuple:
    args, bprog, n_out = _batch_all_to_front(args, dims, program)
    if bprog is None:  # the batched body closed over values: evaluate it inline
        return batching.batch_eval(program, args, [0] * len(args))

    def bjvp(primals: list, tangents: list) -> tuple:
        # symbolic zero tangents stay symbolic (per example) inside the vmapped rule
        nz = [not is_zero(t) for t in tangents]
        zeros = [
            None if z else Zero(batching.unbatched_aval(t.aval, 0)) for t, z in zip(tangents, nz)
        ]

        out_zero: list = []  # the rule's symbolic-zero tangents stay symbolic too

        def one(p: list, t_nz: list) -> tuple:
            it = iter(t_nz)
            ts = [next(it) if z else zero for z, zero in zip(nz, zeros)]
            outs, touts = jvp(p, ts)
            out_zero[:] = [t.aval if is_zero(t) else None for t in touts]
            return list(outs), [t for t in touts if not is_zero(t)]

        outs, touts = batching.vmap_leading(one, primals, [t for t, z in zip(tangents, nz) if z])
        size = to_aval(primals[0]).shape[0]
        it = iter(touts)
        return outs, [
            next(it) if a is None else Zero(batching.batched_aval(a, 0, size)) for a in out_zero
        ]

    return bind(custom_jvp_call_p, *args, program=bprog, jvp=bjvp), [0] * n_out


# the registry examples: sin(x) * y with hand-written rules in the callables' contract


def _example_f(x: Any, y: Any) -> Any:
    return ew.mul(ew.sin(x), y)


_EXAMPLE_AVALS = [Aval((3,), np.dtype("float64")), Aval((3,), np.dtype("float64"))]


def _example_jvp(primals: list, tangents: list) -> tuple:
    x, y = primals
    tx, ty = (rules.instantiate(t, to_aval(p).strip_weak()) for t, p in zip(tangents, primals))
    tout = ew.add(ew.mul(ew.mul(ew.cos(x), y), tx), ew.mul(ew.sin(x), ty))
    return [_example_f(x, y)], [tout]


def _example_fwd(primals: list, active: list | None = None) -> tuple:
    x, y = primals
    return [_example_f(x, y)], (x, y)


def _example_bwd(res: tuple, cts: list) -> list:
    x, y = res
    g = rules.instantiate(cts[0], to_aval(x).strip_weak())
    return [ew.mul(g, ew.mul(ew.cos(x), y)), ew.mul(g, ew.sin(x))]


def _example_program() -> Program:
    return _sub_program(lambda x, y: [_example_f(x, y)], _EXAMPLE_AVALS)


@custom_jvp_call_p.def_examples
def _custom_jvp_examples(rng: np.random.Generator) -> list[Example]:
    params = {"program": _example_program(), "jvp": _example_jvp}
    return [Example([rand(rng, (3,)), rand(rng, (3,))], params)]


# --------------------------------------------------------------------------- custom_vjp_call

#: JAX semantics: no jvp of a custom_vjp (forward_differentiable=False)
custom_vjp_call_p = Primitive(
    "custom_vjp_call",
    family=FAMILY,
    multiple_results=True,
    forward_differentiable=False,
    vjp_fwd_active=True,
)


@custom_vjp_call_p.def_abstract_eval
def _custom_vjp_abstract_eval(*avals: Aval, program: Program, fwd: Callable, bwd: Callable):
    return _check_call_avals("custom_vjp_call", avals, program)


@custom_vjp_call_p.def_lower
def _custom_vjp_lower(*vals: Any, program: Program, fwd: Callable, bwd: Callable) -> list:
    return lower_program(program)(*vals)


@custom_vjp_call_p.def_host
def _custom_vjp_host(*vals: Any, program: Program, fwd: Callable, bwd: Callable) -> list:
    return host_call(program, vals)


@custom_vjp_call_p.def_jvp
def _custom_vjp_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_vjp_vjp_fwd(
    *primals: Any, program: Program, fwd: Callable, bwd: Callable, active: list | None = None
) -> tuple:
    outs, res = fwd(list(primals), active)
    return list(outs), res


def _custom_vjp_vjp_bwd(res: Any, cts: list, *, program: Program, fwd: Callable, bwd: Callable):
    # zero cotangents stay symbolic: the rule wrapper instantiates them or, for rules
    # defined with symbolic_zeros=True, passes them as SymbolicZero
    if ad.deferring_custom_bwd():  # api.vjp: the user's bwd runs when vjp_fn is applied
        return _defer_custom_bwd(res, cts, program, bwd)
    return list(bwd(res, cts))


custom_vjp_call_p.vjp_fwd = _custom_vjp_vjp_fwd
custom_vjp_call_p.vjp_bwd = _custom_vjp_vjp_bwd
custom_vjp_call_p.jet = taylor.inline_jet


@custom_vjp_call_p.def_batch
def _custom_vjp_batch(args: list, dims: list, *, program: Program, fwd: Callable, bwd: Callable):
    args, bprog, n_out = _batch_all_to_front(args, dims, program)
    if bprog is None:  # the batched body closed over values: evaluate it inline
        return batching.batch_eval(program, args, [0] * len(args))

    def bfwd(primals: list, active: list | None = None) -> tuple:
        return batching.vmap_leading(lambda p: tuple(fwd(p, active)), primals)

    def bbwd(res: Any, cts: list) -> list:
        # zero cotangents stay symbolic (per example) inside the vmapped rule
        nz = [not is_zero(c) for c in cts]
        zeros = [None if z else Zero(batching.unbatched_aval(c.aval, 0)) for c, z in zip(cts, nz)]

        def one(r: Any, c_nz: list) -> list:
            it = iter(c_nz)
            return list(bwd(r, [next(it) if z else zero for z, zero in zip(nz, zeros)]))

        return batching.vmap_leading(one, res, [c for c, z in zip(cts, nz) if z])

    return bind(custom_vjp_call_p, *args, program=bprog, fwd=bfwd, bwd=bbwd), [0] * n_out


def _example_vjp_params() -> dict:
    return {"program": _example_program(), "fwd": _example_fwd, "bwd": _example_bwd}


@custom_vjp_call_p.def_examples
def _custom_vjp_examples(rng: np.random.Generator) -> list[Example]:
    # forward mode is not defined for custom_vjp (as in JAX): only reverse-mode checks apply
    return [Example([rand(rng, (3,)), rand(rng, (3,))], _example_vjp_params())]


# --------------------------------------------------------------------------- custom_vjp_bwd


class DeferredBwd:
    """A ``custom_vjp`` cotangent rule whose call is put off until the backward
    program runs: ``self(*operands)`` calls the user's ``bwd`` under the current
    interpreter. The operands are the residual leaves that are traced values and
    the nonzero output cotangents; the outputs are the cotangents of the call's
    inexact operands (zeros where ``bwd`` returns none). Compared by identity, so a
    program holding one is never confused with another's compiled executable."""

    def __init__(self, bwd: Callable, res: Any, cts: list, program: Program) -> None:
        leaves, self.res_tree = tree_flatten(res)
        self.res_is_op = [isinstance(x, Tracer) for x in leaves]
        self.res_static = [None if op else x for x, op in zip(leaves, self.res_is_op)]
        self.ct_avals = [a.strip_weak() for a in program.out_avals]
        self.ct_nonzero = [not is_zero(c) for c in cts]
        self.out_pos = [i for i, a in enumerate(program.in_avals) if dtypes.is_inexact(a.dtype)]
        self.out_avals = [program.in_avals[i].strip_weak() for i in self.out_pos]
        self.n_in = len(program.in_avals)
        self.operands = [x for x, op in zip(leaves, self.res_is_op) if op] + [
            c for c, nz in zip(cts, self.ct_nonzero) if nz
        ]
        self.in_avals = [to_aval(x) for x in self.operands]
        self.bwd = bwd
        self._host_program: Program | None = None

    def __call__(self, *operands: Any) -> list:
        it = iter(operands)
        leaves = [next(it) if op else x for x, op in zip(self.res_static, self.res_is_op)]
        cts = [next(it) if nz else Zero(a) for a, nz in zip(self.ct_avals, self.ct_nonzero)]
        in_cts = list(self.bwd(tree_unflatten(self.res_tree, leaves), cts))
        outs = []
        for i, a in zip(self.out_pos, self.out_avals):
            c = rules.instantiate(in_cts[i], a)
            if to_aval(c).dtype != a.dtype:
                c = ew.convert_element_type(c, a.dtype)
            outs.append(c)
        return outs

    def program(self) -> Program:
        """The user's ``bwd`` traced (abstractly) at the operands' avals."""
        with new_builder("custom_vjp_bwd") as b:
            return b.build(self(*[b.new_arg(a) for a in self.in_avals]))

    def host_program(self) -> Program:
        """:meth:`program`, traced on first use and kept: the host tier runs it on each
        evaluation (the compiled tier traces it once per compilation)."""
        prog = self._host_program
        if prog is None:
            prog = self._host_program = self.program()
        return prog

    def __repr__(self) -> str:
        return f"DeferredBwd({getattr(self.bwd, '__qualname__', self.bwd)})"


custom_vjp_bwd_p = Primitive("custom_vjp_bwd", family=FAMILY, multiple_results=True)


def _defer_custom_bwd(res: Any, cts: list, program: Program, bwd: Callable) -> list:
    d = DeferredBwd(bwd, res, cts, program)
    outs = iter(bind(custom_vjp_bwd_p, *d.operands, bwd=d))
    got = [None] * d.n_in
    for i in d.out_pos:
        got[i] = next(outs)
    return got


@custom_vjp_bwd_p.def_abstract_eval
def _custom_vjp_bwd_abstract_eval(*avals: Aval, bwd: DeferredBwd) -> list[Aval]:
    if [(a.shape, a.dtype) for a in avals] != [(a.shape, a.dtype) for a in bwd.in_avals]:
        raise TypeError(f"custom_vjp_bwd: operands {list(avals)}, expected {bwd.in_avals}")
    return bwd.out_avals


@custom_vjp_bwd_p.def_lower
def _custom_vjp_bwd_lower(*vals: Any, bwd: DeferredBwd) -> list:
    prog = bwd.program()
    outs = lower_program(prog)(*prog.consts, *vals)
    return [jax.numpy.asarray(o, a.dtype) for o, a in zip(outs, bwd.out_avals)]


@custom_vjp_bwd_p.def_host
def _custom_vjp_bwd_host(*vals: Any, bwd: DeferredBwd) -> list:
    return host_call(bwd.host_program(), vals)


@custom_vjp_bwd_p.def_jvp
def _custom_vjp_bwd_jvp(primals: list, tangents: list, *, bwd: DeferredBwd) -> tuple:
    return ad.jvp_eval(bwd.program(), primals, tangents)


def _custom_vjp_bwd_vjp_fwd(*primals: Any, bwd: DeferredBwd) -> tuple:
    vp = ad.vjp_program(bwd.program())
    out_res = eval_program(vp.fwd, *primals)
    n = len(bwd.out_avals)
    return out_res[:n], (vp, out_res[n:])


def _custom_vjp_bwd_vjp_bwd(res: tuple, cts: list, *, bwd: DeferredBwd) -> list:
    vp, residuals = res
    cts = [rules.instantiate(c, a) for c, a in zip(cts, bwd.out_avals)]
    in_cts = eval_program(vp.bwd, *residuals, *cts)
    return [None if z else c for c, z in zip(in_cts, vp.zero_cts)]


custom_vjp_bwd_p.vjp_fwd = _custom_vjp_bwd_vjp_fwd
custom_vjp_bwd_p.vjp_bwd = _custom_vjp_bwd_vjp_bwd


@custom_vjp_bwd_p.def_batch
def _custom_vjp_bwd_batch(args: list, dims: list, *, bwd: DeferredBwd) -> tuple:
    return batching.batch_eval(bwd.program(), args, dims)


@custom_vjp_bwd_p.def_examples
def _custom_vjp_bwd_examples(rng: np.random.Generator) -> list[Example]:
    params = _example_vjp_params()
    prog = _sub_program(lambda x, y: bind(custom_vjp_call_p, x, y, **params), _EXAMPLE_AVALS)
    vp = ad.vjp_program(prog, defer_custom_bwd=True)
    eqn = next(e for e in vp.bwd.eqns if e.prim is custom_vjp_bwd_p)
    return [Example([rand(rng, a.shape) for a in eqn.params["bwd"].in_avals], eqn.params)]


def run_backward(prog: Program, *args: Any) -> list:
    """Run a backward program built with ``defer_custom_bwd``: the deferred
    ``custom_vjp`` ``bwd`` rules are called now, inline (eagerly on a trace whose
    inputs are known, so they may read values), and the result runs as one program."""
    if not any(e.prim is custom_vjp_bwd_p for e in prog.eqns):
        return tiers.run(prog, *args)
    if is_tracing():
        return _eval_calling_bwd(prog, args)
    with new_builder("vjp") as b:
        ins = [b.new_arg(to_aval(x), x) for x in args]
        resolved = b.build(_eval_calling_bwd(prog, ins))
    return tiers.run(resolved, *args)


def _eval_calling_bwd(prog: Program, args: Any) -> list:
    env: dict[Any, Any] = dict(zip(prog.constvars, prog.consts))
    env.update(zip(prog.invars, args))
    for e in prog.eqns:
        ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
        if e.prim is custom_vjp_bwd_p:
            out = e.params["bwd"](*ins)
        else:
            out = bind(e.prim, *ins, **e.params)
        env.update(zip(e.outvars, out if e.prim.multiple_results else [out]))
    return [env[a] if type(a) is Var else a.val for a in prog.outvars]
