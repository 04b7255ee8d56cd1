"""``torch.autograd.graph``: ``Node``, ``GradientEdge``, ``get_gradient_edge``,
``increment_version``, ``register_multi_grad_hook`` and the saved-tensor hooks
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``).

compat keeps no per-tensor list of saved tensors: a node keeps the residual arrays its
op's VJP needs. Under ``saved_tensors_hooks`` ``pack`` is called on each tensor PyTorch
would save (same tensors, same order) when the op is recorded and ``unpack`` on each
result when the node's backward runs; where a residual is the saved tensor's own array,
the backward uses what ``unpack`` returned.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

from compat._core import hooks as _hooks
from compat._core.graph import (
    SAVED_HOOKS,
    SAVED_HOOKS_DISABLED,
    GradientEdge,
    RemovableHandle,
    get_gradient_edge,
)
from compat._core.graph import Node as _Node
from compat._core.tensor import Tensor

__all__ = [
    "GradientEdge",
    "Node",
    "allow_mutation_on_saved_tensors",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
]


class _VirtualBase(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _Node)

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls or (isinstance(sub, type) and issubclass(sub, _Node))


class Node(metaclass=_VirtualBase):
    """A node of the recorded graph (a ``grad_fn``, a leaf's ``AccumulateGrad``, a custom
    ``Function``'s ctx): a virtual base class, as PyTorch's, so ``isinstance(t.grad_fn,
    Node)`` holds while ``Node`` is not in the nodes' ``mro()``."""

    def name(self) -> str:
        """The node's name (``MulBackward0``)."""
        raise NotImplementedError

    @property
    def next_functions(self) -> tuple:
        """``(node, output_nr)`` per input of the recorded op."""
        raise NotImplementedError


_MUTATION_CTX: list[Any] = [None]
_OUT_OF_CONTEXT = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the "
    "graph was originally recorded."  # (sic: PyTorch's message)
)


class _Handle:
    """What ``allow_mutation_on_saved_tensors``' pack hook returns: the saved value (arrays
    are immutable, so it is the value as saved), and the tensor's version then."""

    __slots__ = ("__weakref__", "ctx", "value", "vc", "version")

    def __init__(self, ctx: allow_mutation_on_saved_tensors, t: Tensor) -> None:
        self.ctx, self.vc, self.version = ctx, t._vc, t._vc.v
        self.value = Tensor._wrap_result(t._st.a)


class allow_mutation_on_saved_tensors:
    """Context manager: the tensors ops recorded inside save for backward may be modified
    in place before the backward, which uses the values they had when saved. The backward
    must run inside the same context.

    PyTorch clones a saved tensor when it is first modified in place; compat's arrays are
    immutable, so the saved value is kept as it is and the bookkeeping is read off the
    version counters: ``tid_to_weakhandle`` maps (tensor, version) to the live handle of
    each saved tensor (one per tensor and version, however often it is saved), ``cloned``
    holds the live handles whose tensor changed since (what PyTorch would have cloned),
    ``original`` the others. A handle lives as long as a node that saved it."""

    def __enter__(self) -> allow_mutation_on_saved_tensors:
        if _MUTATION_CTX[0] is not None:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        _MUTATION_CTX[0] = self
        SAVED_HOOKS.append((self._pack, _unpack_saved_value))
        return self

    def __exit__(self, *exc: Any) -> None:
        SAVED_HOOKS.remove((self._pack, _unpack_saved_value))
        _MUTATION_CTX[0] = None
        self.tid_to_weakhandle.clear()

    @property
    def cloned(self) -> dict:
        """The live handles whose tensor was modified in place since it was saved."""
        return {h: h.value for h in self.tid_to_weakhandle.values() if h.vc.v != h.version}

    @property
    def original(self) -> dict:
        """The live handles whose tensor is unchanged."""
        return {h: h.value for h in self.tid_to_weakhandle.values() if h.vc.v == h.version}

    def _pack(self, t: Tensor) -> _Handle:
        tid = (id(t), id(t._vc), t._vc.v)
        h = self.tid_to_weakhandle.get(tid)
        if h is None:
            h = self.tid_to_weakhandle[tid] = _Handle(self, t)
        return h


def _unpack_saved_value(h: _Handle) -> Tensor:
    if _MUTATION_CTX[0] is not h.ctx:
        raise AssertionError(_OUT_OF_CONTEXT)
    return h.value


_unpack_saved_value.allows_mutation = True  # type: ignore[attr-defined]


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor in an iterable), as an
    in-place change autograd did not see."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._vc.v += 1


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` on each tensor an op saves for backward,
    ``unpack_hook(packed)`` when the backward reads it (innermost pair wins)."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if SAVED_HOOKS_DISABLED[0] is not None:
            raise RuntimeError(SAVED_HOOKS_DISABLED[0])
        SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args: object) -> None:
        SAVED_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(t: Tensor) -> tuple:
            return (t.device, t.cpu())

        def unpack_from_cpu(packed: tuple) -> Tensor:
            device, t = packed
            return t.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Generator[None, None, None]:
    """Inside, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``."""
    prev = SAVED_HOOKS_DISABLED[0]
    try:
        SAVED_HOOKS_DISABLED[0] = error_message
        yield
    finally:
        SAVED_HOOKS_DISABLED[0] = prev


class _MultiHandle(RemovableHandle):
    """Removes every per-tensor hook of a multi-grad hook."""

    def __init__(self, handles: tuple) -> None:
        super().__init__()
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _node_of(t: Tensor | GradientEdge) -> _Node:
    if isinstance(t, GradientEdge):
        return t.node
    if t.grad_fn is None and not t.requires_grad:
        raise AssertionError("Expected gradient function to be set")
    return t._edge()[0]


def register_multi_grad_hook(
    tensors: Sequence[Tensor], fn: Callable, *, mode: str = "all"
) -> RemovableHandle:
    """``mode="all"``: ``fn(grads)`` once per backward call, after the gradients of all
    ``tensors`` that call computes (``None`` for the others); ``mode="any"``:
    ``fn(grad)`` with the first of them computed."""
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        nodes = [_node_of(t) for t in tensors]
        count: dict[int, int] = {}
        buffer: dict[int, list] = {}
        n_calls: dict[int, int] = {}

        def inner(idx: int) -> Callable:
            def hook(grad: Tensor | None) -> None:
                tid = _hooks.current_task_id()
                with lock:
                    seen = count.get(tid, 0)
                    count[tid] = seen + 1
                    if seen == 0:
                        n_calls[tid] = sum(map(_hooks.will_execute, nodes))
                        buffer[tid] = [None] * len(nodes)
                buffer[tid][idx] = grad
                if seen == n_calls[tid] - 1:
                    grads = buffer.pop(tid)
                    del count[tid], n_calls[tid]
                    fn(grads)

            return hook

        handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
        return _MultiHandle(handles)
    ran: dict[int, bool] = {}

    def wrapped(grad: Tensor) -> None:
        tid = _hooks.current_task_id()
        with lock:
            prev = ran.get(tid, False)
            ran[tid] = True
        if not prev:
            fn(grad)

    handles = tuple(t.register_hook(wrapped) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
