"""Which differentiation levels perturb a traced value (see docs/design.md, "When custom
rules run").

JAX differentiates as it goes: a ``custom_jvp``/``custom_vjp`` function applied to a
value that a ``jvp``/``grad``/``vjp`` being traced differentiates runs its rule at once,
and never its primal function. funcgrad traces first and transforms after, so to call
the same Python functions in the same order the call must know, while tracing, whether
an enclosing eager differentiation perturbs its arguments. The transforms register
that here: :func:`differentiates` marks a builder's differentiated inputs (``grad``,
``vjp``, ``jvp``, ``linearize``), :func:`maps` ties a ``vmap`` builder's mapped inputs
to the batched values they stand for, and :func:`handles` marks the builder tracing a
rule for one level, so that values inside it are primals of that level.
:func:`levels` follows a value back through the equations recorded so far, the
inputs' known sources and those ties, to the live levels that perturb it.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence
from typing import Any

from funcgrad.core import dtypes
from funcgrad.core.interp import UNKNOWN, Builder, Tracer
from funcgrad.core.ir import Var

_EMPTY: frozenset = frozenset()
_order = itertools.count()

#: differentiating builders: their differentiated inputs, and the order they began in
_DIFF: weakref.WeakKeyDictionary[Builder, tuple[int, frozenset]] = weakref.WeakKeyDictionary()
#: a builder tracing a custom rule -> the level (builder) whose rule it traces
_HANDLED: weakref.WeakKeyDictionary[Builder, Builder] = weakref.WeakKeyDictionary()
#: a vmap builder's mapped inputs -> the batched values they stand for
_MAPPED: weakref.WeakKeyDictionary[Builder, dict] = weakref.WeakKeyDictionary()
#: jvp builders' known tangents of their inputs
_TANGENTS: weakref.WeakKeyDictionary[Builder, dict] = weakref.WeakKeyDictionary()
#: per builder, the levels of its vars found so far (computed incrementally)
_SCANS: weakref.WeakKeyDictionary[Builder, _Scan] = weakref.WeakKeyDictionary()


class _Scan:
    def __init__(self) -> None:
        self.upto = 0
        self.of: dict[Var, frozenset] = {}
        self.inputs: set[Var] = set()
        self.consts: dict[Var, Any] = {}
        self.nconsts = 0


def differentiates(b: Builder, tracers: Sequence[Any], tangents: Sequence[Any] = ()) -> None:
    """Mark ``b`` as an eager differentiation whose inputs ``tracers`` are perturbed
    (the inexact ones); ``tangents``, when given, are their known tangents (``jvp``)."""
    diff = frozenset(
        t._var for t in tracers if isinstance(t, Tracer) and dtypes.is_inexact(t.aval.dtype)
    )
    _DIFF[b] = (next(_order), diff)
    if tangents:
        _TANGENTS[b] = {t._var: v for t, v in zip(tracers, tangents)}


def known_tangent(level: Builder, x: Any) -> Any:
    """The tangent of ``x`` at ``level`` when ``x`` is one of its inputs and the tangent
    is known (``jvp``'s), else ``UNKNOWN``."""
    if isinstance(x, Tracer) and x._builder is level:
        return _TANGENTS.get(level, {}).get(x._var, UNKNOWN)
    return UNKNOWN


def being_handled(level: Builder) -> bool:
    """Whether a rule for ``level`` is being traced (a value that ``level`` perturbs,
    met inside it other than through the rule's arguments, is closed over)."""
    return any(r.alive and lv is level for r, lv in list(_HANDLED.items()))


def zero_tangents(tracers: Sequence[Any], level: Builder) -> None:
    """``tracers`` (outputs of a custom rule's call) have zero tangents at ``level``."""
    for t in tracers:
        if isinstance(t, Tracer) and t._builder.alive:
            s = _scan(t._builder)
            got = s.of.get(t._var)
            if got:
                s.of[t._var] = got - {level}


def handles(rule_builder: Builder, level: Builder) -> None:
    """Mark ``rule_builder`` as tracing a custom rule at ``level``: its inputs are
    primals there, perturbed only by the levels outside it."""
    _HANDLED[rule_builder] = level


def maps(b: Builder, tracer: Any, batched: Any) -> None:
    """Tie ``b``'s mapped input ``tracer`` to the batched value ``batched`` it stands for."""
    if isinstance(tracer, Tracer) and isinstance(batched, Tracer):
        _MAPPED.setdefault(b, {})[tracer._var] = batched


def any_level() -> bool:
    """Whether any eager differentiation is being traced (a cheap test first)."""
    for b in list(_DIFF.keys()):
        if b.alive:
            return True
        del _DIFF[b]
    return False


def levels(x: Any) -> frozenset:
    """The live differentiating builders that perturb ``x`` (empty for a value that is
    not a tracer, or not inexact)."""
    if not isinstance(x, Tracer) or not x._builder.alive:
        return _EMPTY
    if not dtypes.is_inexact(x.aval.dtype):
        return _EMPTY
    return frozenset(b for b in _var_levels(x._builder, x._var) if b.alive)


def innermost(found: frozenset) -> Builder:
    """The level begun last among ``found`` (the one JAX's rule runs for first)."""
    return max(found, key=lambda b: _DIFF[b][0])


def _input_levels(b: Builder, s: _Scan, v: Var) -> frozenset:
    out = set()
    entry = _DIFF.get(b)
    if entry is not None and v in entry[1]:
        out.add(b)
    src = b._sources.get(v)
    if src is None:
        src = _MAPPED.get(b, {}).get(v)
    if src is None:
        if s.nconsts < len(b.constvars):  # constants lifted since the last look
            s.consts.update(zip(b.constvars[s.nconsts :], b.consts[s.nconsts :]))
            s.nconsts = len(b.constvars)
        src = s.consts.get(v)
    if isinstance(src, Tracer) and src._builder.alive and src._builder is not b:
        outer = levels(src)
        handled = _HANDLED.get(b)
        out.update(lv for lv in outer if lv is not handled)
    return frozenset(out) if out else _EMPTY


def _scan(b: Builder) -> _Scan:
    """``b``'s scan, brought up to its last equation."""
    s = _SCANS.get(b)
    if s is None:
        s = _SCANS[b] = _Scan()
    eqns = b.eqns
    for i in range(s.upto, len(eqns)):
        e = eqns[i]
        if not e.prim.differentiable:
            continue
        ins = [_atom_levels(b, s, a) for a in e.inputs]
        found = _EMPTY.union(*ins) if any(ins) else _EMPTY
        if found:
            for o in e.outvars:
                if dtypes.is_inexact(o.aval.dtype):
                    s.of[o] = found
    s.upto = len(eqns)
    return s


def _atom_levels(b: Builder, s: _Scan, v: Any) -> frozenset:
    if type(v) is not Var:
        return _EMPTY
    got = s.of.get(v)
    if got is not None:
        return got
    if v in s.inputs:
        return _EMPTY
    lv = _input_levels(b, s, v)
    s.inputs.add(v)
    if lv:
        s.of[v] = lv
    return lv


def _var_levels(b: Builder, var: Var) -> frozenset:
    return _atom_levels(b, _scan(b), var)
