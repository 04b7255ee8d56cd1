"""IR → IR clean-up passes: dead-code and common-subexpression elimination."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad.core.ir import Eqn, Literal, Program, Var, _hashable_param, literal_key


def dce(prog: Program, used_outputs: list[bool] | None = None) -> Program:
    """Drop equations whose outputs are never used (primitives are pure, except those
    marked ``effectful``, which are always kept)."""
    outvars = prog.outvars
    if used_outputs is not None:
        outvars = tuple(v for v, u in zip(outvars, used_outputs) if u)
    live: set[Var] = {v for v in outvars if isinstance(v, Var)}
    kept: list[Eqn] = []
    pruned = False
    for e in reversed(prog.eqns):  # (loops, no generators: this runs for every new program)
        outs = e.outvars
        if len(outs) == 1:
            alive = outs[0] in live
        else:
            alive = False
            for v in outs:
                if v in live:
                    alive = True
                    break
        if alive or has_effects(e):
            used = [v in live for v in outs]
            if e.prim.prune_outputs is not None and not all(used) and not has_effects(e):
                # a call-like equation with outputs nobody reads: its sub-programs lose
                # them too (and whatever only they needed)
                e = Eqn(
                    e.prim,
                    e.inputs,
                    tuple(v for v, u in zip(e.outvars, used) if u),
                    e.prim.prune_outputs(used, **e.params),
                    e.source,
                )
                pruned = True
            kept.append(e)
            for a in e.inputs:
                if type(a) is Var:
                    live.add(a)
    kept.reverse()
    if len(kept) == len(prog.eqns) and outvars is prog.outvars and not pruned:
        return prog
    return prog.replace(eqns=tuple(kept), outvars=outvars)


def has_effects(e: Eqn) -> bool:
    """Whether ``e`` is an ``effectful`` primitive or a call whose sub-programs hold one."""
    if e.prim.effectful:
        return True
    if not e.params:
        return False
    for p in e.params.values():
        subs = p if isinstance(p, (tuple, list)) else (p,)
        for q in subs:
            if isinstance(q, Program) and any(has_effects(x) for x in q.eqns):
                return True
    return False


def has_io_callback(prog: Program) -> bool:
    """Whether ``prog`` (or a program inside one of its equations) calls
    ``io_callback``: JAX's IO effect, which a batched ``cond`` predicate, a batched
    ``while_loop`` predicate and ``checkpoint``'s recomputation refuse (the callback
    would run for examples that do not take the branch, or run twice)."""
    for e in prog.eqns:
        if e.prim.name == "io_callback":
            return True
        for p in (e.params or {}).values():
            for q in p if isinstance(p, (tuple, list)) else (p,):
                if isinstance(q, Program) and has_io_callback(q):
                    return True
    return False


def prune_constvars(prog: Program) -> Program:
    """Drop constvars (and their values) that no equation or output uses."""
    if not prog.constvars:
        return prog  # (the common case: no walk over the equations)
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
    """One flag per input of ``prog``: whether any equation or output reads it."""
    used = _used_vars(prog)
    return [v in used for v in prog.invars]


def input_deps(prog: Program, atoms: Sequence[Any]) -> list[set[int]]:
    """For each of ``atoms`` (vars or literals of ``prog``), the indices of ``prog``'s
    inputs it depends on (its equations indexed by output once, for all of them)."""
    producers = {v: e for e in prog.eqns for v in e.outvars}
    inv = {v: i for i, v in enumerate(prog.invars)}
    out = []
    for atom in atoms:
        deps: set[int] = set()
        stack, seen = [atom], set()
        while stack:
            v = stack.pop()
            if v in seen or not isinstance(v, Var):
                continue
            seen.add(v)
            if v in inv:
                deps.add(inv[v])
            elif v in producers:
                stack.extend([a for a in producers[v].inputs if isinstance(a, Var)])
        out.append(deps)
    return out


def cse(prog: Program) -> Program:
    """Merge equations that apply the same primitive to the same inputs with the same params
    (never two equations of an ``effectful`` primitive).

    Equations are grouped by primitive and inputs first; params are keyed only when a
    group has a second member (most equations have unique inputs, and keying params
    costs more than the rest of the pass)."""
    subst: dict[Var, Var] = {}
    # (primitive, inputs) -> [(params key or _UNKEYED, params, outvars), ...]
    seen: dict[Any, list] = {}
    eqns: list[Eqn] = []

    def atom(a: Any) -> Any:
        return subst.get(a, a) if isinstance(a, Var) else a

    changed = False
    for e in prog.eqns:
        ins_l = []  # the inputs after substitution, and their keys (one pass)
        keys = []
        for a in e.inputs:
            if type(a) is Literal:
                ins_l.append(a)
                keys.append(literal_key(a))
            else:
                a = subst.get(a, a) if subst else a
                ins_l.append(a)
                keys.append(id(a))
        ins = tuple(ins_l)
        if ins != e.inputs:
            e = Eqn(e.prim, ins, e.outvars, e.params, e.source)
            changed = True
        if has_effects(e):
            eqns.append(e)
            continue
        k = (e.prim.name, tuple(keys))
        group = seen.get(k)
        if group is None:
            seen[k] = [[_UNKEYED, e.params, e.outvars]]
            eqns.append(e)
            continue
        pk = _params_key(e.params)
        match = None
        if pk is not None:
            for entry in group:
                if entry[0] is _UNKEYED:
                    entry[0] = _params_key(entry[1])
                if entry[0] is not None and entry[0] == pk:
                    match = entry[2]
                    break
        if match is not None:
            for v, w in zip(e.outvars, match):
                subst[v] = w
            changed = True
            continue
        group.append([pk, e.params, e.outvars])
        eqns.append(e)
    if not changed:
        return prog
    return prog.replace(eqns=tuple(eqns), outvars=tuple(atom(a) for a in prog.outvars))


#: a CSE group member whose params were not keyed yet
_UNKEYED: Any = object()


def _params_key(params: dict[str, Any]) -> Any:
    """The hashable key of an equation's params, or ``None`` (never merged) when some
    param is unhashable."""
    k = _hashable_param(params)
    try:
        hash(k)
    except TypeError:
        return None
    return k


def simplify(prog: Program) -> Program:
    """CSE then DCE, the passes run before lowering."""
    return dce(cse(prog))
