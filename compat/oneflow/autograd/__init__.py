"""``oneflow.autograd``: OneFlow's ``backward`` and ``grad`` signatures over the shared engine.

* ``backward(tensors, grad_tensors=None, retain_graph=False, create_graph=False)``
* ``grad(outputs, inputs, grad_outputs=None, retain_graph=False, create_graph=False,
  allow_unused=False, is_grads_batched=False)``
"""

from __future__ import annotations

from typing import Any

from compat._core import autograd as _ag
from compat._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from compat._core.graph import GradientEdge, get_gradient_edge

__all__ = [
    "GradientEdge",
    "backward",
    "enable_grad",
    "get_gradient_edge",
    "grad",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
]


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool = False,
    create_graph: bool = False,
) -> None:
    """Computes the sum of gradients of given tensors with respect to graph leaves.

    OneFlow's signature: ``retain_graph`` defaults to ``False`` (the graph is freed
    even when ``create_graph=True``).
    """
    _ag.backward(
        tensors,
        grad_tensors,
        retain_graph=bool(retain_graph),
        create_graph=create_graph,
    )


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool = False,
    create_graph: bool = False,
    allow_unused: bool = False,
    is_grads_batched: bool = False,
) -> Any:
    """Computes and returns the sum of gradients of outputs with respect to the inputs
    (OneFlow's signature: ``retain_graph`` defaults to ``False``)."""
    return _ag.grad(
        outputs,
        inputs,
        grad_outputs,
        retain_graph=bool(retain_graph),
        create_graph=create_graph,
        allow_unused=allow_unused,
        is_grads_batched=is_grads_batched,
    )
