"""Custom rules that close over values of live traces (see docs/design.md, "Rules
closing over live tracers").

funcgrad traces a whole function before transforming it, so a ``custom_jvp`` or
``custom_vjp`` rule closing over a value of an enclosing trace (a ``vmap``'s batched
value) would run after that trace ended. At call time :func:`live_tracers` finds such
values in the rule's closure; the rule is then traced right away
(:func:`trace_jvp_rule`, :func:`trace_vjp_rules`) with them as explicit leading
operands of the call, so transforms see them as ordinary inputs.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections.abc import Callable
from typing import Any

from funcgrad.core import dtypes
from funcgrad.core.errors import LeakedTracerError
from funcgrad.core.interp import Tracer, eval_program, new_builder, to_aval
from funcgrad.core.ir import Program, Var
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import collectives as col
from funcgrad.primitives import rules
from funcgrad.tree_util import tree_flatten, tree_unflatten


class CustomFunction:
    """Base of the user-facing custom-rule wrappers (``custom_jvp``, ``custom_vjp``,
    ``custom_vmap``): :func:`live_tracers` does not look inside them (their own rules
    are examined when they are called)."""


def live_tracers(root: Any) -> list:
    """The tracers of live traces reachable from ``root`` (a rule and its static
    arguments) through closure cells, default arguments, ``functools.partial`` and
    containers: what the rule closes over. Other custom functions are not entered
    (their rules are examined when they are called)."""
    found: dict[int, Tracer] = {}
    seen: set[int] = set()

    def visit(x: Any, depth: int) -> None:
        if depth > 8 or id(x) in seen:
            return
        seen.add(id(x))
        if isinstance(x, Tracer):
            if x._builder.alive:
                found[id(x)] = x
        elif isinstance(x, (CustomFunction, str, bytes)):
            return
        elif isinstance(x, (list, tuple, set, frozenset)):
            for y in list(x)[:1000]:
                visit(y, depth + 1)
        elif isinstance(x, dict):
            for y in list(x.values())[:1000]:
                visit(y, depth + 1)
        elif isinstance(x, functools.partial):
            visit(x.func, depth + 1)
            visit(x.args, depth + 1)
            visit(x.keywords, depth + 1)
        elif isinstance(x, types.MethodType):
            visit(x.__func__, depth + 1)
        elif isinstance(x, types.FunctionType):
            for cell in x.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell
                    visit(cell.cell_contents, depth + 1)
            visit(x.__defaults__, depth + 1)
            visit(x.__kwdefaults__, depth + 1)

    visit(root, 0)
    # a rule using a collective reads the tokens of its axes from the axis environment,
    # not from a closure: while names are bound, they count as closed over too
    for t in col.bound_tokens():
        found.setdefault(id(t), t)
    return list(found.values())


class RuleProgram:
    """A custom rule traced at call time: ``prog`` takes (closed-over values,
    primals, tangents of the inexact primals) and returns (outputs, tangents)."""

    prog: Program | None = None
    bwd_prog: Program | None = None
    n_out = 0


#: rules being traced at call time, by (function, avals, closed-over values): a call
#: of the same function inside its own rule reuses the program being traced (a rule
#: such as ``lambda p, t: (f(*p), f(*t))`` would otherwise trace itself forever)
RULES_IN_TRACE: dict[Any, RuleProgram] = {}


def trace_jvp_rule(
    key: Any, jvp_rule: Callable, closed: list, leaves: list, in_avals: list, n_consts: int
) -> RuleProgram:
    """Trace ``jvp_rule`` (the call's rule over flat lists) now, with the ``closed``
    values as the first inputs of ``ref.prog``: (closed, primals, tangents of the
    inexact primals) -> (outputs, tangents)."""
    ref = RuleProgram()
    RULES_IN_TRACE[key] = ref
    try:
        with new_builder("custom_jvp") as b:
            for t in closed:  # the closed-over values become the first constants
                b.to_atom(t)
            ps = [b.new_arg(a, x) for a, x in zip(in_avals, leaves)]
            tans = [
                b.new_arg(a.strip_weak()) if dtypes.is_inexact(a.dtype) else Zero(a.strip_weak())
                for a in in_avals
            ]
            outs, touts = jvp_rule([None] * n_consts + ps, [None] * n_consts + tans)
            touts = [rules.instantiate(t, t.aval) if is_zero(t) else t for t in touts]
            rp = b.build(list(outs) + touts)
    finally:
        del RULES_IN_TRACE[key]
    n = len(closed)
    ref.prog = Program(
        invars=rp.constvars[:n] + rp.invars,
        constvars=rp.constvars[n:],
        eqns=rp.eqns,
        outvars=rp.outvars,
        consts=rp.consts[n:],
    )
    ref.n_out = len(outs)
    return ref


def differentiated_closure_error(kind: str, name: str, values: list) -> LeakedTracerError:
    """The error for a rule closing over a value that the transform applying the rule
    differentiates (JAX raises its escaped-tracer error there)."""
    what = ", ".join(to_aval(v).str_short() for v in values)
    return LeakedTracerError(
        f"{kind} function {name} (or its rule) closes over a value that is being "
        f"differentiated ({what}, a tracer of the enclosing transform): a custom rule can't "
        "close over a tracer of the transform that differentiates it, because the rule "
        "would ignore that value's derivative. Pass the value to the function as an "
        "explicit argument instead."
    )


def jvp_from_program(
    ref: RuleProgram, n_consts: int, n_closed: int, in_avals: list, name: str
) -> Callable:
    """The rule of a ``custom_jvp_call`` whose operands are (constants, closed-over
    values, primals), evaluating ``ref.prog``; a closed-over value with a nonzero
    tangent is an error (:func:`differentiated_closure_error`)."""
    diff = [i for i, a in enumerate(in_avals) if dtypes.is_inexact(a.dtype)]
    k = n_consts + n_closed

    def jvp_rule(primals: list, tangents: list) -> tuple:
        hit = [
            p
            for p, t in zip(primals[n_consts:k], tangents[n_consts:k])
            if t is not None and not is_zero(t)
        ]
        if hit:
            raise differentiated_closure_error("custom_jvp", name, hit)
        if ref.prog is None:
            raise NotImplementedError(
                "a custom_jvp rule that closes over traced values differentiates its own "
                "function inside the rule"
            )
        ts = [rules.instantiate(tangents[k + i], in_avals[i].strip_weak()) for i in diff]
        outs = eval_program(ref.prog, *primals[n_consts:k], *primals[k:], *ts)
        return outs[: ref.n_out], outs[ref.n_out :]

    return jvp_rule


def trace_vjp_rules(
    key: Any,
    fwd_rule: Callable,
    bwd_rule: Callable,
    closed: list,
    leaves: list,
    in_avals: list,
    n_consts: int,
    out_avals: list,
) -> RuleProgram:
    """Trace ``fwd`` (every input perturbed) and ``bwd`` (every cotangent nonzero)
    into ``ref.prog`` (closed-over values, primals) -> (outputs, array residuals) and
    ``ref.bwd_prog`` (closed-over values, array residuals, cotangents) -> cotangents
    of the inexact primals."""
    ref = RuleProgram()
    RULES_IN_TRACE[key] = ref
    n = len(closed)
    try:
        with new_builder("custom_vjp") as b:
            for t in closed:
                b.to_atom(t)
            ps = [b.new_arg(a, x) for a, x in zip(in_avals, leaves)]
            outs, res = fwd_rule([None] * n_consts + ps)
            r_leaves, r_tree = tree_flatten(res)
            is_arr = [isinstance(x, Tracer) or hasattr(x, "shape") for x in r_leaves]
            arrays = [x for x, on in zip(r_leaves, is_arr) if on]
            fp = b.build(list(outs) + arrays)
        with new_builder("custom_vjp") as b:
            for t in closed:
                b.to_atom(t)
            it = iter([b.new_arg(to_aval(x)) for x in arrays])
            res = tree_unflatten(r_tree, [next(it) if on else x for x, on in zip(r_leaves, is_arr)])
            cts = [b.new_arg(a.strip_weak()) for a in out_avals]
            got = bwd_rule(res, cts)[n_consts:]
            bp = b.build(
                [
                    rules.instantiate(c, a.strip_weak())
                    for c, a in zip(got, in_avals)
                    if dtypes.is_inexact(a.dtype)
                ]
            )
    finally:
        del RULES_IN_TRACE[key]

    def with_closed_inputs(p: Program) -> Program:
        return Program(p.constvars[:n] + p.invars, p.constvars[n:], p.eqns, p.outvars, p.consts[n:])

    ref.prog, ref.bwd_prog = with_closed_inputs(fp), with_closed_inputs(bp)
    ref.n_out = len(outs)
    return ref


def vjp_from_programs(
    ref: RuleProgram, n_consts: int, n_closed: int, in_avals: list, name: str
) -> tuple:
    """The ``fwd`` and ``bwd`` rules of a ``custom_vjp_call`` whose operands are
    (constants, closed-over values, primals), evaluating ``ref``'s programs; a
    differentiated closed-over value is an error."""
    diff = [i for i, a in enumerate(in_avals) if dtypes.is_inexact(a.dtype)]
    k = n_consts + n_closed

    def fwd_rule(primals: list, active: list | None = None) -> tuple:
        hit = [p for p, on in zip(primals[n_consts:k], (active or [])[n_consts:k]) if on]
        if hit:
            raise differentiated_closure_error("custom_vjp", name, hit)
        if ref.prog is None:
            raise NotImplementedError(
                "a custom_vjp rule that closes over traced values differentiates its own "
                "function inside the rule"
            )
        closed = list(primals[n_consts:k])
        outs = eval_program(ref.prog, *closed, *primals[k:])
        return outs[: ref.n_out], (closed, outs[ref.n_out :])

    def bwd_rule(res: tuple, cts: list) -> list:
        closed, arrays = res
        ct_vars = ref.bwd_prog.invars[len(ref.bwd_prog.invars) - len(cts) :]
        cts = [rules.instantiate(c, v.aval) for c, v in zip(cts, ct_vars)]
        got = iter(eval_program(ref.bwd_prog, *closed, *arrays, *cts))
        flat: list = [None] * (k + len(in_avals))
        for i in diff:
            flat[k + i] = next(got)
        return flat

    return fwd_rule, bwd_rule


def insert_invars(prog: Program, pos: int, avals: list) -> Program:
    """``prog`` with unused inputs of ``avals`` inserted at ``pos``."""
    new = tuple(Var(a) for a in avals)
    ins = prog.invars[:pos] + new + prog.invars[pos:]
    return Program(ins, prog.constvars, prog.eqns, prog.outvars, prog.consts)
