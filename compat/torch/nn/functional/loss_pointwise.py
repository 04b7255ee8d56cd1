"""``nn.functional`` elementwise losses: BCE, smooth L1, Huber, KL divergence, Poisson and
Gaussian NLL, soft margin and multilabel soft margin.

Each loss is one compat op (a pure ``funcgrad.numpy`` function of the arrays, differentiated
by funcgrad's VJP) for the elementwise term, then the usual ``'mean'``/``'sum'``/``'none'``
reduction. Where PyTorch's hand-written backward differs from the derivative of its forward
(BCE's ``eps`` clamp, Gaussian NLL's ``no_grad`` clamp of ``var``) the same rule is used here.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad
import funcgrad.lax as flax
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._reduction import _apply_reduction, _resolve_reduction
from compat.torch.nn.functional._targets import _size

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _as_tensor_like(value: Any, like: Tensor) -> Tensor:
    if isinstance(value, torch.Tensor):
        return value
    return torch.full(tuple(like.shape), float(value), dtype=like.dtype, device=like.device)


# --- binary cross entropy ------------------------------------------------------------------


@funcgrad.custom_vjp
def _bce_core(x: Any, t: Any) -> Any:
    log_x = fnp.maximum(fnp.log(x), -100.0)
    log_1mx = fnp.maximum(fnp.log1p(-x), -100.0)
    return (t - 1.0) * log_1mx - t * log_x


def _bce_fwd(x: Any, t: Any) -> tuple[Any, tuple[Any, Any]]:
    return _bce_core(x, t), (x, t)


def _bce_bwd(res: tuple[Any, Any], g: Any) -> tuple[Any, Any]:
    # PyTorch's rule: (x - t) / max(x (1 - x), 1e-12), finite even where x is 0 or 1;
    x, t = res
    gx = g * (x - t) / fnp.maximum((1.0 - x) * x, 1e-12)
    gt = g * (fnp.log1p(-x) - fnp.log(x))  # PyTorch does not clamp here
    return gx, gt


_bce_core.defvjp(_bce_fwd, _bce_bwd)


def _bce_f(x: Any, t: Any, *w: Any) -> Any:
    loss = _bce_core(x, t)
    return loss * w[0] if w else loss


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross entropy of probabilities ``input`` against ``target``; each log is
    clamped at ``-100`` (so a probability of exactly 0 or 1 gives a finite loss), as PyTorch."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}) is deprecated. Please ensure they have the same size."
        )
    if input.numel() and not bool(((input >= 0) & (input <= 1)).all()):  # NaN fails too
        raise RuntimeError("all elements of input should be between 0 and 1")
    args = (input, target) if weight is None else (input, target, weight)
    return _apply_reduction(apply(_bce_f, "BinaryCrossEntropyBackward0", args), reduction)


# --- smooth L1 / Huber ---------------------------------------------------------------------


def _reduced(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    return loss


def _smooth_l1_f(x: Any, t: Any, *, beta: float, reduction: str = "none") -> Any:
    d = x - t
    a = fnp.abs(d)
    if beta == 0.0:
        return a
    return _reduced(fnp.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta), reduction)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d² / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere (``d = input - target``);
    ``beta=0`` is the L1 loss."""
    _warn_size(input, target)
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        loss = apply(_smooth_l1_f, "SmoothL1LossBackward0", (input, target), (("beta", 0.0),))
        return _apply_reduction(loss, reduction)
    # one op with its reduction, PyTorch's single SmoothL1LossBackward0 node
    static = (("beta", float(beta)), ("reduction", reduction))
    return apply(_smooth_l1_f, "SmoothL1LossBackward0", (input, target), static)


def _huber_f(x: Any, t: Any, *w: Any, delta: float, reduction: str = "none") -> Any:
    d = x - t
    a = fnp.abs(d)
    loss = fnp.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
    return _reduced(loss * w[0] if w else loss, reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d²`` where ``|d| < delta``, ``delta (|d| - 0.5 delta)`` elsewhere; optional
    elementwise ``weight`` of ``input``'s shape."""
    _warn_size(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    args: tuple = (input, target)
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        args = (input, target, weight)
    # one op with its reduction, PyTorch's single HuberLossBackward0 node
    return apply(
        _huber_f, "HuberLossBackward0", args, (("delta", float(delta)), ("reduction", reduction))
    )


# --- KL divergence -------------------------------------------------------------------------


def _kl_f(x: Any, t: Any, *, log_target: bool) -> Any:
    if log_target:
        return fnp.exp(t) * (t - x)
    # xlogy(t, t) - t * x, as PyTorch's: 0 where t is 0, NaN where it is negative
    nz = t != 0
    safe = fnp.where(nz, t, fnp.ones_like(t))
    return fnp.where(nz, t * fnp.log(safe), fnp.zeros_like(t)) - t * x


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Pointwise KL divergence ``target * (log(target) - input)`` of log-probabilities
    ``input`` (``target`` given as log-probabilities too with ``log_target=True``).

    ``reduction='batchmean'`` divides the sum by the batch size (the KL divergence's
    definition); ``'mean'`` divides by the element count and warns, as PyTorch.
    """
    if size_average is not None or reduce is not None:
        reduction = _resolve_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    if reduction not in (*_REDUCTIONS, "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    loss = apply(_kl_f, "KlDivBackward0", (input, target), (("log_target", bool(log_target)),))
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() != 0 else total
    return _apply_reduction(loss, reduction)


# --- Poisson / Gaussian NLL ----------------------------------------------------------------


def _poisson_f(x: Any, t: Any, *, log_input: bool, full: bool, eps: float) -> Any:
    loss = fnp.exp(x) - t * x if log_input else x - t * fnp.log(x + eps)
    if full:
        big = t > 1
        ts = fnp.where(big, t, fnp.ones_like(t))
        stirling = ts * fnp.log(ts) - ts + 0.5 * fnp.log(2.0 * math.pi * ts)
        loss = loss + fnp.where(big, stirling, fnp.zeros_like(stirling))
    return loss


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term where ``target > 1``."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    static = (("log_input", bool(log_input)), ("full", bool(full)), ("eps", float(eps)))
    loss = apply(_poisson_f, "PoissonNllLossBackward0", (input, target), static)
    return _apply_reduction(loss, reduction)


def _gaussian_f(x: Any, t: Any, v: Any, *, eps: float, full: bool) -> Any:
    # the clamp is applied without gradient (PyTorch clamps a clone under no_grad)
    vc = v + flax.stop_gradient(fnp.maximum(v, eps) - v)
    loss = 0.5 * (fnp.log(vc) + (x - t) ** 2 / vc)
    return loss + 0.5 * math.log(2 * math.pi) if full else loss


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log likelihood ``0.5 (log var + (input - target)² / var)``.

    ``var`` has ``input``'s shape, or one dimension fewer, or one broadcast dimension of
    size 1, or is a float; it is clamped at ``eps`` without changing its gradient.
    """
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _as_tensor_like(var, input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    in_shape, v_shape = tuple(input.shape), tuple(var.shape)
    if v_shape != in_shape:
        if in_shape[:-1] == v_shape:
            var = var.unsqueeze(-1)
        elif not (
            len(in_shape) == len(v_shape)
            and sum(b for a, b in zip(in_shape, v_shape) if a != b) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    static = (("eps", float(eps)), ("full", bool(full)))
    loss = apply(_gaussian_f, "GaussianNllLossBackward0", (input, target, var), static)
    return _apply_reduction(loss, reduction)


# --- soft margin ---------------------------------------------------------------------------


def _soft_margin_f(x: Any, y: Any) -> Any:
    return fnp.log1p(fnp.exp(-x * y))


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-target * input))`` with targets ±1; a
    ``target`` requiring grad is PyTorch's error (its kernel has no derivative for it)."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.requires_grad and torch.is_grad_enabled():
        raise RuntimeError(
            "The function 'soft_margin_loss' is not differentiable with respect to argument "
            "'target'. This input cannot have requires_grad True."
        )
    loss = apply(_soft_margin_f, "SoftMarginLossBackward0", (input, target))
    return _apply_reduction(loss, reduction)


def _multilabel_f(x: Any, y: Any, *w: Any) -> Any:
    loss = -(y * fnn.log_sigmoid(x) + (1.0 - y) * fnn.log_sigmoid(-x))
    if w:
        loss = loss * w[0]
    return fnp.sum(loss, axis=-1) / np.asarray(x.shape[-1], dtype=loss.dtype)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """One-versus-all logistic loss over the last (class) dimension, averaged over classes."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    args = (input, target) if weight is None else (input, target, weight)
    loss = apply(_multilabel_f, "MultilabelSoftMarginLossBackward0", args)
    return _apply_reduction(loss, reduction)
