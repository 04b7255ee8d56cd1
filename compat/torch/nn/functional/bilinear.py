"""``nn.functional.bilinear``: ``y_k = x1 @ weight[k] @ x2 + bias_k`` over matching batches."""

from __future__ import annotations

import compat.torch as torch
from compat._core.tensor import Tensor

__all__ = ["bilinear"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """The bilinear form of ``weight`` (``(out, in1, in2)``) between the last dimensions
    of ``input1`` and ``input2``, whose other dimensions must be equal (not broadcast),
    plus ``bias``; PyTorch's checks and messages."""
    d1, d2 = input1.dim(), input2.dim()
    if d1 != d2:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {d1} and {d2}")
    for i in range(d1 - 1):
        a, b = input1.shape[i], input2.shape[i]
        if a != b:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {a} and {b}"
            )
    for name, size, expected in (
        ("input1", input1.shape[-1], weight.shape[1]),
        ("input2", input2.shape[-1], weight.shape[2]),
    ):
        if size != expected:
            raise RuntimeError(
                f"bilinear(): {name} size does not match weight size: got {size} but expected "
                f"{expected}"
            )
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but "
            f"expected {weight.shape[0]}"
        )
    n_out, n1, n2 = weight.shape
    # x1 @ W_k for every k at once, then the product with x2 summed over in2
    left = torch.matmul(input1, weight.permute(1, 0, 2).reshape(n1, n_out * n2))
    out = (left.reshape(*left.shape[:-1], n_out, n2) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias
