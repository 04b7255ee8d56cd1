"""The ``reduction=`` argument of the losses: PyTorch's legacy ``size_average``/``reduce``
spelling, and the reduction itself."""

from __future__ import annotations

import warnings
from typing import Any

from compat.torch.nn.functional._arguments import Tensor


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """PyTorch's ``_Reduction.legacy_get_string`` for the deprecated arguments."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return ret


def _resolve_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    return reduction


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")
