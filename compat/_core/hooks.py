"""PyTorch's hook calls around a node of the recorded graph, shared by the engine's two
evaluation modes and by calling a ``grad_fn`` directly.

* tensor hooks (``register_hook``) and ``retain_grad`` of a node's outputs, in
  registration order, with ``None`` for an output that got no gradient;
* node pre-hooks ``fn(grad_outputs)`` and post-hooks ``fn(grad_inputs, grad_outputs)``
  (``grad_inputs`` has one entry per ``next_functions`` edge);
* a leaf's ``AccumulateGrad``: tensor hooks, node pre-hooks, accumulation,
  post-accumulate-grad hooks, node post-hooks;
* saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks``): ``unpack`` calls;
* the running backward calls (``current_task_id``, ``will_execute``) that
  ``register_multi_grad_hook`` asks about.

The engine passes funcgrad's cotangents; hooks see and return PyTorch's gradients
(their conjugate for complex dtypes, :func:`~compat._core.accumulate.flip`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from compat._core.accumulate import accumulate, as_tensor, as_value, flip, run_hooks
from compat._core.graph import AccumulateGrad, Node, full_inputs, unpack
from compat._core.tensor import Tensor


class _Runs(threading.local):
    def __init__(self) -> None:
        #: this thread's running backward calls (innermost last): (task id, plan, accumulate)
        self.stack: list[tuple[int, Any, bool]] = []


RUNS = _Runs()


def current_task_id() -> int:
    """The id of the innermost running backward call, ``-1`` outside one."""
    stack = RUNS.stack
    return stack[-1][0] if stack else -1


def will_execute(node: Node) -> bool:
    """Whether the innermost running backward call runs ``node`` (PyTorch's
    ``_will_engine_execute_node``)."""
    if not RUNS.stack:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass"
        )
    _, plan, acc = RUNS.stack[-1]
    if isinstance(node, AccumulateGrad):
        if not acc:
            raise RuntimeError(
                "A leaf node was passed to _will_engine_execute_node but we are currently "
                "running autograd.grad(). This is currently not supported."
            )
        return id(node) in plan.acc
    ids = plan.__dict__.get("_ids")
    if ids is None:
        ids = plan._ids = {id(n) for n in plan.topo}
    if id(node) not in ids:
        return False
    return plan.runs is None or id(node) in plan.runs or id(node) in plan.captures


def tensor_pre_hooks(n: Node, cts: list, create: bool) -> list:
    """The tensor hooks of ``n``'s outputs (registration order; ``None`` for an output
    without gradient), then ``retain_grad``."""
    cts = [flip(c) for c in cts]
    th = n._tensor_hooks
    if th:
        if len(cts) == 1:
            hooks = th.get(0)
            if hooks:
                cts[0] = run_hooks(hooks, cts[0], create)
        else:
            calls = sorted((hid, nr, fn) for nr, hooks in th.items() for hid, fn in hooks.items())
            for _, nr, fn in calls:
                cts[nr] = run_hooks({0: fn}, cts[nr], create)
    if n._retain:
        for nr, ref in list(n._retain.items()):
            t, g = ref(), cts[nr]
            if t is not None and g is not None:
                new = g if create else as_tensor(g)._st.array
                t._grad = as_tensor(new if t._grad is None else _add(t._grad, new, create))
    return [flip(c) for c in cts]


def _add(old: Tensor, new: Any, create: bool) -> Any:
    if create:
        return old + as_tensor(new)
    return old._st.array + new


def _wrap_all(gs: Sequence[Any]) -> tuple:
    return tuple(None if g is None else as_tensor(g) for g in gs)


def node_pre_hooks(n: Node, cts: list, create: bool) -> list:
    """``fn(grad_outputs)``; a returned tuple replaces them."""
    return [flip(c) for c in _pre_hooks(n, [flip(c) for c in cts], create)]


def _pre_hooks(n: Node, cts: list, create: bool) -> list:
    for h in list(n._pre_hooks.values()):
        wrapped = _wrap_all(cts)
        r = h(wrapped)
        if r is not None:
            cts = [as_value(x, create) for x in _checked_result(h, r, wrapped)]
    return cts


def _checked_result(hook: Any, r: Any, like: tuple) -> tuple:
    """A node hook's replacement gradients, refused as PyTorch refuses them: not a tuple,
    another count, or a gradient of another shape."""
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    name = getattr(hook, "__name__", "<unknown>")
    if len(r) != len(like):
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(r)}, but "
            f"expected {len(like)})"
        )
    for new, old in zip(r, like, strict=True):
        if new is not None and old is not None and tuple(new.shape) != tuple(old.shape):
            raise RuntimeError(f"hook '{name}' has changed the size of value")
    return r


def node_post_hooks(n: Node, in_cts: Sequence[Any], cts: Sequence[Any], create: bool) -> list:
    """``fn(grad_inputs, grad_outputs)``; a returned tuple replaces ``grad_inputs``."""
    full = full_inputs(n, [flip(g) for g in in_cts])
    grads_in, grads_out = _wrap_all(full), _wrap_all([flip(c) for c in cts])
    for h in list(n._post_hooks.values()):
        r = h(grads_in, grads_out)
        if r is not None:
            grads_in = _checked_result(h, r, grads_in)
    out = [flip(as_value(g, create)) for g in grads_in]
    if len(out) != len(in_cts):  # back to the edges the engine feeds
        out = [g for g, e in zip(out, n._edges) if e is not None]
    return out


def unpack_saved(n: Node) -> dict:
    """Call the saved-tensor ``unpack`` hook on what ``pack`` returned, as PyTorch does
    when the node's backward reads its saved tensors; where a residual is the saved
    tensor's own array, the backward uses what ``unpack`` returned (same shape and dtype).
    Returns the unpacked arrays of saved inputs by position (a ``create_graph`` backward
    recomputes from the inputs)."""
    res = None
    inputs = {}
    for entry, positions, key in n._packed:
        if entry is None:
            continue
        a = unpack(entry)._st.array
        if key[0] == "in":
            inputs[key[1]] = a
        for k in positions:
            if res is None:
                res = list(n._res)
            if a.shape == res[k].shape and a.dtype == res[k].dtype:
                res[k] = a
    if res is not None:
        n._res = res
    return inputs


def leaf(
    n: AccumulateGrad, g: Any, create: bool, results: list, caps: Sequence[int], acc: bool
) -> None:
    """A leaf's gradient: its tensor hooks, captures, then (when accumulating) the
    ``AccumulateGrad`` node: pre-hooks, accumulation and post-accumulate-grad hooks,
    post-hooks. ``g`` is funcgrad's cotangent; all of these see PyTorch's gradient."""
    g = flip(g)
    var = n.variable
    if var._hooks:
        g = run_hooks(var._hooks, g, create)
    for idx in caps:
        results[idx] = g
    if not acc:
        return
    if n._pre_hooks:
        (g,) = _pre_hooks(n, [g], create)
    gout = None
    if g is not None:
        stolen = var._grad is None
        accumulate(var, g, create)
        # a first gradient becomes ``.grad`` itself (PyTorch steals it): hooks see one tensor
        gout = var._grad if stolen and var._grad is not None else as_tensor(g)
    if n._post_hooks:
        for h in list(n._post_hooks.values()):
            h((), (gout,))


def has_hooks(n: Node) -> bool:
    """Whether ``n`` runs hooks (its own, its outputs' or its leaf's)."""
    if isinstance(n, AccumulateGrad):
        return bool(n.variable._hooks or n._pre_hooks or n._post_hooks)
    return n._has_hooks()


def no_gradient(n: Node, cts: list, create: bool) -> list:
    """A node no gradient reached: no backward, ``None`` for each input (its post-hooks
    are called with them)."""
    edges = n._edges if n._entry is None else [e for e in n._edges if e is not None]
    in_cts: list = [None] * len(edges)
    if n._post_hooks:
        in_cts = node_post_hooks(n, in_cts, cts, create)
    return in_cts
