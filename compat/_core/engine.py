"""The backward engine: plan the cut of the recorded graph, hand it to funcgrad's reverse loop.

Recording leaves a graph of :class:`~compat._core.graph.Node` objects, each a call of
an op's funcgrad program with its :class:`funcgrad._compat_contract.OpVJP` and residuals.
``run_backward``

1. **plans** (:mod:`compat._core.plan`): the nodes that reach the requested
   inputs (``inputs=`` / ``GradientEdge``), consumers first;
2. **runs funcgrad's loop** (:func:`funcgrad.ad.reverse_accumulate`) over them,
   with callbacks for tensor hooks, ``retain_grad``, node pre/post hooks and
   captures. The same loop runs

   * *eagerly*, node by node through each backward's compiled executable (the
     first time a structure is seen, when hooks touch intermediate nodes, and
     with ``create_graph=True``, where each node's backward is recorded as an
     op, :meth:`~funcgrad._compat_contract.OpVJP.recompute`, so higher derivatives are
     funcgrad's VJP of it); or
   * *traced* under a builder into one backward ``Program`` — from the second
     sighting of a graph structure on (:mod:`compat._core.assemble`), compiled once through
     funcgrad's compile cache; ``is_grads_batched`` is ``batch_program`` of it;

3. **accumulates** into leaves' ``.grad`` as PyTorch's ``AccumulateGrad`` does and
   frees the residuals unless ``keep_graph``.
"""

from __future__ import annotations

import gc
import itertools
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from compat._core import anomaly as _anomaly
from compat._core import assemble as _assemble
from compat._core import grad_mode as _gm
from compat._core import graph as _graph
from compat._core import hooks as _hooks
from compat._core.accumulate import CYCLE_WARNING, add, as_tensor, flip, zeros
from compat._core.graph import SAVED_HOOKS, AccumulateGrad, Node, check_node, edge_key
from compat._core.ops._common import WARN_ALWAYS
from compat._core.plan import Plan
from compat._core.tensor import record
from funcgrad._compat_contract import (
    lazy,
    lazy_state,
    reverse_accumulate,
    x64,
)

_cycle_warned = [False]
#: per running backward (innermost last): callbacks to run when it finishes
CALLBACKS: list[list[Callable[[], Any]]] = []


def queue_callback(callback: Callable[[], Any]) -> None:
    """Run ``callback()`` when the backward now running finishes (PyTorch's
    ``Variable._execution_engine.queue_callback``)."""
    if not CALLBACKS:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    CALLBACKS[-1].append(callback)


_task_ids = itertools.count()
#: the assembled-backward cache, its policy and counters (re-exported for users and tests)
policy, stats, clear_cache = _assemble.policy, _assemble.stats, _assemble.clear_cache


class _Run:
    """One backward call: the callbacks funcgrad's loop runs with."""

    def __init__(self, plan: Plan, n_in: int, keep: bool, create: bool, batch: Any) -> None:
        self.plan, self.keep, self.create, self.batch = plan, keep, create, batch
        self.results: list = [None] * n_in
        self.res_of: dict[int, list] | None = None  # traced: residual arguments per node
        self.outs: list = []  # traced: (kind, target, value)
        self.index: dict[int, int] = {}  # traced: position of each node in the plan

    @staticmethod
    def keys(n: Node) -> tuple:
        """The cotangent keys of ``n``'s outputs and of its input edges: edge keys
        (:func:`~compat._core.graph.edge_key`), so a node's edges are its inputs' keys."""
        entry = n._entry
        if entry is None:
            if isinstance(n, AccumulateGrad):
                return (n,), ()
            # an autograd.Function node
            return [edge_key(n, i) for i in range(n._n_out)], n._edges
        edges = n._edges
        if None in edges:
            edges = [e for e in edges if e is not None]
        n_out = entry.op.n_out
        if n_out == 1:
            return (n,), edges
        return [edge_key(n, i) for i in range(n_out)], edges

    def before(self, n: Node, cts: list) -> list:
        """A node's complete output cotangents: its outputs' tensor hooks and
        ``retain_grad``, then the gradients ``autograd.grad`` captures there."""
        if isinstance(n, AccumulateGrad):
            return cts
        caps = self.plan.captures.get(id(n))
        runs = self.plan.runs
        # PyTorch captures before the hooks when the node runs too, after them otherwise
        late = caps and runs is not None and id(n) not in runs
        if caps and not late:
            self._capture(caps, cts)
        if n._tensor_hooks or n._retain:
            cts = _hooks.tensor_pre_hooks(n, cts, self.create)
        if late:
            self._capture(caps, cts)
        return cts

    def _capture(self, caps: list, cts: list) -> None:
        for nr, idx in caps:
            if cts[nr] is None:
                continue
            if self.res_of is not None:  # traced: flipped when the program has run
                self.outs.append(("cap", idx, cts[nr]))
            else:
                self.results[idx] = flip(cts[nr])

    def transpose(self, n: Node, cts: list) -> Any:
        plan = self.plan
        if isinstance(n, AccumulateGrad):
            caps = [i for _, i in plan.captures.get(id(n), ())]
            if self.res_of is not None:  # traced: hooks and accumulation run afterwards
                self.outs.append(("leaf", (caps, id(n) in plan.acc, self.index[id(n)]), cts[0]))
            else:
                _hooks.leaf(n, cts[0], self.create, self.results, caps, id(n) in plan.acc)
            return None
        if plan.runs is not None and id(n) not in plan.runs:
            if n._pre_hooks and id(n) in plan.captures and _hooks.RUNS.stack[-1][2]:
                # ``backward(inputs=)`` runs a captured node's pre-hooks, not the node
                _hooks.node_pre_hooks(n, cts, self.create)
            return None
        if n._pre_hooks:
            cts = _hooks.node_pre_hooks(n, cts, self.create)
        if cts[0] is None and all(c is None for c in cts):  # none arrived: hooks saw None
            return _hooks.no_gradient(n, cts, self.create)
        unpacked = _hooks.unpack_saved(n) if n._packed else None
        if n._freed or n._saved:
            check_node(n)
        if n._entry is None:  # an autograd.Function node: its backward is Python code
            in_cts = n._run_backward(cts, self.create, self.batch)
        else:
            in_cts = self._op_backward(n, cts, unpacked)
            if len(cts) > 1 and any(c is None for c in cts):
                in_cts = _reached(n, cts, in_cts)
        if n._post_hooks:
            in_cts = _hooks.node_post_hooks(n, in_cts, cts, self.create)
        if not self.keep and self.res_of is None:
            n._release()
        return in_cts

    def transpose_plain(self, n: Node, cts: list) -> Any:
        """:meth:`transpose` for a backward without hooks, captures, ``create_graph``,
        batching or Python nodes (the engine's common case): a node of one output that
        got its cotangent runs its backward's host-tier executable directly; anything
        else (a leaf, a node without a cotangent, hooks added meanwhile, lazy mode) takes
        :meth:`transpose`."""
        entry = n._entry
        if (
            entry is None
            or len(cts) != 1
            or cts[0] is None
            or n._pre_hooks
            or n._post_hooks
            or n._packed
            or lazy_state.on
            or not entry.ct_outs
        ):
            return self.transpose(n, cts)
        if n._freed or n._saved:
            check_node(n)
        f = entry._bwd_raw
        try:
            in_cts = f(*n._res, cts[0])
        except (TypeError, ValueError):  # (``None``: not built yet; residuals recorded in
            in_cts = entry.backward(n._res, cts)  # lazy mode: the executable computes them)
        if not self.keep:
            n._release()
        return in_cts

    def _op_backward(self, n: Node, cts: list, unpacked: dict | None = None) -> Any:
        """The input cotangents of an op's node: its compiled backward, recorded as an op
        under ``create_graph`` (from the inputs, those a saved-tensor hook unpacked
        replaced), or inlined into the traced program."""
        entry, batch = n._entry, self.batch if self.res_of is None else None  # traced: unbatched
        if len(cts) != 1 or cts[0] is None or not entry.ct_outs:  # (else: cts as they are)
            avals = entry.op.out_avals
            cts = [cts[i] if cts[i] is not None else zeros(avals[i], batch) for i in entry.ct_outs]
        if self.create:
            xs, edges = n._inputs, list(n._edges)
            if xs is None:  # freed, but the node saved no tensors: its inputs are unused
                xs = [zeros(a.strip_weak(), None) for a in entry.op.in_avals]
                edges = [None] * len(xs)
            if unpacked:
                xs = [unpacked.get(i, x) for i, x in enumerate(xs)]
            cts = [as_tensor(c) for c in cts]
            edges += [c._edge_key() if c._requires_grad else None for c in cts]
            args = [*xs, *(c._st.array for c in cts)]
            in_cts = record(op := entry.recompute(batch), args, edges)
            if SAVED_HOOKS and in_cts:
                _pack_recorded(op, args, in_cts)
        elif self.res_of is None:
            f = entry._bwd_exe  # the compiled backward, once it exists (the common case)
            in_cts = f(*n._res, *cts) if f and batch is None else entry.backward(n._res, cts, batch)
        else:
            in_cts = entry.backward(self.res_of[id(n)], cts)
        return in_cts

    def loop(self, roots: Sequence, grads: Sequence) -> None:
        plan = self.plan
        hooked = plan.hooks or plan.captures
        if _anomaly.STATE[0]:
            transpose = _anomaly.checked(self.transpose)
        elif hooked or plan.python or plan.runs is not None or self.create:
            transpose = self.transpose
        elif self.batch is None and self.res_of is None:
            transpose = self.transpose_plain
        else:
            transpose = self.transpose
        reverse_accumulate(
            plan.topo,
            [(edge_key(*r), g) for r, g in zip(roots, grads)],
            self.keys,
            transpose,
            add=add,
            before=self.before if hooked else None,
            run_empty=_hooks.has_hooks,
        )


def _reached(n: Node, cts: list, in_cts: Any) -> list:
    """``None`` for the inputs of a node of several outputs that no output with a gradient
    depends on (their gradient is structurally zero: PyTorch computes none)."""
    entry = n._entry
    deps = entry.op.out_deps()
    live = set().union(*(deps[j] for j, c in enumerate(cts) if c is not None))
    return [g if i in live else None for g, i in zip(in_cts, entry.in_idx)]


#: backward calls nested in one thread (a custom ``Function``'s backward calling backward)
#: before the next nested one runs in a new thread: PyTorch's escape from deep reentrant
#: backward, so the depth is not bounded by one thread's stack and recursion limit
REENTRANT_PER_THREAD = 16


def _in_new_thread(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a new thread with this thread's grad mode, waited for;
    its exception is raised here."""
    state = (_gm._state.enabled, _gm._state.inference)
    out: list = [None, None]

    def run() -> None:
        _gm._set_both(*state)
        try:
            out[0] = fn(*args, **kwargs)
        except BaseException as e:  # (re-raised in the calling thread)
            out[1] = e

    t = threading.Thread(target=run, name="compat-reentrant-backward")
    t.start()
    t.join()
    if out[1] is not None:
        raise out[1]
    return out[0]


def _pack_recorded(op: Any, args: list, outs: list) -> None:
    """Under ``saved_tensors_hooks``, a ``create_graph`` backward's recorded node packs what
    it saves, as any recorded op (its inputs are arrays: they are packed as tensors)."""
    node = next((t._gfn for t in outs if t._gfn is not None), None)
    if node is None or node._entry.op is not op:
        return
    entry = node._entry
    ins = [as_tensor(args[i]) for i in entry.saved_in]
    _graph.pack_saved(node, ins + [outs[j] for j in entry.saved_out])


@x64
def run_backward(
    roots: Sequence[tuple[Node, int]],
    root_grads: Sequence[Any],
    inputs: Sequence[tuple[Node, int]] | None,
    *,
    keep_graph: bool,
    create_graph: bool,
    accumulate: bool,
    batch_size: int | None = None,
) -> list:
    """Run backward from ``roots`` (edges) seeded with ``root_grads`` (arrays, or Tensors
    when ``create_graph``). Returns the gradient captured at each of ``inputs`` (``None``
    where none arrived); with ``accumulate`` leaves' ``.grad`` are updated instead."""
    if len(_hooks.RUNS.stack) >= REENTRANT_PER_THREAD:
        return _in_new_thread(
            run_backward,
            roots,
            root_grads,
            inputs,
            keep_graph=keep_graph,
            create_graph=create_graph,
            accumulate=accumulate,
            batch_size=batch_size,
        )
    if create_graph and accumulate and (not _cycle_warned[0] or WARN_ALWAYS[0]):
        _cycle_warned[0] = True
        warnings.warn(CYCLE_WARNING, UserWarning, stacklevel=4)
    # the plan and the walk allocate many small containers while the whole graph is alive
    # (the toposort's stack holds a tuple and an iterator per node of a chain): pausing the
    # cyclic GC avoids repeated traversals of it (reference counting still frees)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        plan = Plan(roots, inputs, accumulate)
    except BaseException:
        if gc_was_enabled:
            gc.enable()
        raise
    run = _Run(plan, len(inputs) if inputs is not None else 0, keep_graph, create_graph, batch_size)
    prev = _gm.is_grad_enabled()
    _gm._set(create_graph)
    _hooks.RUNS.stack.append((next(_task_ids), plan, accumulate))
    # saved-tensor hooks entered or left inside the backward (by an ``unpack`` hook) end
    # with it, as PyTorch restores its thread-local state after the graph task
    saved_hooks = SAVED_HOOKS[:]
    pushed = False
    try:
        small = len(plan.topo) <= _assemble.policy.max_nodes
        assemble = not (create_graph or plan.hooks or plan.python or _anomaly.STATE[0]) and small
        CALLBACKS.append([])
        pushed = True
        if not (assemble and _assemble.assembled(run, roots, root_grads)):
            _assemble.stats["interpreted_runs"] += 1
            run.loop(roots, root_grads)
        done = CALLBACKS[-1]
        for cb in done:  # (a callback may queue more: they run too)
            cb()
        if lazy.is_on():
            lazy.soft_boundary()  # a backward ends a micro-step (gradient accumulation)
        return run.results
    finally:
        if gc_was_enabled:
            gc.enable()
        _gm._set(prev)
        if saved_hooks != SAVED_HOOKS:
            SAVED_HOOKS[:] = saved_hooks
        _hooks.RUNS.stack.pop()
        if pushed:
            CALLBACKS.pop()
