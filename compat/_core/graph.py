"""The recorded graph: :class:`Node` (a ``grad_fn``), :class:`AccumulateGrad` (a
leaf's gradient sink), :class:`GradientEdge` and :func:`get_gradient_edge`.

A node is one call of an op's funcgrad program: it holds the op's
:class:`funcgrad._compat_contract.OpVJP`, the residual arrays the forward saved, the input
arrays (so ``create_graph=True`` can record the node's backward as a
differentiable op), its input edges and the version counters of the tensors
PyTorch would consider saved.
"""

from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from compat._core import dtypes as _dt
from compat._core import tensor_checks as _tc

if TYPE_CHECKING:
    from compat._core.tensor import Tensor
    from funcgrad._compat_contract import OpVJP

_handle_ids = itertools.count()


def edge_key(node: Node, output_nr: int) -> Node | tuple[Node, int]:
    """The key of the edge ``(node, output_nr)``, as nodes hold their edges
    (``Node._edges``) and the backward keys its cotangents: the node itself for its output
    0, the pair for any other output. Most recorded ops have one output, so a node then
    holds no tuple per edge: fewer objects for Python's cyclic GC to track and traverse."""
    return node if output_nr == 0 else (node, output_nr)


def edge_pair(key: Any) -> tuple[Node, int] | None:
    """The ``(node, output_nr)`` of an edge key (:func:`edge_key`); ``None`` for ``None``."""
    if key is None or type(key) is tuple:
        return key
    return (key, 0)


class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_dicts", "id")

    def __init__(self, *dicts: dict) -> None:
        self.id = next(_handle_ids)
        self._dicts = dicts

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class Node:
    """A recorded op's backward (``tensor.grad_fn``)."""

    __slots__ = (
        "__weakref__",
        "_edges",
        "_entry",
        "_freed",
        "_inputs",
        "_metadata",
        "_packed",
        "_post_hooks",
        "_pre_hooks",
        "_res",
        "_retain",
        "_saved",
        "_tensor_hooks",
    )

    def __init__(
        self,
        entry: OpVJP | None,
        residuals: list | None,
        inputs: list | None,
        edges: tuple,
        saved: list | None,
    ) -> None:
        self._entry = entry
        self._res = residuals
        self._inputs = inputs
        #: one per op input: ``None`` (no gradient needed), else the edge's key
        #: (:func:`edge_key`: the node itself for its output 0, ``(node, output_nr)`` else)
        self._edges = edges
        self._saved = saved
        self._freed = False
        #: ``(unpack, packed)`` per saved tensor, under ``saved_tensors_hooks``
        self._packed: list | None = None
        self._pre_hooks: dict | None = None
        self._post_hooks: dict | None = None
        #: output_nr -> OrderedDict of tensor hooks registered on that output
        self._tensor_hooks: dict[int, OrderedDict] | None = None
        #: output_nr -> weakref of the tensor that ``retain_grad()``-ed it
        self._retain: dict[int, Any] | None = None
        self._metadata: dict | None = None

    @property
    def metadata(self) -> dict:
        """The node's metadata dict (created on first use)."""
        m = self._metadata
        if m is None:
            m = self._metadata = {}
        return m

    # ------------------------------------------------------------------ PyTorch's Node API
    def name(self) -> str:
        return self._entry.op.name if self._entry is not None else "Node"

    @property
    def next_functions(self) -> tuple:
        if self._entry is None:
            return ()
        return tuple([e if type(e) is tuple else (e, 0) for e in self._edges])

    def _input_avals(self) -> tuple:
        return self._entry.op.out_avals

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node computed its gradients;
        a returned tuple replaces ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = OrderedDict()
        h = RemovableHandle(self._post_hooks)
        self._post_hooks[h.id] = fn
        return h

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; a returned tuple replaces them."""
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = fn
        return h

    def _register_tensor_hooks(self, output_nr: int, hooks: OrderedDict) -> None:
        if self._tensor_hooks is None:
            self._tensor_hooks = {}
        self._tensor_hooks[output_nr] = hooks

    def _has_hooks(self) -> bool:
        return bool(
            self._pre_hooks
            or self._post_hooks
            or self._tensor_hooks
            or self._retain
            or self._packed
        )

    def __repr__(self) -> str:
        return f"<{self.name().removeprefix('torch::autograd::')} object at {hex(id(self))}>"

    # ------------------------------------------------------------------ engine helpers
    def _release(self) -> None:
        if self._res:
            self._res = None
        self._inputs = None
        self._packed = None
        self._saved = None  # (holds saved inputs' tensors)
        self._freed = True


#: the saved-tensor hooks in force (``saved_tensors_hooks``), innermost last
SAVED_HOOKS: list[tuple[Callable, Callable]] = []
#: the message ``disable_saved_tensors_hooks`` set (``None``: hooks allowed)
SAVED_HOOKS_DISABLED: list[str | None] = [None]


def pack_saved(node: Node, tensors: list) -> None:
    """Call the innermost ``pack`` hook on each tensor ``node`` saves (PyTorch's order:
    saved inputs, then saved outputs), remembering which saved field (:func:`saved_keys`)
    and which residuals each is; ``unpack`` is called on each result when the node's
    backward runs (or a ``grad_fn._saved_*`` field is read)."""
    keys = saved_keys(node, tensors)
    node._packed = [
        (entry, residuals_of(node, key), key) for entry, key in zip(pack_all(tensors), keys)
    ]


def saved_keys(node: Node, tensors: Sequence[Any]) -> list:
    """The saved field of each of ``tensors`` (what ``node`` saved, inputs then outputs):
    ``("in", i)`` for the op's input ``i``, ``("out", j)`` for its output ``j``."""
    keys: list = []
    entry, ins = node._entry, node._inputs or ()
    free = list(entry.saved_in)
    n_in = len(tensors) - len(entry.saved_out)
    for t in tensors[:n_in]:
        a = t._st.a
        i = next((i for i in free if ins[i] is a), free[0] if free else -1)
        if i in free:
            free.remove(i)
        keys.append(("in", i))
    return keys + [("out", j) for j in entry.saved_out]


def residuals_of(node: Node, key: tuple) -> list:
    """The positions of ``node``'s residuals that are the saved field ``key``'s array."""
    kind = 0 if key[0] == "in" else 1
    return [k for k, (src, idx) in enumerate(node._entry.res_src) if src == kind and idx == key[1]]


def pack_all(tensors: Sequence[Any], hooks: tuple[Callable, Callable] | None = None) -> list:
    """``(unpack, pack(t))`` per tensor (``None`` for ``None``) with ``hooks`` (default: the
    innermost ``saved_tensors_hooks``); PyTorch's error when ``pack`` modifies its input in
    place."""
    pack, unpack = hooks or SAVED_HOOKS[-1]
    out: list = []
    for t in tensors:
        if t is None:
            out.append(None)
            continue
        version = t._vc.v
        packed = pack(t)
        if t._vc.v != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided "
                "as input to pack hook cannot be modified by in-place operations as this can "
                "lead to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook."
            )
        out.append((unpack, packed))
    return out


def unpack(entry: tuple) -> Any:
    """``unpack(packed)``, which must be a tensor (PyTorch's ``TypeError`` otherwise)."""
    fn, packed = entry
    t = fn(packed)
    if getattr(t, "_st", None) is None:  # (graph.py cannot import Tensor: a cycle)
        raise TypeError(
            "Output of saved tensor unpack_hook expected to be a Tensor but got result "
            f"of type {type(t).__name__}"
        )
    return t


class CopyBackwards(Node):
    """The node of the copy PyTorch's AccumulateGrad makes of a leaf's first gradient
    under ``create_graph`` (its ``copy_`` into a new tensor): edges
    ``(None, <the gradient's node>)``."""

    __slots__ = ()


class AccumulateGrad(Node):
    """The gradient sink of a leaf tensor (``next_functions`` of its consumers)."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__(None, None, None, (), None)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        return ()

    def _release(self) -> None:
        pass


def full_inputs(n: Node, in_cts: Sequence[Any]) -> list:
    """One gradient per ``next_functions`` edge (an op node returns them only for the
    edges that need one)."""
    edges = n._edges
    if n._entry is None or len(in_cts) == len(edges):  # (edges: keys or ``None``)
        return list(in_cts)
    it = iter(in_cts)
    return [None if e is None else next(it) for e in edges]


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor is computed: ``(node, output_nr)``."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The gradient edge of ``tensor``: its ``grad_fn`` and output number, or its
    gradient accumulator when it is a leaf.

    ``autograd.grad(loss, t)`` and ``autograd.grad(loss, get_gradient_edge(t))`` are
    the same.
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor "
            "that does not require gradients"
        )
    node, nr = tensor._edge()
    return GradientEdge(node, nr)


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def short_name(node: Node) -> str:
    """``MulBackward0`` -> ``Mul`` (how PyTorch names a node in version errors)."""
    return _BACKWARD_SUFFIX.sub("", node.name())


_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
TYPE_NAMES = _dt.TENSOR_TYPE_NAMES


def check_node(n: Node) -> None:
    """PyTorch's errors for freed saved tensors and saved tensors modified in place."""
    if n._freed and n._entry.tensor_res:
        raise RuntimeError(_FREED)
    if _tc._detached:
        for e in n._saved or ():
            _tc.check_detached(n, e[4], e[5])
    if not (
        n._packed and all(p[0] is None or hasattr(p[0][0], "allows_mutation") for p in n._packed)
    ):
        check_versions(n._saved or (), n)  # (allow_mutation_on_saved_tensors: no check)


def check_versions(saved: Any, node: Node | None = None) -> None:
    """PyTorch's error for a saved tensor modified in place (entries: ``_saved_entry``; a
    saved output's names no node: it is ``node``'s)."""
    for e in saved:
        vc, ver, shape, dtype, fn, nr = e[:6]
        if vc.v != ver:
            if fn is None and len(e) > 6 and not hasattr(e[6], "_vc"):
                fn = node  # a saved output's entry (its storage last): ``node``'s output
            which = f", which is output {nr} of {short_name(fn)}," if fn is not None else ""
            kind = TYPE_NAMES.get(dtype.name, dtype.name)
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [torch.{kind} [{', '.join(map(str, shape))}]]{which} is "
                f"at version {vc.v}; expected version {ver} instead. Hint: enable anomaly "
                "detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False)."
            )
