"""Fused ``nn.functional`` ops: one compat op (one graph node, one XLA call) each.

``nn.functional`` is written against the public Tensor API, where a loss like
``cross_entropy`` is several eager ops (log-softmax, one-hot, product, sums),
each a dispatch and a node of the recorded graph. Through compat's op-definition
hook — ``compat._core.tensor.apply(fn, name, args, static)``, which traces a pure
``funcgrad.numpy`` function of arrays once per input avals and differentiates it
with funcgrad's VJP — these functions are single ops instead. Results are the
same: tests run both paths, ``set_enabled(False)`` selecting the composite one
(every function then returns ``None`` and its caller falls back to the composite
definition).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import funcgrad.lax as flax
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
from compat._core.ops.linalg import _linear_f
from compat._core.tensor import apply as _op

__all__ = [
    "bce_with_logits",
    "cross_entropy",
    "enabled",
    "gelu",
    "linear",
    "mse_loss",
    "scaled_mask_mul",
    "set_enabled",
    "silu",
]

_enabled = True


def set_enabled(flag: bool) -> bool:
    """Turn the fused path on or off (for tests); returns the previous setting."""
    global _enabled
    previous, _enabled = _enabled, bool(flag)
    return previous


def _apply() -> Callable[..., Any] | None:
    """compat's op-definition hook (``compat._core.tensor.apply``), or ``None`` when the
    fused path is switched off."""
    return _op if _enabled else None


def enabled() -> bool:
    """Whether fused ops are in use (the hook exists and was not switched off)."""
    return _apply() is not None


# ---------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------


def linear(input: Any, weight: Any, bias: Any) -> Any | None:
    apply = _apply()
    if apply is None:
        return None
    args = (input, weight) if bias is None else (input, weight, bias)
    return apply(_linear_f, "AddmmBackward0" if bias is not None else "MmBackward0", args)


# ---------------------------------------------------------------------------
# cross entropy / nll with class-index targets
# ---------------------------------------------------------------------------


def _nll_f(
    x: Any,
    target: Any,
    *weight: Any,
    class_dim: int,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
    from_logits: bool,
) -> Any:

    logp = fnn.log_softmax(x, axis=class_dim) if from_logits else x
    n_classes = x.shape[class_dim]
    shape = [1] * x.ndim
    shape[class_dim] = n_classes
    t = fnp.expand_dims(target, class_dim)
    valid = t != ignore_index
    classes = fnp.arange(n_classes).reshape(shape)
    hit = fnp.logical_and(t == classes, valid).astype(logp.dtype)
    w = weight[0].astype(logp.dtype).reshape(shape) if weight else None
    picked = hit * w if w is not None else hit
    nll = -fnp.sum(logp * picked, axis=class_dim)
    eps = label_smoothing
    if eps:
        per_class = logp * w if w is not None else logp
        smooth = -fnp.sum(per_class, axis=class_dim) * fnp.squeeze(valid, class_dim).astype(
            logp.dtype
        )
    if reduction == "none":
        return nll if not eps else nll * (1.0 - eps) + smooth * (eps / n_classes)
    if reduction == "sum":
        total = fnp.sum(nll)
        return total if not eps else total * (1.0 - eps) + fnp.sum(smooth) * (eps / n_classes)
    denom = fnp.sum(picked)
    mean = fnp.sum(nll) / denom
    if not eps:
        return mean
    return mean * (1.0 - eps) + (fnp.sum(smooth) / denom) * (eps / n_classes)


def cross_entropy(
    input: Any,
    target: Any,
    weight: Any,
    class_dim: int,
    ignore_index: int,
    reduction: str,
    label_smoothing: float,
    from_logits: bool,
) -> Any | None:
    """Log-softmax (if ``from_logits``) + NLL + smoothing + reduction as one op."""
    apply = _apply()
    if apply is None:
        return None
    args = (input, target) if weight is None else (input, target, weight)
    static = (
        ("class_dim", class_dim),
        ("ignore_index", int(ignore_index)),
        ("reduction", reduction),
        ("label_smoothing", float(label_smoothing)),
        ("from_logits", bool(from_logits)),
    )
    return apply(_nll_f, "NllLossBackward0", args, static)


# ---------------------------------------------------------------------------
# mse, dropout
# ---------------------------------------------------------------------------


def _mse_f(x: Any, y: Any, *w: Any, reduction: str) -> Any:

    d = x - y
    loss = d * d
    if w:
        loss = loss * w[0]
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    return loss


def mse_loss(input: Any, target: Any, weight: Any, reduction: str) -> Any | None:
    apply = _apply()
    if apply is None:
        return None
    args = (input, target) if weight is None else (input, target, weight)
    return apply(_mse_f, "MseLossBackward0", args, (("reduction", reduction),))


def _bce_logits_f(x: Any, y: Any, *rest: Any, reduction: str, pos: bool, weighted: bool) -> Any:

    # (1 - y) x - log(sigmoid(x)) [times (pos_weight - 1) y + 1]: log_sigmoid's
    # derivative is sigmoid(-x) everywhere, so x = 0 gets sigmoid(0) - y as PyTorch's
    log_weight = (rest[0] - 1.0) * y + 1.0 if pos else 1.0
    loss = (1.0 - y) * x - log_weight * fnn.log_sigmoid(x)
    if weighted:
        loss = loss * rest[-1]
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    return loss


def bce_with_logits(
    input: Any, target: Any, weight: Any, pos_weight: Any, reduction: str
) -> Any | None:
    """``binary_cross_entropy_with_logits`` as one op (PyTorch's single node)."""
    apply = _apply()
    if apply is None:
        return None
    extra = tuple(t for t in (pos_weight, weight) if t is not None)
    static = (
        ("reduction", reduction),
        ("pos", pos_weight is not None),
        ("weighted", weight is not None),
    )
    return apply(
        _bce_logits_f, "BinaryCrossEntropyWithLogitsBackward0", (input, target, *extra), static
    )


# ---------------------------------------------------------------------------
# activations PyTorch computes in one kernel
# ---------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def opmath(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` of a float16/bfloat16 ``x`` computed in float32 and rounded once, as PyTorch's
    CPU kernels compute activations ("opmath"); the derivative follows the casts."""

    def g(x: Any, *args: Any, **kw: Any) -> Any:
        if fnp.dtype(x.dtype).itemsize == 2 and fnp.issubdtype(x.dtype, fnp.floating):
            return f(x.astype(fnp.float32), *args, **kw).astype(x.dtype)
        return f(x, *args, **kw)

    return g


@opmath
def _gelu_f(x: Any, *, tanh: bool) -> Any:
    # the composite definition's operations in its order, so both paths agree
    if tanh:
        return 0.5 * x * (1.0 + fnp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + flax.erf(x * _INV_SQRT_2))


def gelu(input: Any, approximate: str) -> Any | None:
    """``gelu`` as one op (PyTorch's ``GeluBackward0``) for a floating ``input``."""
    apply = _apply()
    if apply is None or not input.is_floating_point():
        return None
    return apply(_gelu_f, "GeluBackward0", (input,), (("tanh", approximate == "tanh"),))


@opmath
def _silu_f(x: Any) -> Any:
    return x * fnn.sigmoid(x)


def silu(input: Any) -> Any | None:
    """``silu`` as one op (PyTorch's ``SiluBackward0``) for a floating ``input``."""
    apply = _apply()
    if apply is None or not input.is_floating_point():
        return None
    return apply(_silu_f, "SiluBackward0", (input,))


def _dropout_f(x: Any, u: Any, *, keep: float) -> Any:

    scale = 1.0 / keep
    return fnp.where(u < keep, x * scale, fnp.zeros_like(x))


def scaled_mask_mul(input: Any, draws: Any, keep: float) -> Any | None:
    """``input * (draws < keep) / keep`` as one op (``draws`` uniform on [0, 1)); its node
    is PyTorch's on a CPU, ``MulBackward0`` (the fused ``native_dropout`` kernel is CUDA's)."""
    apply = _apply()
    if apply is None or not math.isfinite(1.0 / keep):
        return None
    return apply(_dropout_f, "MulBackward0", (input, draws), (("keep", float(keep)),))
