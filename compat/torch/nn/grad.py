"""``torch.nn.grad``: the gradients of ``conv1d``/``conv2d``/``conv3d`` with respect to
their input or weight (PyTorch's ``nn.functional.grad`` is this module; compat's
``nn.functional.grad`` holds the same functions, defined there)."""

from __future__ import annotations

from compat.torch.nn.functional.grad import (
    conv1d_input,
    conv1d_weight,
    conv2d_input,
    conv2d_weight,
    conv3d_input,
    conv3d_weight,
)

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]
