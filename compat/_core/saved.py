"""A node's saved tensors under PyTorch's names: ``grad_fn._saved_self``,
``_saved_other``, ``_saved_result``, ``_raw_saved_*`` (:class:`SavedTensor`, with
``register_hooks``) and ``_input_metadata``.

Nothing here runs per op: a node keeps its op's residual arrays, its input arrays and
the saved tensors' entries (``tensor._saved_entry``); a field is computed when it is
read. Which inputs and outputs a node saves is the op's declaration (``saves=`` of
``apply``: ``"result"``, ``"none"``, or what its VJP reads); their names are PyTorch's
``self``/``other`` for the first two inputs and ``result`` (``result0``, ...) for the
outputs, unless the op declares others next to its definition (:func:`declare`).

Identity as PyTorch documents it (autograd mechanics, "Saved tensors"): a saved input is
the tensor itself (``y.grad_fn._saved_self is x``); a saved output is a new tensor
sharing the output's storage and version counter, with the node as its ``grad_fn``.
With hooks (``register_hooks`` on the field, or ``saved_tensors_hooks`` when the op was
recorded) a field is what ``unpack`` returns, attached to the saved tensor's graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from compat._core import device as _device
from compat._core import dtypes as _dt
from compat._core.graph import (
    _FREED,
    Node,
    check_versions,
    edge_pair,
    pack_all,
    residuals_of,
    unpack,
)
from compat._core.tensor import Size, Tensor, _new_tensor, _Storage

#: node name -> PyTorch's names of the op's inputs, in ``apply``'s argument order
_NAMES: dict[str, tuple[str, ...]] = {}
_DEFAULT_NAMES = ("self", "other")

_FREED_HOOKS = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward."
)
_HOOKS_SET = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
    "one pair of hooks is allowed at a time."
)
_NONE_FORBIDDEN = "Calling register_hooks on a saved tensor with value None is forbidden"


def declare(node_name: str, *inputs: str) -> None:
    """PyTorch's names of the inputs of the op recorded as ``node_name`` (positional, as
    the op passes them to ``apply``), for its ``grad_fn._saved_<name>`` fields."""
    _NAMES[node_name] = inputs


class InputMetadata(NamedTuple):
    """``grad_fn._input_metadata[k]``: what the node knows of the gradient it receives for
    its ``k``-th output (PyTorch's ``_InputMetadata``)."""

    shape: Size
    dtype: Any
    device: Any
    is_nested_tensor: bool = False
    is_cpp_nested_tensor: bool = False


def input_metadata(node: Node) -> tuple:
    """One :class:`InputMetadata` per output of the node's op."""
    entry = node._entry
    if entry is not None:
        ins = [a for a in node._inputs or () if hasattr(a, "devices")]
        dev = _device.of_array(ins[0]) if ins else _device.CPU
        metas = [(a.shape, a.dtype, dev) for a in entry.op.out_avals]
    else:  # a custom Function's node: its outputs' (shape, dtype, device)
        metas = [m for m in getattr(node, "_out_meta", ()) if m is not None]
    return tuple(InputMetadata(Size(s), _dt.from_np(d), dev) for s, d, dev in metas)


# ---------------------------------------------------------------------------- fields
def _fields(node: Node) -> dict[str, tuple]:
    """PyTorch's field name -> ``("in", i)`` or ``("out", j)`` of what the node's op saves
    (the op's inputs are fields when its VJP reads any of them; an input this node's VJP
    does not need reads as ``None``, as in PyTorch)."""
    entry = node._entry
    op = entry.op
    if op.saves == "none":
        return {}
    names = _NAMES.get(op.name, _DEFAULT_NAMES)
    fields: dict[str, tuple] = {}
    if op.saves != "result":
        # the inputs are fields when the op's VJP for every differentiable input reads one
        full = op.vjp(tuple(_differentiable(a) for a in op.in_avals))
        if full.saved_in or any(k == 0 for k, _ in full.res_src):
            for i, name in enumerate(names[: len(op.in_avals)]):
                fields[name] = ("in", i)
    outs = entry.saved_out if op.saves != "result" else range(op.n_out)
    if op.saves == "result" or outs:
        for j in outs:
            fields["result" if op.n_out == 1 else f"result{j}"] = ("out", j)
    return fields


def _differentiable(aval: Any) -> bool:
    return _dt.kind(aval.dtype) in "fc" and not aval.weak_type


def _packed(node: Node, key: tuple) -> Any:
    for p in node._packed or ():
        if p[2] == key:
            return p
    return None


def _entry_of(node: Node, key: tuple) -> tuple | None:
    """The saved entry (``tensor._saved_entry``) of field ``key``."""
    saved = node._saved or ()
    if key[0] == "out":
        return next(
            (e for e in saved if type(e[6]) is _Storage and e[5] == key[1]),
            None,
        )
    a = (node._inputs or ())[key[1]]
    ins = [e for e in saved if isinstance(e[6], Tensor)]
    found = next((e for e in ins if e[6]._st.a is a), None)
    if found is None:  # changed in place since: PyTorch's error on unpacking it
        check_versions([(*e[:4], e[6]._grad_fn, e[6]._output_nr) for e in ins])
    return found


def _plain(node: Node, key: tuple) -> Tensor | None:
    """The saved tensor of field ``key`` without hooks (PyTorch's identities)."""
    entry = _entry_of(node, key)
    if key[0] == "in":
        if entry is not None:
            t = entry[6]
            check_versions([(*entry[:4], t._grad_fn, t._output_nr)])
            return t
        i = key[1]
        a = (node._inputs or ())[i]
        if i not in node._entry.saved_in and not any(
            k == 0 and j == i for k, j in node._entry.res_src
        ):
            return None  # not needed by this node's VJP
        return Tensor._wrap_result(a) if hasattr(a, "shape") else Tensor._make(np.asarray(a))
    j = key[1]
    if entry is not None:
        check_versions([entry], node)
        t = _new_tensor(Tensor, None)
        t._st, t._vc = entry[6], entry[0]
    else:  # recorded without saved entries (a ``create_graph`` backward)
        k = residuals_of(node, key)
        if not k:
            return None
        t = Tensor._wrap_result(node._res[k[0]])
    t._grad_fn, t._output_nr, t._requires_grad = node, j, True
    return t


def _unpacked(node: Node, key: tuple, p: Any) -> Tensor:
    """What ``unpack`` returns for field ``key``, attached to the saved tensor's graph
    (its ``grad_fn``, or its gradient accumulator for a leaf) as PyTorch does."""
    u = unpack(p[0])
    if key[0] == "out":
        fn, nr = node, key[1]
    else:
        edge = node._edges[key[1]] if key[1] < len(node._edges) else None
        if edge is None:
            return u
        fn, nr = edge_pair(edge)
    t = _new_tensor(Tensor, None)
    t._st, t._vc, t._requires_grad = u._st, u._vc, True
    if getattr(fn, "variable", None) is not None:  # a leaf's AccumulateGrad
        t._acc = fn.variable._acc
    else:
        t._grad_fn, t._output_nr = fn, nr
    return t


def read_field(node: Node, key: tuple) -> Tensor | None:
    """``grad_fn._saved_<name>``."""
    if node._freed:
        raise RuntimeError(_FREED)
    p = _packed(node, key)
    if p is not None and p[0] is not None:
        return _unpacked(node, key, p)
    return _plain(node, key)


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: one saved tensor of a node (only the autograd engine
    makes them)."""

    __slots__ = ("_key", "_node")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _of(cls, node: Node, key: tuple) -> SavedTensor:
        s = object.__new__(cls)
        s._node, s._key = node, key
        return s

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """``pack_hook(tensor)`` now; ``unpack_hook(packed)`` whenever the saved tensor is
        read (by the node's backward or ``_saved_<name>``)."""
        node, key = self._node, self._key
        if node._freed:
            raise RuntimeError(_FREED_HOOKS)
        if _packed(node, key) is not None:
            raise RuntimeError(_HOOKS_SET)
        t = _plain(node, key)
        if t is None:
            raise RuntimeError(_NONE_FORBIDDEN)
        # ``pack`` sees the value without its graph (sharing the version counter, so an
        # in-place change in ``pack`` is caught), as PyTorch's detached original
        (packed,) = pack_all([t.detach()], (pack_hook, unpack_hook))
        if node._packed is None:
            node._packed = []
        node._packed.append((packed, residuals_of(node, key), key))

    def unpack(self) -> Tensor | None:
        """The saved tensor (as ``_saved_<name>``)."""
        return read_field(self._node, self._key)


def node_getattr(node: Node, name: str) -> Any:
    """``Node.__getattr__``: the saved fields and ``_input_metadata`` (computed on read)."""
    if name == "_input_metadata":
        return input_metadata(node)
    raw = name.startswith("_raw_saved_")
    if (raw or name.startswith("_saved_")) and node._entry is not None:
        key = _fields(node).get(name[11:] if raw else name[7:])
        if key is not None:
            if raw:
                return SavedTensor._of(node, key)
            return read_field(node, key)
    raise AttributeError(f"'{node.name()}' object has no attribute '{name}'")


class FunctionSavedTensor(SavedTensor):
    """``ctx._raw_saved_tensors[k]`` of a custom ``Function``'s node: what
    ``save_for_backward`` kept at position ``k``."""

    __slots__ = ("_ctx", "_k")

    @classmethod
    def _at(cls, ctx: Any, k: int) -> FunctionSavedTensor:
        s = object.__new__(cls)
        s._ctx, s._k = ctx, k
        return s

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """``pack_hook(tensor)`` now; ``unpack_hook(packed)`` when ``saved_tensors`` is read."""
        saved = self._ctx._saved_vars
        if saved is None:
            raise RuntimeError(_FREED_HOOKS)
        t, _, _, packed = saved[self._k]
        if packed is not None:
            raise RuntimeError(_HOOKS_SET)
        if t is None:
            raise RuntimeError(_NONE_FORBIDDEN)
        saved[self._k] = (None, None, False, pack_all([t.detach()], (pack_hook, unpack_hook))[0])

    def unpack(self) -> Tensor | None:
        """The saved tensor (as ``saved_tensors[k]``)."""
        return self._ctx.saved_tensors[self._k]


def function_raw_saved(ctx: Any) -> tuple:
    """``ctx._raw_saved_tensors``: one :class:`FunctionSavedTensor` per saved tensor."""
    if ctx._released:
        raise RuntimeError(_FREED)
    return tuple(FunctionSavedTensor._at(ctx, k) for k in range(len(ctx._saved_vars or ())))


def original_alias(t: Tensor) -> Tensor:
    """A new tensor with ``t``'s value and place in the graph (its own version counter):
    what an in-place op on ``t`` reads and saves (PyTorch saves a copy of the original
    ``self``, so saved-tensor hooks never see the tensor being overwritten)."""
    a = _new_tensor(Tensor, t._st.a)
    a._inference = t._inference
    a._grad_fn, a._output_nr, a._requires_grad, a._acc = (
        t._grad_fn,
        t._output_nr,
        t._requires_grad,
        t._acc,
    )
    return a
