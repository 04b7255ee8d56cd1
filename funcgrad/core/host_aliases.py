"""Host plans: chains of reshapes collapsed, identities dropped.

A traced program spells NumPy's broadcasting of a ``keepdims`` reduction as a reshape
that drops the size-1 dimension and a ``broadcast_in_dim`` that puts it back (which a
host plan computes as a view with the size-1 dimension: :func:`funcgrad.core.host._views`),
and a ``log_softmax`` holds a ``stop_gradient`` between two reshapes. On NumPy arrays each
is a call and a dtype check (about 1 us) that gives back the elements it was given, in
the same order: a reshape of a reshape is one reshape of the first operand (NumPy's
C-order reshapes compose), and one back to the first operand's own shape is that operand.

:func:`collapse` rewrites a plan's equations so: a step whose primitive declares
``host_reshape`` (its result holds the operand's elements in C order at a shape:
``reshape``; ``stop_gradient`` at the operand's own shape), or a ``broadcast_in_dim``
taken as a view, reads the start of its chain instead of the previous link, and is
dropped where the chain ends at the start's own shape; then equations nothing reads are
dropped. A step producing a program output is kept (an output is a fresh value, never
an input given back), and a chain never starts at a 0-d value (a weakly typed Python
number, which the plan passes as it is, would reach readers that expect an array).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core.ir import Eqn, Literal

__all__ = ["collapse", "reshape_rule"]


def reshape_rule(shape: tuple[int, ...]) -> Callable[..., Any]:
    """A host rule giving its operand's elements at ``shape`` (a NumPy reshape: a view
    where NumPy can make one); :attr:`view_shape` names the shape."""

    def reshape(x: Any) -> Any:
        return np.asarray(x).reshape(shape)

    reshape.view_shape = shape  # type: ignore[attr-defined]
    return reshape


def _target(e: Eqn, rule: Any) -> tuple[int, ...] | None:
    """The shape at which step ``(e, rule)`` gives its one operand's elements in C order,
    or ``None`` when it is no such step."""
    if len(e.inputs) != 1 or len(e.outvars) != 1:
        return None
    if rule is not None:
        return getattr(rule, "view_shape", None)
    f = e.prim.host_reshape
    return None if f is None else tuple(f(e.inputs[0].aval.shape, **e.params))


def collapse(eqns: list[tuple[Eqn, Any]], outvars: Sequence[Any]) -> list[tuple[Eqn, Any]]:
    """``eqns`` (``(equation, specialised rule or None)``) with reshape chains collapsed
    and identities dropped (the module docstring)."""
    if not any(_target(e, r) is not None for e, r in eqns):
        return eqns
    outs = {a for a in outvars if type(a) is not Literal}
    start: dict[Any, Any] = {}  # a chain link's var -> the chain's first operand
    subst: dict[Any, Any] = {}  # a dropped step's var -> the var it equals
    out: list[tuple[Eqn, Any]] = []
    repointed = False
    for e, rule in eqns:
        if subst and any(type(a) is not Literal and a in subst for a in e.inputs):
            ins = tuple(subst.get(a, a) if type(a) is not Literal else a for a in e.inputs)
            e = Eqn(e.prim, ins, e.outvars, e.params, e.source)
        shape = _target(e, rule)
        a = e.inputs[0] if shape is not None else None
        if a is None or type(a) is Literal or not a.aval.shape:
            out.append((e, rule))
            continue
        base = start.get(a, a)
        v = e.outvars[0]
        if v not in outs and tuple(base.aval.shape) == shape:
            subst[v] = base  # the chain gives its first operand back
            continue
        start[v] = base
        if base is not a:  # read the chain's start: one reshape instead of two
            e = Eqn(e.prim, (base,), e.outvars, {}, e.source)
            rule = reshape_rule(shape)
            repointed = True
        out.append((e, rule))
    if not subst and not repointed:
        return out
    needed = set(outs)
    kept: list[tuple[Eqn, Any]] = []
    for e, rule in reversed(out):  # (equations nothing reads any more)
        if e.prim.effectful or any(v in needed for v in e.outvars):
            kept.append((e, rule))
            needed.update(a for a in e.inputs if type(a) is not Literal)
    kept.reverse()
    return kept
