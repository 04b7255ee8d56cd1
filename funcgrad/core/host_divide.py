"""The host tier's division by a broadcast or constant divisor, rounded as XLA rounds it.

XLA's algebraic simplifier rewrites a floating-point ``x / b`` whose divisor is a
broadcast or a constant into ``x * (1 / b)``: one division per divisor element, then a
multiply per output element. The product rounds twice, so it differs from the correctly
rounded quotient NumPy computes in the last bit for about a third of the elements
(float32 and float64 alike). A program run once on the host tier and once compiled
(compat's op-by-op backward, whose tier changes when a program's executable is ready)
then gives two answers, and PyTorch's ``gradcheck`` calls such a backward not
reentrant. :func:`reciprocal_divides` gives those equations a host rule that computes
what XLA computes.

A divisor counts as broadcast or constant when it is a literal, a 0-d value divided
into a larger result (the lowering broadcasts it), the result of a
``broadcast_in_dim`` that adds elements, or computed from literals alone (XLA folds
it to a constant). A divisor that reaches XLA as a parameter of the program's full
shape keeps the true quotient on both tiers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core.ir import Eqn, Literal

__all__ = ["reciprocal_divides"]


def _constant_vars(eqns: Sequence[Eqn]) -> set[Any]:
    """The variables computed from literals alone (no effects, no operand variable)."""
    const: set[Any] = set()
    for e in eqns:
        if e.prim.effectful or not e.inputs:
            continue
        if all(type(a) is Literal or a in const for a in e.inputs):
            const.update(e.outvars)
    return const


def _divides_by_broadcast(e: Eqn, const: set[Any], bcast: set[Any]) -> bool:
    """Whether ``e`` is a real floating ``div`` that XLA turns into ``x * (1 / y)``."""
    if e.prim.name != "div" or len(e.inputs) != 2 or len(e.outvars) != 1:
        return False
    out = e.outvars[0].aval
    if np.dtype(out.dtype).kind != "f":
        return False
    y = e.inputs[1]
    if type(y) is Literal or y in const or y in bcast:
        return True
    return not y.aval.shape and bool(out.shape)


def _reciprocal_rule(dtype: np.dtype) -> Any:
    one = np.dtype(dtype).type(1)

    def divide(x: Any, y: Any) -> Any:
        """``x * (1 / y)`` in ``dtype``: XLA's form of a division by a broadcast."""
        r = np.divide(one, np.asarray(y, dtype))
        return np.multiply(np.asarray(x, dtype), r)

    return divide


def reciprocal_divides(
    original: Sequence[Eqn], eqns: list[tuple[Eqn, Any]]
) -> list[tuple[Eqn, Any]]:
    """``eqns`` (``(equation, specialised rule or None)`` for a plan of ``original``)
    with each division by a broadcast or constant divisor given XLA's rounding."""
    if not any(e.prim.name == "div" for e in original):
        return eqns
    const = _constant_vars(original)
    bcast = {
        e.outvars[0]
        for e in original
        if e.prim.name == "broadcast_in_dim"
        and len(e.outvars) == 1
        and type(e.inputs[0]) is not Literal
        and tuple(e.inputs[0].aval.shape) != tuple(e.outvars[0].aval.shape)
    }
    marked = {e.outvars[0] for e in original if _divides_by_broadcast(e, const, bcast)}
    if not marked:
        return eqns
    return [
        (e, _reciprocal_rule(e.outvars[0].aval.dtype))
        if rule is None and e.prim.name == "div" and e.outvars and e.outvars[0] in marked
        else (e, rule)
        for e, rule in eqns
    ]
