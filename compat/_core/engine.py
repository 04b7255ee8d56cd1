"""The backward engine: runs the recorded graph's VJP between roots and inputs.

Every node carries its op's :class:`~compat._core.op.VJPEntry` (funcgrad's VJP
of the op's program) and the residuals its forward saved. ``run_backward``

1. walks the graph from the roots without recursion (graphs of 100,000 nodes),
   ordering nodes so each runs after all its consumers, and marks which nodes
   must run to reach the requested inputs;
2. then either

   * **assembles one backward program** — each node's ``bwd`` program inlined in
     reverse topological order, cotangents summed with ``add`` — keyed by the
     graph's *structure* (op entries, edges, root avals, targets). The key's
     compiled XLA executable is cached (LRU, :data:`CACHE_SIZE` entries) and
     built when a structure is seen the second time (``COMPAT_COMPILE_BACKWARD=
     always`` compiles at once, ``never`` disables it). ``is_grads_batched`` is
     ``funcgrad.batching.batch_program`` of that program over the cotangent
     inputs (one vectorised program; :data:`last_backward_program` shows it);
   * or **interprets** node by node, calling each node's compiled ``bwd`` — used
     the first time a structure is seen, for graphs over
     :data:`MAX_COMPILED_NODES` nodes, when hooks or ``retain_grad`` touch
     intermediate nodes, and with ``create_graph=True``, where each node's
     backward is itself applied as a recorded, differentiable op so gradients
     get a ``grad_fn`` (higher-order derivatives through funcgrad's VJP again).

3. accumulates into leaves as PyTorch does and frees residuals unless
   ``keep_graph``.
"""

from __future__ import annotations

import gc
import os
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from compat._core import grad_mode as _gm
from compat._core.graph import AccumulateGrad, Node, short_name
from compat._core.op import compile_program, get_op
from compat._core.tensor import Tensor, run_recorded
from funcgrad import passes
from funcgrad.batching import batch_program
from funcgrad.core.interp import eval_program, new_builder

#: compiled assembled backward programs kept (least recently used dropped first)
CACHE_SIZE = 64
#: graphs with more nodes than this are always interpreted node by node
MAX_COMPILED_NODES = 5000

_compiled: OrderedDict[Any, Any] = OrderedDict()
_seen: OrderedDict[Any, int] = OrderedDict()
#: the last assembled backward program (batched when ``is_grads_batched``), for inspection
last_backward_program: Any = None
#: counters, for tests and benchmarks
stats = {"compiled_runs": 0, "compiles": 0, "interpreted_runs": 0, "assembled_eager_runs": 0}

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}
_cycle_warned = [False]


def clear_cache() -> None:
    """Forget every compiled backward program."""
    _compiled.clear()
    _seen.clear()


def _policy() -> str:
    return os.environ.get("COMPAT_COMPILE_BACKWARD", "auto").lower()


# --------------------------------------------------------------------------- small array ops


def _add_fn(a: Any, b: Any) -> Any:
    return a + b


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, Tensor):
        from compat._core.tensor import apply

        return apply(_add_fn, "AddBackward0", (a, b))
    return get_op(_add_fn, "add", (), (a, b)).run(a, b)[0]


def _cast_fn(a: Any, *, dtype: Any) -> Any:
    from funcgrad import numpy as fnp

    return fnp.asarray(a, dtype)


def _cast(a: Any, dtype: np.dtype) -> Any:
    if a.dtype == dtype:
        return a
    return get_op(_cast_fn, "cast", (("dtype", dtype),), (a,)).run(a)[0]


def _zeros(aval: Any, batch: int | None) -> np.ndarray:
    shape = aval.shape if batch is None else (batch, *aval.shape)
    return np.zeros(shape, aval.dtype)


# --------------------------------------------------------------------------- graph walk


def _toposort(roots: Sequence[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, each before every node it feeds gradient into."""
    post: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack: list[list] = [[root, 0]]
        while stack:
            top = stack[-1]
            node, i = top
            edges = node._edges
            if i < len(edges):
                top[1] = i + 1
                e = edges[i]
                if e is not None and id(e[0]) not in seen:
                    seen.add(id(e[0]))
                    stack.append([e[0], 0])
            else:
                stack.pop()
                post.append(node)
    post.reverse()
    return post


class _Plan:
    """What a backward call runs: topological order, which nodes execute, captures."""

    def __init__(
        self,
        roots: Sequence[tuple[Node, int]],
        inputs: Sequence[tuple[Node, int]] | None,
        accumulate: bool,
    ) -> None:
        self.topo = _toposort([r[0] for r in roots])
        self.captures: dict[int, list[tuple[int, int]]] = {}
        self.acc_targets: set[int] = set()
        if inputs is None:
            self.execute = None  # everything
            self.acc_targets = {id(n) for n in self.topo if isinstance(n, AccumulateGrad)}
            return
        for idx, (node, nr) in enumerate(inputs):
            if accumulate and isinstance(node, AccumulateGrad):
                self.acc_targets.add(id(node))
            else:
                self.captures.setdefault(id(node), []).append((nr, idx))
        reach: dict[int, bool] = {}
        execute: dict[int, bool] = {}
        for n in reversed(self.topo):
            need = False
            for e in n._edges:
                if e is not None and reach.get(id(e[0])):
                    need = True
                    break
            execute[id(n)] = need
            reach[id(n)] = need or id(n) in self.captures or id(n) in self.acc_targets
        self.execute = execute
        self.reach = reach

    def runs(self, n: Node) -> bool:
        return self.execute is None or self.execute[id(n)]

    def useful(self, n: Node) -> bool:
        return self.execute is None or self.reach[id(n)]


# --------------------------------------------------------------------------- checks


def _describe(shape: tuple, dtype: np.dtype) -> str:
    return f"[torch.{_TYPE_NAMES.get(dtype.name, dtype.name)} [{', '.join(map(str, shape))}]]"


def _check_node(n: Node) -> None:
    """PyTorch's errors for freed saved tensors and saved tensors modified in place."""
    entry = n._entry
    if n._freed and entry.tensor_res:
        raise RuntimeError(_FREED)
    if n._saved:
        for vc, ver, shape, dtype, fn, nr in n._saved:
            if vc.v != ver:
                which = f", which is output {nr} of {short_name(fn)}," if fn is not None else ""
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: {_describe(shape, dtype)}{which} is at version "
                    f"{vc.v}; expected version {ver} instead. Hint: enable anomaly detection to "
                    "find the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True, check_nan=False)."
                )


# --------------------------------------------------------------------------- accumulation


def _as_tensor(g: Any) -> Tensor:
    return g if isinstance(g, Tensor) else Tensor._wrap_result(g)


def _as_value(t: Any, create_graph: bool) -> Any:
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"hook returned a {type(t).__name__}, expected a Tensor or None")
    return t if create_graph else t._st.array


def _run_tensor_hooks(hooks: dict, g: Any, create_graph: bool) -> Any:
    for h in list(hooks.values()):
        r = h(_as_tensor(g))
        if r is not None:
            g = _as_value(r, create_graph)
    return g


def _retain(t: Tensor, g: Any, create_graph: bool) -> None:
    new = _as_tensor(g)
    if not create_graph:
        new = Tensor._wrap_result(new._st.array)
    t._grad = (
        new
        if t._grad is None
        else _as_tensor(_add(t._grad if create_graph else t._grad._st.array, g))
    )


def _accumulate(var: Tensor, g: Any, create_graph: bool) -> None:
    """PyTorch's AccumulateGrad: the first gradient is stored; later ones are added in
    place (out of place when ``create_graph``)."""
    if var._hooks:
        g = _run_tensor_hooks(var._hooks, g, create_graph)
    if g is None:
        return
    dtype = var._st.array.dtype
    if create_graph:
        if var._grad is None:
            var._grad = g
        else:
            var._grad = _add(var._grad, g)
    else:
        g = _cast(g, dtype)
        if var._grad is None:
            var._grad = Tensor._wrap_result(g)
        else:
            old = var._grad
            old._set_data_inplace(_add(old._st.array, _cast(g, old._st.array.dtype)))
    if var._post_acc_hooks:
        for h in list(var._post_acc_hooks.values()):
            h(var)


# --------------------------------------------------------------------------- the engine


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
    if create_graph and accumulate and not _cycle_warned[0]:
        _cycle_warned[0] = True
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.",
            UserWarning,
            stacklevel=4,
        )
    plan = _Plan(roots, inputs, accumulate)
    n_in = len(inputs) if inputs is not None else 0
    prev = _gm.is_grad_enabled()
    _gm._set(create_graph)
    # the walk allocates many small containers while the whole graph is alive: pausing the
    # cyclic GC avoids repeated full traversals of it (reference counting still frees)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if not create_graph and len(plan.topo) <= MAX_COMPILED_NODES:
            out = _try_assembled(plan, roots, root_grads, n_in, keep_graph, batch_size)
            if out is not None:
                return out
        return _interpret(plan, roots, root_grads, n_in, keep_graph, create_graph, batch_size)
    finally:
        if gc_was_enabled:
            gc.enable()
        _gm._set(prev)


def _interpret(
    plan: _Plan,
    roots: Sequence[tuple[Node, int]],
    root_grads: Sequence[Any],
    n_in: int,
    keep_graph: bool,
    create_graph: bool,
    batch: int | None,
) -> list:
    stats["interpreted_runs"] += 1
    results: list = [None] * n_in
    buffers: dict[int, list] = {}
    for (node, nr), g in zip(roots, root_grads):
        if g is None:
            continue
        buf = buffers.get(id(node))
        if buf is None:
            buf = buffers[id(node)] = [None] * _n_outputs(node)
        buf[nr] = _add(buf[nr], g)
    captures = plan.captures
    for n in plan.topo:
        buf = buffers.pop(id(n), None)
        if buf is None or not plan.useful(n):
            continue
        if isinstance(n, AccumulateGrad):
            g = buf[0]
            caps = captures.get(id(n))
            if caps:
                var = n.variable
                if var._hooks:
                    g = _run_tensor_hooks(var._hooks, g, create_graph)
                for _, idx in caps:
                    results[idx] = g
            if id(n) in plan.acc_targets and g is not None:
                _accumulate(n.variable, g, create_graph)
            continue
        if n._tensor_hooks:
            for nr, hooks in n._tensor_hooks.items():
                if hooks and buf[nr] is not None:
                    buf[nr] = _run_tensor_hooks(hooks, buf[nr], create_graph)
        if n._retain:
            for nr, ref in list(n._retain.items()):
                t = ref()
                if t is not None and buf[nr] is not None:
                    _retain(t, buf[nr], create_graph)
        caps = captures.get(id(n))
        if caps:
            for nr, idx in caps:
                results[idx] = buf[nr]
        if not plan.runs(n):
            continue
        if n._pre_hooks:
            for h in list(n._pre_hooks.values()):
                r = h(tuple(None if g is None else _as_tensor(g) for g in buf))
                if r is not None:
                    buf = [_as_value(x, create_graph) for x in r]
        _check_node(n)
        entry = n._entry
        out_avals = entry.op.out_avals
        if create_graph:
            cts = [
                buf[i] if buf[i] is not None else Tensor._wrap_result(_zeros(out_avals[i], batch))
                for i in entry.ct_outs
            ]
            bop = entry.backward_op(batch)
            datas = n._inputs
            edges = list(n._edges)
            if datas is None:  # freed, but the node saved no tensors: inputs are unused
                datas = [_zeros(a.strip_weak(), None) for a in entry.op.in_avals]
                edges = [None] * len(edges)
            in_edges = [
                e if m else None
                for e, m in zip(edges, [i in entry.in_idx for i in range(len(edges))])
            ]
            in_edges += [c._edge() if c._requires_grad else None for c in cts]
            in_cts = run_recorded(bop, [*datas, *(c._st.array for c in cts)], in_edges)
        else:
            cts = [
                buf[i] if buf[i] is not None else _zeros(out_avals[i], batch) for i in entry.ct_outs
            ]
            if batch is None:
                in_cts = entry.backward(n._res, cts)
            else:
                in_cts = entry.backward_batched(batch, n._res, cts)
        if n._post_hooks:
            grads_in = tuple(_as_tensor(g) for g in in_cts)
            grads_out = tuple(None if g is None else _as_tensor(g) for g in buf)
            for h in list(n._post_hooks.values()):
                r = h(grads_in, grads_out)
                if r is not None:
                    grads_in = tuple(r)
            in_cts = [_as_value(g, create_graph) for g in grads_in]
        edges = n._edges
        for k, i in enumerate(entry.in_idx):
            e = edges[i]
            g = in_cts[k]
            if e is None or g is None:
                continue
            child = e[0]
            cb = buffers.get(id(child))
            if cb is None:
                cb = buffers[id(child)] = [None] * _n_outputs(child)
            cb[e[1]] = _add(cb[e[1]], g)
        if not keep_graph:
            n._release()
    return results


def _n_outputs(n: Node) -> int:
    return 1 if isinstance(n, AccumulateGrad) else n._entry.op.n_out


# --------------------------------------------------------------------------- assembled program


def _structure_key(
    plan: _Plan, roots: Sequence[tuple[Node, int]], root_grads: Sequence[Any], batch: int | None
) -> tuple | None:
    """A hashable key equal for graphs of the same structure; ``None`` if the graph has
    hooks on intermediate nodes (it must be interpreted)."""
    index: dict[int, int] = {}
    items: list = []
    for i, n in enumerate(plan.topo):
        index[id(n)] = i
    for n in plan.topo:
        if isinstance(n, AccumulateGrad):
            items.append(("acc", id(n) in plan.acc_targets))
            continue
        if not plan.runs(n) and not plan.useful(n):
            items.append(None)
            continue
        if n._has_hooks():
            return None
        items.append(
            (
                n._entry.id,
                plan.runs(n),
                tuple(None if e is None else (index.get(id(e[0]), -1), e[1]) for e in n._edges),
            )
        )
    root_key = tuple(
        (index[id(node)], nr, None if g is None else (g.shape, g.dtype))
        for (node, nr), g in zip(roots, root_grads)
    )
    cap_key = tuple(sorted((index[k], tuple(v)) for k, v in plan.captures.items() if k in index))
    return (tuple(items), root_key, cap_key, batch)


def _build_program(
    plan: _Plan,
    roots: Sequence[tuple[Node, int]],
    root_grads: Sequence[Any],
    batch: int | None,
) -> tuple[Any, list, list, list]:
    """The backward of the whole graph as one funcgrad Program.

    Invars: residuals of every executed node (in topological order), then the root
    cotangents. Outvars: the gradient for each capture and each accumulated leaf
    (``targets`` says which; ``None`` entries got no gradient).
    """
    from funcgrad import numpy as fnp

    exec_nodes = [n for n in plan.topo if not isinstance(n, AccumulateGrad) and plan.runs(n)]
    targets: list[tuple[str, Any]] = []
    with new_builder("compat.backward") as b:
        res_args = {
            id(n): [b.new_arg(v.aval) for v in n._entry.bwd.invars[: n._entry.num_res]]
            for n in exec_nodes
        }
        ct_args = [None if g is None else b.new_arg(_aval_of(g, batch)) for g in root_grads]
        buffers: dict[int, list] = {}
        for (node, nr), g in zip(roots, ct_args):
            if g is None:
                continue
            buf = buffers.setdefault(id(node), [None] * _n_outputs(node))
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        outs: list = []
        for n in plan.topo:
            buf = buffers.pop(id(n), None)
            if buf is None or not plan.useful(n):
                continue
            if isinstance(n, AccumulateGrad):
                for _, idx in plan.captures.get(id(n), ()):
                    targets.append(("cap", idx))
                    outs.append(buf[0])
                if id(n) in plan.acc_targets:
                    targets.append(("acc", n))
                    outs.append(buf[0])
                continue
            for nr, idx in plan.captures.get(id(n), ()):
                targets.append(("cap", idx))
                outs.append(buf[nr])
            if not plan.runs(n):
                continue
            entry = n._entry
            avals = entry.op.out_avals
            cts = [
                buf[i] if buf[i] is not None else fnp.zeros(avals[i].shape, avals[i].dtype)
                for i in entry.ct_outs
            ]
            in_cts = eval_program(entry.bwd, *res_args[id(n)], *cts)
            for k, i in enumerate(entry.in_idx):
                e = n._edges[i]
                if e is None:
                    continue
                cb = buffers.setdefault(id(e[0]), [None] * _n_outputs(e[0]))
                cb[e[1]] = in_cts[k] if cb[e[1]] is None else cb[e[1]] + in_cts[k]
        present = [o is not None for o in outs]
        prog = b.build([o for o in outs if o is not None])
    prog = passes.simplify(prog)
    return prog, targets, present, exec_nodes


def _aval_of(x: Any, batch: int | None = None) -> Any:
    from funcgrad.core.ir import Aval

    shape = tuple(x.shape) if batch is None else tuple(x.shape[1:])
    return Aval(shape, np.dtype(x.dtype))


class _Compiled:
    __slots__ = ("fn", "present", "prog", "targets_spec")

    def __init__(self, prog: Any, fn: Any, targets: list, present: list) -> None:
        self.prog = prog
        self.fn = fn
        self.present = present
        # targets are re-bound to this call's nodes by position in the plan
        self.targets_spec = targets


def _try_assembled(
    plan: _Plan,
    roots: Sequence[tuple[Node, int]],
    root_grads: Sequence[Any],
    n_in: int,
    keep_graph: bool,
    batch: int | None,
) -> list | None:
    global last_backward_program
    policy = _policy()
    if policy == "never" and batch is None:
        return None
    key = _structure_key(plan, roots, root_grads, batch)
    if key is None:
        return None
    compiled = _compiled.get(key)
    if compiled is not None:
        _compiled.move_to_end(key)
    else:
        count = _seen.get(key, 0) + 1
        _seen[key] = count
        _seen.move_to_end(key)
        while len(_seen) > 16 * CACHE_SIZE:
            _seen.popitem(last=False)
        if batch is None and count < 2 and policy != "always":
            return None
    exec_nodes = [n for n in plan.topo if not isinstance(n, AccumulateGrad) and plan.runs(n)]
    for n in exec_nodes:
        _check_node(n)
    flat_res = [r for n in exec_nodes for r in n._res]
    cts = [g for g in root_grads if g is not None]
    # targets of this call (same order as when the program was built)
    targets = _targets(plan, roots, root_grads)
    if compiled is None:
        prog, _, present, _ = _build_program(plan, roots, root_grads, batch)
        if batch is not None:
            n_res = len(flat_res)
            prog, _ = batch_program(
                prog, [None] * n_res + [0] * len(cts), batch, out_dims=[0] * len(prog.outvars)
            )
        last_backward_program = prog
        if batch is None or count >= 2 or policy == "always":
            compiled = _Compiled(prog, compile_program(prog), targets, present)
            stats["compiles"] += 1
            _compiled[key] = compiled
            while len(_compiled) > CACHE_SIZE:
                _compiled.popitem(last=False)
        else:
            stats["assembled_eager_runs"] += 1
            values = eval_program(prog, *flat_res, *cts)
            return _finish(plan, targets, present, values, n_in, keep_graph, exec_nodes)
    else:
        last_backward_program = compiled.prog
    stats["compiled_runs"] += 1
    values = compiled.fn(*flat_res, *cts)
    return _finish(plan, targets, compiled.present, values, n_in, keep_graph, exec_nodes)


def _targets(
    plan: _Plan, roots: Sequence[tuple[Node, int]], root_grads: Sequence[Any]
) -> list[tuple[str, Any]]:
    """The capture/accumulate targets in the order :func:`_build_program` emits them."""
    reached: set[int] = set()
    for (node, _), g in zip(roots, root_grads):
        if g is not None:
            reached.add(id(node))
    targets: list[tuple[str, Any]] = []
    for n in plan.topo:
        if id(n) not in reached or not plan.useful(n):
            continue
        if isinstance(n, AccumulateGrad):
            for _, idx in plan.captures.get(id(n), ()):
                targets.append(("cap", idx))
            if id(n) in plan.acc_targets:
                targets.append(("acc", n))
            continue
        for _, idx in plan.captures.get(id(n), ()):
            targets.append(("cap", idx))
        if not plan.runs(n):
            continue
        for i in n._entry.in_idx:
            e = n._edges[i]
            if e is not None:
                reached.add(id(e[0]))
    return targets


def _finish(
    plan: _Plan,
    targets: list,
    present: list,
    values: list,
    n_in: int,
    keep_graph: bool,
    exec_nodes: list,
) -> list:
    results: list = [None] * n_in
    it = iter(values)
    for (kind, what), p in zip(targets, present):
        g = next(it) if p else None
        if kind == "cap":
            if g is not None:
                var = _capture_var(plan, what)
                if var is not None and var._hooks:
                    g = _run_tensor_hooks(var._hooks, g, False)
            results[what] = g
        elif g is not None:
            _accumulate(what.variable, g, False)
    if not keep_graph:
        for n in exec_nodes:
            n._release()
    return results


def _capture_var(plan: _Plan, idx: int) -> Tensor | None:
    for n in plan.topo:
        if isinstance(n, AccumulateGrad):
            for _, i in plan.captures.get(id(n), ()):
                if i == idx:
                    return n.variable
    return None
