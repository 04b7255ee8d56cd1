"""Custom rules run at the call, as JAX runs them under differentiation (see
docs/design.md, "When custom rules run").

When a ``custom_jvp`` function is applied to values that an enclosing eager ``jvp``/
``grad``/``vjp``/``linearize`` differentiates (:mod:`funcgrad.api._levels`), JAX calls
its rule right away and never the function itself; a ``custom_vjp`` function's ``fwd``
runs right away and ``bwd`` when the backward pass runs. :func:`jvp_at_call` and
:func:`fwd_at_call` do the same: the rule is traced now, in a builder marked as handling
that level (so a call of the function inside the rule, on primals, runs the rule of the
next level out, or the function's body), and the call's equation carries the traced
rule: its ``program`` is the rule's primal part and its ``jvp``/``fwd`` evaluates the
traced rule, so applying the transform later calls no Python function again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad._rule_closures import differentiated_closure_error
from funcgrad.api import _levels
from funcgrad.core import dtypes
from funcgrad.core.ad_util import close
from funcgrad.core.interp import Tracer, eval_program, new_builder, to_aval
from funcgrad.core.ir import Program, Var
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.passes import dce
from funcgrad.primitives import rules
from funcgrad.tree_util import tree_flatten, tree_unflatten


def pending_level(leaves: Sequence[Any], kind: str, name: str) -> tuple[Any, list[bool]]:
    """The innermost live differentiation perturbing any of ``leaves`` (``None`` if
    none does), and which leaves it perturbs.

    Raises:
        UnexpectedTracerError: that level's rule is being traced, so the value was
            closed over by a rule (JAX's escaped tracer)."""
    if not _levels.any_level():
        return None, []
    found = [_levels.levels(x) for x in leaves]
    union = frozenset().union(*found)
    if not union:
        return None, []
    level = _levels.innermost(union)
    pert = [level in f for f in found]
    if _levels.being_handled(level):
        raise differentiated_closure_error(kind, name, [x for x, p in zip(leaves, pert) if p])
    return level, pert


def _nonzero(t: Any) -> bool:
    return t is not None and not is_zero(t)


def _primal_part(prog: Program, n_keep_in: int, n_out: int) -> Program | None:
    """``prog`` reduced to its first ``n_out`` outputs and ``n_keep_in`` inputs, or
    ``None`` when those outputs read the other inputs."""
    used = [True] * n_out + [False] * (len(prog.outvars) - n_out)
    part = dce(prog, used)
    dropped = set(part.invars[n_keep_in:])
    atoms = [*part.outvars, *(a for e in part.eqns for a in e.inputs)]
    if any(type(a) is Var and a in dropped for a in atoms):
        return None
    return Program(part.invars[:n_keep_in], (), part.eqns, part.outvars, ())


def jvp_at_call(
    rule: Callable,
    lazy: Callable,
    leaves: list,
    in_avals: list,
    level: Any,
    pert: list[bool],
    closed: list,
    name: str,
) -> tuple[tuple, Program | None, Callable, list[bool]]:
    """Trace a ``custom_jvp`` call's ``rule(primals, tangents) -> (outs, tangents)``
    now (tangents for the ``pert`` inputs, symbolic zeros for the others).

    Returns the constants the traced rule reads (the call's leading operands), the
    primal program over (constants, primals) (``None`` if the rule's primal outputs
    read its tangents), the call's rule over (constants, primals) and which outputs
    have symbolic-zero tangents. A tangent that
    later arrives for an input traced as unperturbed falls back to ``lazy`` (the
    user's rule over the primals). A nonzero tangent for a value in ``closed`` (what
    the rule closes over) is an error, as in JAX."""
    with new_builder("custom_jvp") as r:
        _levels.handles(r, level)
        ps = [r.new_arg(a, x) for a, x in zip(in_avals, leaves)]
        tans = [
            r.new_arg(a.strip_weak(), _levels.known_tangent(level, x))
            if on
            else Zero(a.strip_weak())
            for a, x, on in zip(in_avals, leaves, pert)
        ]
        outs, touts = rule(ps, tans)
        nz = [not is_zero(t) for t in touts]
        zero_avals = [to_aval(o).strip_weak() for o in outs]
        traced = r.build(list(outs) + [t for t, z in zip(touts, nz) if z])
    traced, consts = close(traced)
    nc, n_out = len(consts), len(outs)
    program = _primal_part(traced, nc + len(leaves), n_out)
    closed_ids = {id(t) for t in closed}
    closed_pos = [i for i, c in enumerate(consts) if id(c) in closed_ids]

    def jvp(primals: list, tangents: list) -> tuple:
        hit = [primals[i] for i in closed_pos if _nonzero(tangents[i])]
        if hit:
            raise differentiated_closure_error("custom_jvp", name, hit)
        tl = tangents[nc:]
        if any(_nonzero(t) and not on for t, on in zip(tl, pert)):
            outs, touts = lazy(list(primals[nc:]), list(tl))
            return list(outs), list(touts)
        ts = [rules.instantiate(t, a.strip_weak()) for t, a, on in zip(tl, in_avals, pert) if on]
        res = eval_program(traced, *primals, *ts)
        it = iter(res[n_out:])
        return res[:n_out], [next(it) if z else Zero(a) for z, a in zip(nz, zero_avals)]

    return consts, program, jvp, [not z for z in nz]


def fwd_at_call(
    fwd: Callable,
    lazy: Callable,
    leaves: list,
    in_avals: list,
    level: Any,
    pert: list[bool],
    closed: list,
    name: str,
    symbolic: bool,
) -> tuple[tuple, Program, Callable]:
    """Trace a ``custom_vjp`` call's ``fwd(primals, active) -> (outs, residuals)`` now
    (``pert`` as the inputs' activity).

    Returns the constants the traced ``fwd`` reads (the call's leading operands), the
    primal program over (constants, primals) and the call's ``fwd`` over (constants,
    primals); the residuals keep their structure, their traced leaves computed by the
    traced ``fwd`` and the others (Python values, functions) as ``fwd`` returned them.
    With ``symbolic`` (``CustomVJPPrimal.perturbed`` is visible to ``fwd``), an
    activity that differs from ``pert`` falls back to ``lazy``."""
    with new_builder("custom_vjp") as r:
        _levels.handles(r, level)
        ps = [r.new_arg(a, x) for a, x in zip(in_avals, leaves)]
        outs, res = fwd(ps, list(pert))
        r_leaves, r_tree = tree_flatten(res)
        is_op = [isinstance(x, Tracer) for x in r_leaves]
        traced = r.build(list(outs) + [x for x, op in zip(r_leaves, is_op) if op])
    traced, consts = close(traced)
    nc, n_out = len(consts), len(outs)
    program = _primal_part(traced, nc + len(leaves), n_out)
    assert program is not None  # (no input is left out)
    static = [None if op else x for x, op in zip(r_leaves, is_op)]
    closed_ids = {id(t) for t in closed}
    closed_pos = [i for i, c in enumerate(consts) if id(c) in closed_ids]

    def fwd_call(primals: list, active: list | None = None) -> tuple:
        act = [True] * len(primals) if active is None else list(active)
        hit = [primals[i] for i in closed_pos if act[i]]
        if hit:
            raise differentiated_closure_error("custom_vjp", name, hit)
        now = [bool(on) and dtypes.is_inexact(a.dtype) for on, a in zip(act[nc:], in_avals)]
        if symbolic and active is not None and now != list(pert):
            return lazy(list(primals[nc:]), act[nc:])
        got = eval_program(traced, *primals)
        it = iter(got[n_out:])
        res = tree_unflatten(r_tree, [next(it) if op else x for x, op in zip(static, is_op)])
        return got[:n_out], res

    return consts, program, fwd_call
