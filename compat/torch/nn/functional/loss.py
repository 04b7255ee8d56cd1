"""``nn.functional`` losses: MSE, L1, BCE with logits, NLL and cross entropy."""

from __future__ import annotations

import warnings

import compat.torch as torch
from compat.torch.nn import _fused
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _is_floating, _to_dtype
from compat.torch.nn.functional._reduction import _apply_reduction, _resolve_reduction
from compat.torch.nn.functional._targets import (
    _check_class_target_shape,
    _check_class_weight,
    _check_targets,
    _class_dim,
    _class_mask,
    _size,
)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(input - target) ** 2``, reduced as ``reduction`` says."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    fused = _fused.mse_loss(input, target, weight, reduction)
    if fused is not None:
        return fused
    diff = input - target
    loss = diff * diff
    if weight is not None:
        loss = loss * weight
    return _apply_reduction(loss, reduction)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error ``|input - target|``; with an elementwise ``weight`` (of
    ``input``'s shape) ``'mean'`` divides the weighted sum by ``weight.sum()``."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if weight is None:
        return _apply_reduction((input - target).abs(), reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = (input - target).abs() * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    if reduction not in ("sum", "none"):
        raise ValueError(
            f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
        )
    return _apply_reduction(loss, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid + binary cross entropy in one stable formula."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({_size(target)}) must be the same as input size ({_size(input)})"
        )
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    for arg, what in ((weight, "weight"), (pos_weight, "pos_weight")):
        if arg is not None and arg.requires_grad and torch.is_grad_enabled():
            raise RuntimeError(
                "The function 'binary_cross_entropy_with_logits' is not differentiable with "
                f"respect to argument '{what}'. This input cannot have requires_grad True."
            )
    fused = _fused.bce_with_logits(input, target, weight, pos_weight, reduction)
    if fused is not None:
        return fused
    # -log(sigmoid(x)), whose derivative at 0 is PyTorch's -1/2 (a formula with |x| or
    # relu would take their derivatives' 0 at the kink)
    log_sig_neg = -torch.nn.functional.logsigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1.0) * target + 1.0
        loss = (1.0 - target) * input + log_weight * log_sig_neg
    else:
        loss = (1.0 - target) * input + log_sig_neg
    if weight is not None:
        loss = loss * weight
    return _apply_reduction(loss, reduction)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of class-index ``target`` under log-probabilities ``input``.

    ``input`` is ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``; targets equal to
    ``ignore_index`` contribute nothing, and ``'mean'`` divides by the summed
    weight of the other targets (their count without ``weight``).
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    class_dim = _class_dim(input)
    n_classes = input.shape[class_dim]
    _check_class_target_shape(input, target, class_dim)
    _check_class_weight(weight, n_classes)
    n_valid = _check_targets(target, n_classes, ignore_index)
    fused = _fused.cross_entropy(
        input, target, weight, class_dim, ignore_index, reduction, 0.0, from_logits=False
    )
    if fused is not None:
        return fused
    mask = _class_mask(target, n_classes, class_dim, input.dim(), input.dtype, ignore_index)
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        mask = mask * weight.reshape(shape)
    picked = (input * mask).sum(class_dim)
    if reduction == "none":
        return -picked
    if reduction == "sum":
        return -picked.sum()
    if weight is None and n_valid is not None:
        return picked.sum() * (-1.0 / n_valid) if n_valid else picked.sum() * float("nan")
    return -picked.sum() / mask.sum()


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between logits ``input`` and ``target``.

    ``target`` holds class indices (an integer tensor of ``input``'s shape
    without the class dimension) or class probabilities (a floating tensor of
    ``input``'s shape). ``label_smoothing`` mixes the target with the uniform
    distribution, as PyTorch does.
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = _class_dim(input)
    n_classes = input.shape[class_dim]
    _check_class_weight(weight, n_classes, "cross_entropy: " if _is_floating(target) else "")
    w_shape = [1] * input.dim()
    w_shape[class_dim] = n_classes
    w = weight.reshape(w_shape) if weight is not None else None

    if _is_floating(target):  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(
                "Expected floating point target to have the same shape as input: "
                f"target {list(target.shape)}, input {list(input.shape)}"
            )
        if label_smoothing > 0.0:
            target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
        prod = input.log_softmax(class_dim) * target
        if w is not None:
            prod = prod * w
        per_sample = -prod.sum(class_dim)
        if reduction == "mean":
            n = (input.numel() // n_classes if n_classes else 0) if input.dim() > 1 else 1
            return per_sample.sum() * (1.0 / n) if n else per_sample.sum() / 0.0  # NaN
        return _apply_reduction(per_sample, reduction)

    _check_class_target_shape(input, target, class_dim)
    _check_targets(target, n_classes, ignore_index)
    fused = _fused.cross_entropy(
        input, target, weight, class_dim, ignore_index, reduction, label_smoothing, True
    )
    if fused is not None:
        return fused
    logp = input.log_softmax(class_dim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    # Smoothing term: the (weighted) mean over classes of -log p, ignored targets zeroed.
    smooth = -(logp * w).sum(class_dim) if w is not None else -logp.sum(class_dim)
    valid = _to_dtype(target != ignore_index, input.dtype)
    smooth = smooth * valid
    if reduction == "mean":
        if w is not None:
            mask = _class_mask(target, n_classes, class_dim, input.dim(), input.dtype, ignore_index)
            smooth = smooth.sum() / (mask * w).sum()
        else:
            smooth = smooth.sum() / valid.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / n_classes)
