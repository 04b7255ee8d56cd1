"""IR → IR clean-up passes: dead-code and common-subexpression elimination."""

from __future__ import annotations

from typing import Any

from funcgrad.core.ir import Eqn, Literal, Program, Var, _hashable_param


def dce(prog: Program, used_outputs: list[bool] | None = None) -> Program:
    """Drop equations whose outputs are never used (primitives are pure, except those
    marked ``effectful``, which are always kept)."""
    outvars = prog.outvars
    if used_outputs is not None:
        outvars = tuple(v for v, u in zip(outvars, used_outputs) if u)
    live: set[Var] = {v for v in outvars if isinstance(v, Var)}
    kept: list[Eqn] = []
    for e in reversed(prog.eqns):
        if any(v in live for v in e.outvars) or has_effects(e):
            kept.append(e)
            live.update(a for a in e.inputs if isinstance(a, Var))
    kept.reverse()
    if len(kept) == len(prog.eqns) and outvars is prog.outvars:
        return prog
    return prog.replace(eqns=tuple(kept), outvars=outvars)


def has_effects(e: Eqn) -> bool:
    """Whether ``e`` is an ``effectful`` primitive or a call whose sub-programs hold one."""
    if getattr(e.prim, "effectful", False):
        return True
    for p in e.params.values():
        subs = p if isinstance(p, (tuple, list)) else (p,)
        for q in subs:
            if isinstance(q, Program) and any(has_effects(x) for x in q.eqns):
                return True
    return False


def prune_constvars(prog: Program) -> Program:
    """Drop constvars (and their values) that no equation or output uses."""
    used = _used_vars(prog)
    keep = [i for i, v in enumerate(prog.constvars) if v in used]
    if len(keep) == len(prog.constvars):
        return prog
    return prog.replace(
        constvars=tuple(prog.constvars[i] for i in keep),
        consts=tuple(prog.consts[i] for i in keep) if prog.consts else (),
    )


def _used_vars(prog: Program) -> set[Var]:
    used: set[Var] = {v for v in prog.outvars if isinstance(v, Var)}
    for e in prog.eqns:
        used.update(a for a in e.inputs if isinstance(a, Var))
    return used


def used_invars(prog: Program) -> list[bool]:
    used = _used_vars(prog)
    return [v in used for v in prog.invars]


def cse(prog: Program) -> Program:
    """Merge equations that apply the same primitive to the same inputs with the same params
    (never two equations of an ``effectful`` primitive)."""
    subst: dict[Var, Var] = {}
    seen: dict[Any, tuple[Var, ...]] = {}
    eqns: list[Eqn] = []

    def atom(a: Any) -> Any:
        return subst.get(a, a) if isinstance(a, Var) else a

    def key_of(a: Any) -> Any:
        if isinstance(a, Literal):
            return ("lit", a.aval, repr(a.val))
        return id(a)

    changed = False
    for e in prog.eqns:
        ins = tuple(atom(a) for a in e.inputs)
        try:
            k = (e.prim.name, tuple(key_of(a) for a in ins), _hashable_param(e.params))
            hash(k)
        except TypeError:
            k = None
        if k is not None and has_effects(e):
            k = None
        if k is not None and k in seen:
            for v, w in zip(e.outvars, seen[k]):
                subst[v] = w
            changed = True
            continue
        if ins != e.inputs:
            e = Eqn(e.prim, ins, e.outvars, e.params, e.source)
            changed = True
        if k is not None:
            seen[k] = e.outvars
        eqns.append(e)
    if not changed:
        return prog
    return prog.replace(eqns=tuple(eqns), outvars=tuple(atom(a) for a in prog.outvars))


def simplify(prog: Program) -> Program:
    """CSE then DCE, the passes run before lowering."""
    return dce(cse(prog))


def fuse_calls(prog: Program) -> Program:
    """Merge a ``jit_call`` with a later ``jit_call`` that consumes its outputs.

    Legal when every other input of the later call is defined before the first:
    the pair then runs as one call placed where the first was. This is what turns
    ``grad(jit(f))`` — the inner function's forward call and its backward call
    seeded with a constant cotangent — into one call holding ``f``'s whole
    value-and-gradient program. Applied again inside the fused program, so
    nested jits fuse too.
    """
    from funcgrad.primitives.calls import jit_call_p

    if sum(e.prim is jit_call_p for e in prog.eqns) < 2:
        return prog
    eqns = list(prog.eqns)
    fused_any = False
    while True:
        pair = _fusable_pair(eqns, jit_call_p)
        if pair is None:
            break
        i, j = pair
        used_later = {a for k, e in enumerate(eqns) if k != j for a in e.inputs}
        used_later.update(a for a in prog.outvars if isinstance(a, Var))
        fused = _fuse_pair(eqns[i], eqns[j], used_later)
        if fused is None:
            break
        eqns[i] = fused
        del eqns[j]
        fused_any = True
    return prog.replace(eqns=tuple(eqns)) if fused_any else prog


def _fusable_pair(eqns: list[Eqn], call: Any) -> tuple[int, int] | None:
    """Indices ``(i, j)`` of calls to fuse, after moving before ``i`` the equations
    between them that ``j`` needs and that do not depend on ``i`` (in place)."""
    producer = {v: k for k, e in enumerate(eqns) for v in e.outvars}

    def deps(k: int) -> set[int]:
        return {producer[a] for a in eqns[k].inputs if isinstance(a, Var) and a in producer}

    for j, b in enumerate(eqns):
        if b.prim is not call:
            continue
        calls = [k for k in deps(j) if eqns[k].prim is call]
        if not calls:
            continue
        i = max(calls)
        # equations in (i, j) that j needs, found backwards from j
        needed: set[int] = set()
        todo = [k for k in deps(j) if k > i]
        while todo:
            k = todo.pop()
            if k == i:
                break
            if k not in needed:
                needed.add(k)
                todo.extend(d for d in deps(k) if d >= i)
        else:
            if needed:  # none depends on i: hoist them above it, keeping their order
                moved = [eqns[k] for k in sorted(needed)]
                rest = [e for k, e in enumerate(eqns) if k not in needed]
                eqns[:] = rest[:i] + moved + rest[i:]
                return i + len(moved), j
            return i, j
    return None


def _fuse_pair(a: Eqn, b: Eqn, used_later: set) -> Eqn | None:
    """One ``jit_call`` computing ``a`` then ``b``; ``a``'s outputs that only fed
    ``b`` become internal."""
    from funcgrad.core.interp import eval_program, new_builder
    from funcgrad.primitives.calls import jit_call_p

    from_a = {v: k for k, v in enumerate(a.outvars)}
    ext = [x for x in b.inputs if isinstance(x, Var) and x not in from_a]
    keep = [k for k, v in enumerate(a.outvars) if v in used_later]
    with new_builder("jit") as bld:
        a_args = [bld.new_arg(x.aval) for x in a.inputs]
        ext_args = {x: bld.new_arg(x.aval) for x in dict.fromkeys(ext)}
        a_outs = eval_program(a.params["program"], *a_args)
        b_ins = [
            x.val if isinstance(x, Literal) else a_outs[from_a[x]] if x in from_a else ext_args[x]
            for x in b.inputs
        ]
        b_outs = eval_program(b.params["program"], *b_ins)
        program = bld.build([a_outs[k] for k in keep] + b_outs)
    if program.constvars:
        return None
    program = fuse_calls(simplify(program))
    name = a.params["name"]
    if name.startswith("fwd_"):
        name = "vjp_" + name.removeprefix("fwd_")
    return Eqn(
        jit_call_p,
        (*a.inputs, *ext_args),
        (*(a.outvars[k] for k in keep), *b.outvars),
        {"program": program, "name": name},
        a.source,
    )
