"""Lowering a whole :class:`Program` to one Python function over ``jax.lax``.

The function is what ``jax.jit`` compiles: each equation calls its
primitive's ``lower`` rule on jax values, so XLA sees the whole program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from funcgrad.core.interp import Tracer, eval_program, is_tracing, set_program_runner
from funcgrad.core.ir import Program, Var


def lower_program(prog: Program) -> Callable[..., list[Any]]:
    """``fn(*consts, *args) -> outs`` evaluating ``prog`` with the ``lower`` rules."""
    binders = (*prog.constvars, *prog.invars)
    eqns = [
        (e.prim.lower, e.prim.multiple_results, e.inputs, e.outvars, e.params, e.prim)
        for e in prog.eqns
    ]
    outvars = prog.outvars

    def fn(*vals: Any) -> list[Any]:
        env: dict[Var, Any] = dict(zip(binders, vals))
        for lower, multi, inputs, outs, params, prim in eqns:
            if lower is None:
                raise NotImplementedError(f"no lowering rule for '{prim.name}'")
            ins = [env[a] if type(a) is Var else a.val for a in inputs]
            out = lower(*ins, **params)
            if multi:
                env.update(zip(outs, out))
            else:
                env[outs[0]] = out
        return [env[a] if type(a) is Var else a.val for a in outvars]

    fn.__name__ = "funcgrad_program"
    return fn


# --------------------------------------------------------------------------- eager evaluation


class _CompileCache:
    """Compiled executables of eagerly evaluated programs, keyed by structure.

    A program is compiled the second time its structure is seen (the first
    evaluation runs op by op, so one-off programs never pay for XLA); from
    then on it is one dispatch. Bounded LRU.
    """

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.seen: dict[Any, int] = {}
        self.compiled: dict[Any, Callable[..., Any]] = {}

    def get(self, prog: Program) -> Callable[..., Any] | None:
        key = prog.key()
        fn = self.compiled.get(key)
        if fn is not None:
            self.compiled[key] = self.compiled.pop(key)  # LRU refresh
            return fn
        n = self.seen.get(key, 0) + 1
        self.seen[key] = n
        if len(self.seen) > 4 * self.size:
            self.seen.clear()
        if n < 2:
            return None
        fn = jax.jit(lower_program(prog))
        self.compiled[key] = fn
        if len(self.compiled) > self.size:
            self.compiled.pop(next(iter(self.compiled)))
        return fn


_cache = _CompileCache()


def run_program(prog: Program, *args: Any) -> list[Any]:
    """Evaluate ``prog``: under a trace, bind its equations (so it records);
    eagerly, dispatch a cached compiled executable once the program recurs."""
    if is_tracing():
        return eval_program(prog, *args)
    if not prog.eqns:  # outputs forwarded from inputs or literals: arrays, as JAX returns
        return [_as_jax(o) for o in eval_program(prog, *args)]
    if any(_is_tracer(c) for c in prog.consts):
        return eval_program(prog, *args)
    fn = _cache.get(prog)
    if fn is None:
        return eval_program(prog, *args)
    return list(fn(*prog.consts, *args))


def _as_jax(x: Any) -> Any:
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype == jax.dtypes.float0:
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        return jax.device_put(x)
    return x


def _is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)


# known-value slices of eager traces (core.interp) run through this module's cache
set_program_runner(run_program)
