"""``nn.LinearCrossEntropyLoss``: a linear head and the cross entropy of its logits in one
module (``F.linear_cross_entropy``)."""

from __future__ import annotations

import math
from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.linear import Linear
from compat.torch.nn.modules.loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``Linear(in_features, num_classes * prod(out_features))`` logits,
    read as ``(N, num_classes, *out_features)``, against ``target``. ``options`` (PyTorch's
    chunked kernel) is refused by ``forward`` (see ``F.linear_cross_entropy``).

    Example:
        >>> import compat.torch as torch
        >>> head = torch.nn.LinearCrossEntropyLoss(4, 10)
        >>> loss = head(torch.randn(3, 4), torch.tensor([1, 0, 9]))
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device: Any = None,
        dtype: Any = None,
        reduction: str = "mean",
        weight: Any = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: Any = None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        rows = math.prod(out_features, start=num_classes)
        self.linear = Linear(in_features, rows, bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Any, target: Any) -> Any:
        shape = (self.num_classes, *self.out_features)
        w = self.linear.weight.reshape((*shape, self.linear.in_features))
        b = self.linear.bias.reshape(shape) if self.linear.bias is not None else None
        return F.linear_cross_entropy(
            input,
            w,
            target,
            linear_bias=b,
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )
