"""A backward assembled into one compiled program: the engine's fast path.

The first time (``compile_cache.POLICY.compile_after - 1`` times) a graph structure
is seen its backward runs node by node; from then on funcgrad's reverse loop runs
once more under a builder, with each node's residuals and the root cotangents as
arguments, and the traced ``Program`` is compiled once and called with the
residuals of the nodes that run. ``is_grads_batched`` is ``batch_program`` of it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compat._core import hooks as _hooks
from compat._core.accumulate import flip
from compat._core.graph import check_node
from funcgrad import config
from funcgrad._compat_contract import (
    Aval,
    batch_program,
    compile_cache,
    executable,
    new_builder,
    simplify,
)


@dataclass
class Policy:
    """When a backward is traced into one compiled program instead of run node by node;
    each field is the option ``compat_backward_<field>`` of :mod:`funcgrad.config`."""

    assemble: str = "auto"
    max_nodes: int = 1000
    cache_size: int = 64


policy = Policy()


def _check_assemble(v: Any) -> str:
    if v not in ("auto", "always", "never"):
        raise ValueError(f"compat_backward_assemble must be 'auto', 'always' or 'never', got {v!r}")
    return v


config.bind(
    "compat_backward_assemble",
    policy,
    "assemble",
    "'auto': a backward's structure is traced into one compiled program on its "
    "funcgrad_eager_compile_after-th sighting; 'always'; 'never' (node by node).",
    _check_assemble,
)
config.bind(
    "compat_backward_max_nodes",
    policy,
    "max_nodes",
    "Backward graphs with more nodes run node by node: XLA's compile time grows faster "
    "than linearly (a 40-step LSTMCell loop, ~600 nodes, compiles in seconds).",
)
config.bind(
    "compat_backward_cache_size",
    policy,
    "cache_size",
    "Assembled backward programs kept (least recently used dropped first).",
)
_compiled: OrderedDict[Any, Any] = OrderedDict()
_seen: OrderedDict[Any, int] = OrderedDict()
#: the last assembled backward program (batched when ``is_grads_batched``), for inspection
last_backward_program: Any = None
#: counters, for tests and benchmarks
stats = {"compiled_runs": 0, "compiles": 0, "interpreted_runs": 0}


def clear_cache() -> None:
    """Forget every assembled backward program."""
    _compiled.clear()
    _seen.clear()


compile_cache.register("compat_backward", size=lambda: len(_compiled), clear=clear_cache)


def assembled(run: Any, roots: Sequence, grads: Sequence) -> bool:
    """Run the backward as one compiled program, tracing it on a structure's second
    sighting; ``False`` when the node-by-node loop should run instead."""
    global last_backward_program
    plan, batch = run.plan, run.batch
    if policy.assemble == "never" and batch is None:
        return False
    key = plan.key(roots, grads, batch)
    hit = _compiled.get(key)
    if hit is None:
        _seen[key] = count = _seen.get(key, 0) + 1
        while len(_seen) > 16 * policy.cache_size:
            _seen.popitem(last=False)
        after = 1 if policy.assemble == "always" else compile_cache.POLICY.compile_after
        if batch is None and count < after:
            return False
    nodes = plan.executed()
    for n in nodes:
        check_node(n)
    if hit is None:
        run.index = {id(n): i for i, n in enumerate(plan.topo)}
        with new_builder("compat.backward") as b:
            run.res_of = {
                id(n): [b.new_arg(v.aval) for v in n._entry.bwd.invars[: n._entry.num_res]]
                for n in nodes
            }
            cts = [
                None
                if g is None
                else b.new_arg(Aval(g.shape[batch is not None :], np.dtype(g.dtype)))
                for g in grads
            ]
            run.loop(roots, cts)
            spec = [(kind, target, g is not None) for kind, target, g in run.outs]
            prog = simplify(b.build([g for _, _, g in run.outs if g is not None]))
        if batch is not None:
            n_res = sum(len(r) for r in run.res_of.values())
            prog, _ = batch_program(
                prog,
                [None] * n_res + [0] * sum(g is not None for g in grads),
                batch,
                out_dims=[0] * len(prog.outvars),
            )
        hit = _compiled[key] = (prog, executable(prog), spec)
        stats["compiles"] += 1
        while len(_compiled) > policy.cache_size:
            _compiled.popitem(last=False)
    else:
        _compiled.move_to_end(key)
    prog, fn, spec = hit
    last_backward_program = prog
    stats["compiled_runs"] += 1
    values = iter(fn(*[r for n in nodes for r in n._res], *[g for g in grads if g is not None]))
    run.res_of = None
    for kind, target, present in spec:
        g = next(values) if present else None
        if kind == "cap":
            run.results[target] = flip(g)
            continue
        caps, acc, pos = target
        if g is not None or _hooks.has_hooks(plan.topo[pos]):
            _hooks.leaf(plan.topo[pos], g, False, run.results, caps, acc)
    if not run.keep:
        for n in nodes:
            n._release()
    return True
