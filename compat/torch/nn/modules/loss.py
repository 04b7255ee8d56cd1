"""Loss modules (``torch/nn/modules/loss.py``): ``reduction`` plus the functional call."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module

__all__ = [
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
]


class _Loss(Module):
    def __init__(
        self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction: str = F._legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Any


class MSELoss(_Loss):
    """Mean squared error; ``reduction`` is ``'mean'`` (default), ``'sum'`` or ``'none'``."""

    def forward(self, input: Any, target: Any) -> Any:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input: Any, target: Any) -> Any:
        return F.l1_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class-index targets under log-probabilities."""

    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Any:
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities.

    Example:
        >>> import compat.torch as torch
        >>> loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
        >>> loss = loss_fn(torch.zeros(2, 3, requires_grad=True), torch.tensor([0, 2]))
    """

    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Any:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy, computed stably."""

    def __init__(
        self,
        weight: Any = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        pos_weight: Any = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight: Any
        self.pos_weight: Any

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )
