"""Calling a ``grad_fn`` directly: ``y.grad_fn(grad)`` returns the node's input gradients
as PyTorch's ``Node.__call__`` (recorded, so differentiable, when grad mode is on).

:func:`install` makes :class:`~compat._core.graph.Node` callable; the package's
``__init__`` runs it (the engine imports the graph module, not the other way round).
"""

from __future__ import annotations

from typing import Any

from compat._core import grad_mode as _gm
from compat._core.accumulate import as_tensor, flip
from compat._core.engine import _Run
from compat._core.graph import AccumulateGrad, Node, check_node, full_inputs
from compat._core.hooks import leaf, unpack_saved
from compat._core.saved import node_getattr
from funcgrad._compat_contract import x64


@x64
def call_node(n: Node, *grads: Any) -> Any:
    """``grad_fn(*grad_outputs)``: one gradient per ``next_functions`` edge (a single
    tensor when there is one edge); ``None`` stands for zeros."""
    if isinstance(n, AccumulateGrad):
        if len(grads) != 1:
            raise TypeError(f"expected 1 arguments, got {len(grads)} instead")
        leaf(n, flip(as_tensor(grads[0])._st.array), False, [], (), True)
        return ()
    if n._entry is None:  # PyTorch's custom-Function nodes are not callable (``apply`` is)
        raise TypeError(f"'{type(n).__name__}' object is not callable")
    n_out = n._entry.op.n_out
    if len(grads) != n_out:
        raise TypeError(f"expected {n_out} arguments, got {len(grads)} instead")
    create = _gm.is_grad_enabled()
    cts = [None if g is None else flip(g if create else g._st.array) for g in grads]
    unpacked = unpack_saved(n) if n._packed else None
    if n._freed or n._saved:
        check_node(n)
    in_cts = _Run(None, 0, True, create, None)._op_backward(n, cts, unpacked)
    out = tuple(None if g is None else as_tensor(flip(g)) for g in full_inputs(n, in_cts))
    return out[0] if len(out) == 1 else out


def install() -> None:
    """Make recorded nodes callable, with PyTorch's saved fields (``_saved_self``, ...)."""
    Node.__call__ = call_node
    Node.__getattr__ = node_getattr
