"""The optimizers' update rules as pure functions, shared by both execution paths.

Each rule maps one parameter's ``(param, grad, state...)`` to new values with
operators and two elementwise helpers (``sqrt``, ``maximum``) taken from an
``ops`` namespace, so the same code runs

* on compat Tensors under ``torch.no_grad()`` (the per-tensor path), and
* on arrays inside one ``funcgrad.jit``-compiled function per parameter group
  (the compiled path; see ``compat.torch.optim._compiled``).

The arithmetic replays PyTorch's single-tensor CPU kernels operation by
operation (``torch/optim/sgd.py``, ``torch/optim/adam.py``): ``add(x, alpha=a)``
is ``self + a * x``, ``lerp_(end, w)`` is ``self + w * (end - self)`` for
``w < 0.5`` and ``end - (end - self) * (1 - w)`` otherwise, ``addcmul_(a, b,
value=v)`` is ``self + v * a * b`` and ``addcdiv_(a, b, value=v)`` is
``self + v * a / b``. Python-side scalars (bias corrections, ``1 - lr * wd``)
are computed in double precision like PyTorch's and rounded once to the
parameter dtype.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from compat.torch.optim._rules import lerp, lerp_weights, moment_grad

__all__ = [
    "AdamConfig",
    "AdamScalars",
    "SGDConfig",
    "SGDScalars",
    "adam_scalars",
    "adam_update",
    "hyper",
    "sgd_scalars",
    "sgd_update",
]


def hyper(value: Any, group: dict[str, Any]) -> Any:
    """A hyperparameter as the update consumes it: a Python float, or, in a differentiable
    group, a Tensor that requires grad kept (squeezed to 0-d), so gradients flow into it as
    into PyTorch's Tensor ``lr``."""
    if group.get("differentiable") and getattr(value, "requires_grad", False):
        return value.squeeze() if value.dim() else value
    return float(value)


# ---------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SGDConfig:
    """Static (hashable) choices of an SGD group: they select the program, not its inputs."""

    momentum: bool  # momentum != 0
    weight_decay: bool  # weight_decay != 0
    nesterov: bool
    maximize: bool
    #: dampening != 0 (without it the gradient joins the buffer as it is: one pass less)
    dampening: bool = True


class SGDScalars(NamedTuple):
    neg_lr: Any
    weight_decay: Any
    momentum: Any
    one_minus_dampening: Any


def sgd_scalars(group: dict[str, Any]) -> SGDScalars:
    """The group's hyperparameters in the form the update consumes (Python floats)."""
    return SGDScalars(
        neg_lr=-hyper(group["lr"], group),
        weight_decay=hyper(group["weight_decay"], group),
        momentum=float(group["momentum"]),
        one_minus_dampening=1.0 - float(group["dampening"]),
    )


def sgd_update(
    cfg: SGDConfig,
    s: SGDScalars,
    param: Any,
    grad: Any,
    buf: Any | None,
    first: Any = None,
) -> tuple[Any, Any | None]:
    """One SGD step for one parameter; returns ``(new_param, new_momentum_buffer)``.

    ``buf is None`` marks the first step with momentum: the buffer starts as
    the gradient itself (no dampening), as in PyTorch, or as ``first(gradient)``
    where given (PyTorch's differentiable step detaches it).
    """
    g = -grad if cfg.maximize else grad
    if cfg.weight_decay:
        g = g + s.weight_decay * param
    new_buf = None
    if cfg.momentum:
        if buf is None:
            new_buf = g if first is None else first(g)
        else:
            new_buf = buf * s.momentum + (s.one_minus_dampening * g if cfg.dampening else g)
        g = g + s.momentum * new_buf if cfg.nesterov else new_buf
    return param + s.neg_lr * g, new_buf


# ---------------------------------------------------------------------------
# Adam / AdamW
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AdamConfig:
    """Static choices of an Adam/AdamW group."""

    amsgrad: bool
    maximize: bool
    weight_decay: bool  # weight_decay != 0
    decoupled: bool  # AdamW: decay the parameter, not the gradient
    lerp_high: bool  # 1 - beta1 >= 0.5: PyTorch's lerp takes its second formula


class AdamScalars(NamedTuple):
    lerp_w: Any  # 1 - beta1
    lerp_w_c: Any  # 1 - (1 - beta1), for the high-weight lerp formula
    beta2: Any
    one_minus_beta2: Any
    eps: Any
    weight_decay: Any  # coupled decay: grad + wd * param
    decay: Any  # decoupled decay: param * (1 - lr * wd)
    neg_step_size: Any  # -lr / (1 - beta1 ** step)   (per parameter)
    bias_correction2_sqrt: Any  # sqrt(1 - beta2 ** step)  (per parameter)


def adam_config(group: dict[str, Any]) -> AdamConfig:
    beta1 = float(group["betas"][0])
    return AdamConfig(
        amsgrad=bool(group["amsgrad"]),
        maximize=bool(group["maximize"]),
        weight_decay=float(group["weight_decay"]) != 0,
        decoupled=bool(group.get("decoupled_weight_decay", False)),
        lerp_high=abs(1.0 - beta1) >= 0.5,
    )


def adam_scalars(group: dict[str, Any], step: float, dtype: Any = None) -> AdamScalars:
    """Hyperparameters after ``step`` steps (``step`` already incremented), in Python floats.

    ``dtype`` is the parameter's: it decides the precision of ``lerp``'s ``1 - w``.
    """
    lr = hyper(group["lr"], group)
    beta1, beta2 = (float(b) for b in group["betas"])
    wd = hyper(group["weight_decay"], group)
    _, lerp_w, lerp_w_c = lerp_weights(1.0 - beta1, dtype)
    return AdamScalars(
        lerp_w=lerp_w,
        lerp_w_c=lerp_w_c,
        beta2=beta2,
        one_minus_beta2=1.0 - beta2,
        eps=float(group["eps"]),
        weight_decay=wd,
        decay=1.0 - lr * wd,
        neg_step_size=-(lr / (1.0 - beta1**step)),
        bias_correction2_sqrt=(1.0 - beta2**step) ** 0.5,
    )


def adam_update(
    cfg: AdamConfig,
    s: AdamScalars,
    ops: Any,
    param: Any,
    grad: Any,
    exp_avg: Any,
    exp_avg_sq: Any,
    max_exp_avg_sq: Any | None,
) -> tuple[Any, Any, Any, Any | None]:
    """One Adam (or AdamW) step for one parameter.

    Returns ``(param, exp_avg, exp_avg_sq, max_exp_avg_sq)``; the last is
    ``None`` unless ``amsgrad``.
    """
    param, g = moment_grad(cfg, s, param, grad)
    m = lerp(cfg.lerp_high, exp_avg, g, s.lerp_w, s.lerp_w_c)
    v = exp_avg_sq * s.beta2 + s.one_minus_beta2 * g * g
    if cfg.amsgrad:
        max_exp_avg_sq = ops.maximum(max_exp_avg_sq, v)
        denom = ops.sqrt(max_exp_avg_sq) / s.bias_correction2_sqrt + s.eps
    else:
        denom = ops.sqrt(v) / s.bias_correction2_sqrt + s.eps
    param = param + s.neg_step_size * m / denom
    return param, m, v, max_exp_avg_sq if cfg.amsgrad else None
