"""``nn.grad`` (also ``nn.functional.grad``): the gradients of ``conv1d``/``conv2d``/
``conv3d`` with respect to their input or weight, given the output's gradient.

A convolution is linear in its input and in its weight, so each gradient is the
vector-Jacobian product of the convolution at a zero input (weight) of the given size:
compat differentiates its own ``convNd`` (no second kernel to keep in step with it). The
result carries a graph when the tensors it depends on require gradients, as PyTorch's.

Example:
    >>> import compat.torch as torch
    >>> w, g = torch.ones(1, 1, 2), torch.ones(1, 1, 3)
    >>> torch.nn.grad.conv1d_input((1, 1, 4), w, g).tolist()
    [[[1.0, 2.0, 2.0, 1.0]]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import compat.torch as torch
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional.conv import conv1d, conv2d, conv3d

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

Size = Sequence[int]


def _vjp(conv: Callable, wrt: str, given: Tensor, size: Size, grad_output: Tensor,
         stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:  # fmt: skip
    """The gradient, for ``grad_output``, of ``conv`` with respect to its ``wrt`` operand
    (``"input"`` or ``"weight"``) of shape ``size``, the other operand being ``given``."""
    if not isinstance(grad_output, torch.Tensor) or not isinstance(given, torch.Tensor):
        raise TypeError("conv gradients: grad_output and the given operand must be Tensors")
    dummy = torch.zeros(tuple(int(s) for s in size), dtype=given.dtype, requires_grad=True)
    x, w = (dummy, given) if wrt == "input" else (given, dummy)
    keep = torch.is_grad_enabled() and (given.requires_grad or grad_output.requires_grad)
    with torch.enable_grad():
        out = conv(x, w, None, stride, padding, dilation, groups)
        (grad,) = torch.autograd.grad(out, dummy, grad_output, create_graph=keep)
    return grad


def conv1d_input(input_size: Size, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv1d`` with respect to an input of shape ``input_size``."""
    return _vjp(conv1d, "input", weight, input_size, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size: Size, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv1d`` with respect to a weight of shape ``weight_size``."""
    return _vjp(
        conv1d, "weight", input, weight_size, grad_output, stride, padding, dilation, groups
    )


def conv2d_input(input_size: Size, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv2d`` with respect to an input of shape ``input_size``."""
    return _vjp(conv2d, "input", weight, input_size, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size: Size, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv2d`` with respect to a weight of shape ``weight_size``."""
    return _vjp(
        conv2d, "weight", input, weight_size, grad_output, stride, padding, dilation, groups
    )


def conv3d_input(input_size: Size, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv3d`` with respect to an input of shape ``input_size``."""
    return _vjp(conv3d, "input", weight, input_size, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size: Size, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    """The gradient of ``conv3d`` with respect to a weight of shape ``weight_size``."""
    return _vjp(
        conv3d, "weight", input, weight_size, grad_output, stride, padding, dilation, groups
    )
