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
from compat._core.saved import SavedTensor
from compat._core.tensor import Tensor
from compat.torch.autograd import (
    _functions,  # noqa: F401
    anomaly_mode,
    forward_ad,
    function,
    grad_mode,
    graph,
)
from compat.torch.autograd.grad_mode import (  # noqa: F401
    _force_original_view_tracking,
    _unsafe_preserve_version_counter,
    enforce_grad_layout_policy,
    is_multithreading_enabled,
    is_view_replay_enabled,
    set_multithreading_enabled,
)
from compat.torch.autograd.gradcheck import gradcheck, gradgradcheck
from compat.torch.autograd.variable import Variable


def variable(*args: Any, **kwargs: Any) -> Any:
    """``torch.autograd.variable(...)``: the pre-0.4 factory, which PyTorch keeps only to
    raise (``torch.autograd.Variable`` and ``torch.tensor`` are the spellings that work)."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


def _calculate_shape(output: Any, grad: Any, is_grads_batched: bool) -> tuple:
    """The shapes ``backward`` compares for an output and its gradient (the gradient's
    without its batch dimension when ``is_grads_batched``): PyTorch's private helper."""
    if not isinstance(output, Tensor):
        raise TypeError(f"_calculate_shape: expected a Tensor output, got {type(output).__name__}")
    shape = grad.shape
    return output.shape, (type(shape)(shape[1:]) if is_grads_batched else shape)


__all__ = [
    "Function",
    "SavedTensor",
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
    if name == "torch":  # PyTorch's ``torch.autograd.torch`` (its module imports torch)
        return importlib.import_module("compat.torch")
    raise AttributeError(f"module 'compat.torch.autograd' has no attribute {name!r}")
