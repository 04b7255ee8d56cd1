"""What the control-flow primitives share: operand and carry checks, strong typing
of lowered values, running a lowering eagerly through the compile cache, and the
program surgery (fresh inputs, permutations, joined consts, closed JVPs) their
rules use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad import ad
from funcgrad.core import compile_cache, dtypes
from funcgrad.core.host import fix_dtype
from funcgrad.core.interp import eval_program, new_builder
from funcgrad.core.ir import Aval, Program, Var, _hashable_param
from funcgrad.core.zeros import Zero
from funcgrad.primitives import rules
from funcgrad.primitives.calls import close

FAMILY = "control_flow"


# --------------------------------------------------------------------------- helpers


def _desc(a: Aval) -> str:
    return f"shape {a.shape} and dtype {a.dtype.name}"


def _same(a: Aval, b: Aval) -> bool:
    """Equal shapes and dtypes (weak types may differ)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _is_float(a: Aval) -> bool:
    return dtypes.is_inexact(a.dtype)


def _check_inputs(name: str, what: str, got: Sequence[Aval], want: Sequence[Aval]) -> None:
    if len(got) != len(want):
        raise TypeError(f"{name}: {what} takes {len(want)} operands, got {len(got)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if not _same(g, w):
            raise TypeError(
                f"{name}: operand {i} of the {what} has {_desc(g)}, but the {what} "
                f"expects {_desc(w)}"
            )


def _check_carry(name: str, carry_in: Sequence[Aval], carry_out: Sequence[Aval]) -> None:
    if len(carry_in) != len(carry_out):
        raise TypeError(
            f"{name}: the body returns {len(carry_out)} carry values for {len(carry_in)} inputs"
        )
    for i, (a, b) in enumerate(zip(carry_in, carry_out)):
        if not _same(a, b):
            raise TypeError(
                f"{name}: the body's carry output {i} has {_desc(b)}, but the carry input "
                f"has {_desc(a)}; the carry must keep its type across iterations"
            )


def _strong(v: Any, aval: Aval) -> Any:
    """A lowered value as a strongly typed array of ``aval``'s dtype."""
    if isinstance(v, (bool, int, float, complex, np.ndarray, np.generic)):
        return np.asarray(v, aval.dtype)
    if v.dtype != aval.dtype or getattr(v, "weak_type", False):
        return lax.convert_element_type(v, aval.dtype)
    return v


def _run(name: str, params: dict, fn: Callable, vals: Sequence[Any]) -> Any:
    """Run a lowering through the compile cache (:func:`compile_cache.run_lowering`),
    keyed on the structure of the params (structurally equal programs lower
    identically)."""
    return compile_cache.run_lowering("control_flow", (name, _hashable_param(params)), fn, vals)


def _host_strong(vals: Sequence[Any], dts: Sequence[np.dtype]) -> list:
    """Host values of exactly ``dts`` (carries are strongly typed: a Python scalar, for a
    weakly typed initial value, is made an array)."""
    return [fix_dtype(v, d) for v, d in zip(vals, dts)]


def _untyped_carries(prog: Program, n_consts: int, n_carry: int) -> list[int]:
    """Positions of the carry outputs of a loop body ``prog`` (inputs ``(*consts, *carry,
    ...)``, outputs ``(*carry, ...)``) that its host plan may return as other than a host
    value of the carry's dtype: literals and consts passed through (an equation's output
    is cast to its dtype by the plan, a carry passed through stays one)."""
    consts = set(prog.invars[:n_consts])
    return [k for k, v in enumerate(prog.outvars[:n_carry]) if type(v) is not Var or v in consts]


def _fresh(avals: Sequence[Aval]) -> tuple[Var, ...]:
    return tuple(Var(a) for a in avals)


def _with_unused_inputs(prog: Program, avals: Sequence[Aval], at: int) -> Program:
    """``prog`` taking extra, unused inputs of ``avals`` inserted at position ``at``."""
    inv = prog.invars
    return prog.replace(invars=inv[:at] + _fresh(avals) + inv[at:])


def _permute(prog: Program, in_order: Sequence[int], out_order: Sequence[int]) -> Program:
    return prog.replace(
        invars=tuple(prog.invars[i] for i in in_order),
        outvars=tuple(prog.outvars[i] for i in out_order),
    )


def join_consts(
    items: Sequence[tuple[Program, Sequence[Any]]],
) -> tuple[list[Program], list]:
    """Give every program (whose first inputs are its own consts) all the consts.

    Returns the programs, each taking ``(*all_consts, *rest)``, and the consts.
    """
    avals: list[Aval] = []
    consts: list[Any] = []
    for p, c in items:
        avals.extend(v.aval for v in p.invars[: len(c)])
        consts.extend(c)
    out, off = [], 0
    for p, c in items:
        k = len(c)
        inv = p.invars
        invars = _fresh(avals[:off]) + inv[:k] + _fresh(avals[off + k :]) + inv[k:]
        out.append(p.replace(invars=invars))
        off += k
    return out, consts


def trace_program(fn: Callable[..., Sequence[Any]], avals: Sequence[Aval], name: str) -> tuple:
    """Trace ``fn`` (flat in, flat out) into a closed program; returns (program, consts)."""
    with new_builder(name) as b:
        outs = fn(*[b.new_arg(a) for a in avals])
        prog = b.build(list(outs))
    return close(prog)


def _zeros(aval: Aval) -> Any:
    return rules.zeros_like_aval(aval.strip_weak())


def _jvp_instantiated(
    prog: Program, nonzero: Sequence[bool], inst: Sequence[bool]
) -> tuple[Program, tuple, list[bool]]:
    """JVP program of ``prog`` (inputs: primals, nonzero tangents), with the tangent
    outputs selected by ``inst`` materialised even when zero. Closed: returns
    (program taking ``(*consts, *primals, *tangents)``, consts, output tangent mask)."""
    jprog, out_nz = ad.jvp_program(prog, list(nonzero))
    n = len(prog.outvars)
    if any(i and not z for i, z in zip(inst, out_nz)):
        computed = out_nz

        def fn(*args: Any) -> list:
            outs = eval_program(jprog, *args)
            primal, touts = outs[:n], iter(outs[n:])
            ts = []
            for a, z, i in zip(prog.out_avals, computed, inst):
                if z:
                    ts.append(next(touts))
                elif i:
                    ts.append(_zeros(a))
            return primal + ts

        with new_builder("jvp") as b:
            jprog = b.build(fn(*[b.new_arg(a) for a in jprog.in_avals]))
        out_nz = [z or i for z, i in zip(computed, inst)]
    jprog, consts = close(jprog)
    return jprog, consts, out_nz


def _tangents_out(outs: list, n: int, out_nz: Sequence[bool], avals: Sequence[Aval]) -> tuple:
    primal, rest = outs[:n], iter(outs[n:])
    touts = [next(rest) if z else Zero(a.strip_weak()) for z, a in zip(out_nz, avals)]
    return primal, touts


def _fixpoint(step: Callable[[list[bool]], list[bool]], start: list[bool]) -> list[bool]:
    """Smallest mask ⊇ ``start`` closed under ``step`` (a monotone map)."""
    cur = list(start)
    while True:
        new = [a or b for a, b in zip(cur, step(cur))]
        if new == cur:
            return cur
        cur = new


def _split(xs: Sequence[Any], *sizes: int) -> list[list]:
    out, i = [], 0
    for s in sizes:
        out.append(list(xs[i : i + s]))
        i += s
    out.append(list(xs[i:]))
    return out
