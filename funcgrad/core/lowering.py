"""Lowering a whole :class:`Program` to one Python function over ``jax.lax``.

The function is what ``jax.jit`` compiles (:mod:`funcgrad.core.compile_cache`
owns the compiled executables): each equation calls its primitive's ``lower``
rule on jax values, so XLA sees the whole program. Like ``eval_program`` it
is an interpreter that reads rules off primitives and names none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from funcgrad.core import explicit_sharding, sharding_types
from funcgrad.core.ir import SHARDING_TYPES, Program, Var


def lower_program(prog: Program) -> Callable[..., list[Any]]:
    """``fn(*consts, *args) -> outs`` evaluating ``prog`` with the ``lower`` rules.

    The function holds the program's structure, not its ``consts``: they are
    arguments, so one lowering serves every program of the same structure.
    """
    binders = (*prog.constvars, *prog.invars)
    eqns = [
        (e.prim.lower, e.prim.multiple_results, e.inputs, e.outvars, e.params, e.prim)
        for e in prog.eqns
    ]
    outvars = prog.outvars
    # the abstract mesh each equation's typed values are over (JAX checks it is the
    # context's: a value typed inside ``use_abstract_mesh`` lowers inside it too)
    meshes = [None] * len(eqns)
    if SHARDING_TYPES[0]:
        meshes = [
            sharding_types.mesh_of([a.aval for a in (*e.inputs, *e.outvars) if type(a) is Var])
            for e in prog.eqns
        ]

    def fn(*vals: Any) -> list[Any]:
        env: dict[Var, Any] = dict(zip(binders, vals))
        # JAX's explicit mesh axes: elementwise operands' shardings made to agree
        explicit = explicit_sharding.any_explicit(vals)
        for (lower, multi, inputs, outs, params, prim), mesh in zip(eqns, meshes):
            if lower is None:
                raise NotImplementedError(f"no lowering rule for '{prim.name}'")
            ins = [env[a] if type(a) is Var else a.val for a in inputs]
            if explicit and len(ins) > 1 and prim.family == "elementwise":
                ins = explicit_sharding.unify(ins)
            if mesh is not None and mesh != jax.sharding.get_abstract_mesh():
                with jax.sharding.use_abstract_mesh(mesh):
                    out = lower(*ins, **params)
            else:
                out = lower(*ins, **params)
            if multi:
                env.update(zip(outs, out))
            else:
                env[outs[0]] = out
        return [env[a] if type(a) is Var else a.val for a in outvars]

    fn.__name__ = "funcgrad_program"
    return fn
