"""``nn.functional`` multi-class hinge losses: ``multi_margin_loss`` and
``multilabel_margin_loss``, one compat op each with the reduction inside (as PyTorch's
``MultiMarginLossBackward0`` / ``MultilabelMarginLossBackward0``)."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.tensor import apply, known_value
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _type_name
from compat.torch.nn.functional._reduction import _resolve_reduction

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    return loss


def _hinge(z: Any) -> Any:
    """``z`` where ``z > 0`` (PyTorch's kernels count a term only when strictly positive)."""
    return fnp.where(z > 0, z, fnp.zeros_like(z))


def _check_input(input: Tensor) -> None:
    if input.numel() == 0 and input.dim() == 2 and input.shape[1] > 0:
        return  # an empty batch is allowed
    if input.numel() == 0 or input.dim() > 2:
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, "
            f"but got: {list(input.shape)}"
        )


def _check_long(target: Tensor) -> None:
    if target.dtype != torch.int64:
        raise RuntimeError(f"expected scalar type Long but found {_type_name(target)}")


def _multi_margin_f(
    x: Any, y: Any, *w: Any, p: int, margin: float, reduction: str, out_shape: tuple
) -> Any:
    x2 = x.reshape((-1, x.shape[-1] if x.ndim else 1))
    yi = y.reshape((-1, 1))
    xy = fnp.take_along_axis(x2, yi, axis=1)
    z = _hinge(margin - xy + x2)
    if p == 2:
        z = z * z
    if w:
        z = z * fnp.take(w[0].reshape(-1), yi, axis=0)
    other = fnp.arange(x2.shape[1]).reshape((1, -1)) != yi
    z = fnp.where(other, z, fnp.zeros_like(z))
    loss = (fnp.sum(z, axis=1) / x2.shape[1]).reshape(out_shape)
    return _reduce(loss, reduction)


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C``,
    each sample scaled by ``weight[y]``."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_input(input)
    nframe = 1 if input.dim() <= 1 else input.shape[0]
    n_classes = input.numel() if input.dim() <= 1 else input.shape[1]
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(
            f"inconsistent weight size, expected {n_classes} but got {list(weight.shape)}"
        )
    _check_long(target)
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_type_name(input)} but found {_type_name(weight)}"
        )
    values = known_value(target)
    if values is not None and ((values < 0) | (values >= n_classes)).any():
        raise RuntimeError("target out of range")
    static = (
        ("p", int(p)),
        ("margin", float(margin)),
        ("reduction", reduction),
        ("out_shape", tuple(target.shape)),
    )
    args = (input, target) if weight is None else (input, target, weight)
    return apply(_multi_margin_f, "MultiMarginLossBackward0", args, static)


def _multilabel_margin_f(x: Any, y: Any, *, reduction: str) -> Any:
    n_classes = x.shape[-1] if x.ndim else 1
    x2 = x.reshape((-1, n_classes))
    y2 = y.reshape((-1, n_classes))
    # the labels are the entries before the first negative one
    valid = fnp.cumprod((y2 >= 0).astype(x2.dtype), axis=1)
    yc = fnp.where(y2 >= 0, y2, fnp.zeros_like(y2))
    classes = fnp.arange(n_classes).reshape((1, 1, -1))
    hit = (yc[:, :, None] == classes).astype(x2.dtype) * valid[:, :, None]
    is_target = fnp.max(hit, axis=1)  # (N, C): 1 for the labelled classes
    xj = fnp.take_along_axis(x2, yc, axis=1)  # (N, C): score of each listed label
    z = _hinge(1.0 - xj[:, :, None] + x2[:, None, :])  # (N, label j, class i)
    z = z * valid[:, :, None] * (1.0 - is_target)[:, None, :]
    loss = fnp.sum(z, axis=(1, 2)) / n_classes
    loss = loss.reshape(() if x.ndim <= 1 else (x2.shape[0],))
    return _reduce(loss, reduction)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-label hinge loss: for each listed label ``j`` (``target`` holds class indices,
    ended by the first ``-1``) and each unlisted class ``i``, ``max(0, 1 - (x[j] - x[i]))``,
    summed and divided by the number of classes."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_input(input)
    ok = input.dim() <= 1 and target.dim() <= 1 and target.numel() == input.numel()
    if not ok and tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _check_long(target)
    n_classes = input.numel() if input.dim() <= 1 else input.shape[1]
    values = known_value(target)
    if values is not None and ((values < -1) | (values >= n_classes)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    static = (("reduction", reduction),)
    return apply(_multilabel_margin_f, "MultilabelMarginLossBackward0", (input, target), static)
