"""``torch.autograd``: ``backward``, ``grad``, grad-mode switches and ``graph``.

Signatures and defaults are PyTorch's::

    backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None)
    grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False)
"""

from __future__ import annotations

import importlib
from typing import Any

from compat._core.anomaly import detect_anomaly, set_detect_anomaly
from compat._core.autograd import backward, grad
from compat._core.function import Function
from compat._core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from compat.torch.autograd import anomaly_mode, forward_ad, function, grad_mode, graph
from compat.torch.autograd.grad_mode import _unsafe_preserve_version_counter  # noqa: F401
from compat.torch.autograd.gradcheck import gradcheck, gradgradcheck
from compat.torch.autograd.variable import Variable

__all__ = [
    "Function",
    "Variable",
    "anomaly_mode",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "function",
    "functional",
    "grad",
    "grad_mode",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def __getattr__(name: str) -> Any:
    # ``functional`` builds on ``torch.func`` (forward mode), which imports compat.torch:
    # loaded on first use to keep the package import acyclic
    if name == "functional":
        return importlib.import_module("compat.torch.autograd.functional")
    raise AttributeError(f"module 'compat.torch.autograd' has no attribute {name!r}")
