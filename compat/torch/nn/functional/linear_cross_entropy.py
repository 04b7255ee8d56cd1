"""``nn.functional.linear_cross_entropy``: ``cross_entropy(linear(input, W, b), target)``.

compat computes PyTorch's reference path (the logits are materialised). PyTorch's
``options=`` selects its batch-chunked kernel, which never materialises them but gives
the same values; compat has no chunked kernel and refuses ``options`` rather than
ignore a memory request.
"""

from __future__ import annotations

import math
from typing import Any

from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional.activation import linear
from compat.torch.nn.functional.loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """Cross entropy of ``input @ linear_weight.T (+ linear_bias)`` against ``target``.
    ``linear_weight`` is ``(C, in_features)`` or ``(C, d_1, ..., d_K, in_features)`` (a
    K-dimensional loss over batched ``input``); ``ignore_index=None`` is -100 for class
    indices and not allowed with class probabilities."""
    if options is not None:
        raise NotImplementedError(
            "compat's linear_cross_entropy computes PyTorch's reference path; options= "
            "(the batch-chunked kernel) is not supported: pass options=None"
        )
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively"
        )
    classes, extra = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *extra):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *extra)}, got {tuple(linear_bias.shape)}"
        )
    if extra and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}"
        )
    logits_shape = (*batches, classes, *extra)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    rows = math.prod(extra, start=classes)
    w = linear_weight.reshape(rows, in_features) if extra else linear_weight
    b = linear_bias.reshape(rows) if extra and linear_bias is not None else linear_bias
    logits = linear(input, w, b).reshape(logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
