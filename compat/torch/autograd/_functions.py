"""``torch.autograd._functions``: the ``Function`` PyTorch's tests use as a plain custom
node, ``Resize`` (a reshape recorded as a Python ``Function``, not an op)."""

from __future__ import annotations

import math
from typing import Any

from compat._core.function import Function
from compat._core.tensor import Tensor

__all__ = ["Resize"]


class Resize(Function):
    """``Resize.apply(tensor, sizes)``: ``tensor``'s elements in the shape ``sizes`` (same
    number of elements), a new tensor; the gradient is reshaped back."""

    @staticmethod
    def forward(ctx: Any, tensor: Tensor, sizes: Any) -> Tensor:
        sizes = tuple(sizes)
        numel = math.prod(sizes)
        if tensor.numel() != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in "
                f"total), but the given tensor has a size of "
                f"{'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                "resize can only change the shape of a given tensor, while preserving the "
                "number of elements. "
            )
        ctx.input_sizes = tensor.size()
        return tensor.clone().reshape(sizes)

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        return grad_output.reshape(ctx.input_sizes), None
