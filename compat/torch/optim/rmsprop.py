"""``optim.RMSprop`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _rules
from compat.torch.optim._elementwise import (
    FLAGS,
    ElementwiseOptimizer,
    check_lr,
    check_nonnegative,
    flags,
)

__all__ = ["RMSprop"]


class RMSprop(ElementwiseOptimizer):
    """RMSprop: per parameter with a gradient ``g``.

    ``g = -g`` if ``maximize``; ``g += weight_decay * p``; ``v = alpha * v + (1
    - alpha) * g * g``; centered: ``ga = lerp(ga, g, 1 - alpha)`` and ``avg =
    sqrt(v - ga * ga) + eps``, else ``avg = sqrt(v) + eps``; with momentum
    ``buf = momentum * buf + g / avg`` and ``p -= lr * buf``, else ``p -= lr *
    g / avg``. State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum
    > 0), ``grad_avg`` (centered).

    ``foreach`` and ``capturable`` are accepted (PyTorch refuses
    ``capturable=True`` for CPU tensors at ``step``; compat runs it as usual);
    ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.RMSprop([w], lr=0.01, momentum=0.9, centered=True)
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.rmsprop

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonnegative(epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            **flags(
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        }
        super().__init__(params, defaults)

    #: group options a pickled optimizer may lack, and their defaults
    _state_defaults = {"momentum": 0, "centered": False, **FLAGS}

    def _config(self, group: dict[str, Any]) -> _rules.RMSpropConfig:
        return _rules.RMSpropConfig(
            maximize=bool(group["maximize"]),
            weight_decay=group["weight_decay"] != 0,
            momentum=group["momentum"] > 0,
            centered=bool(group["centered"]),
            lerp_high=_rules.lerp_weights(1.0 - float(group["alpha"]))[0],
        )

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        state["step"] = 0.0
        state["square_avg"] = torch.zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = torch.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = torch.zeros_like(p)

    def _advance(
        self, group: dict[str, Any], state: dict[str, Any], p: Any
    ) -> _rules.RMSpropScalars:
        state["step"] += 1.0
        alpha = float(group["alpha"])
        _, w, w_c = _rules.lerp_weights(1.0 - alpha, p.dtype)
        return _rules.RMSpropScalars(
            neg_lr=-float(group["lr"]),
            alpha=alpha,
            one_minus_alpha=w,
            lerp_w_c=w_c,
            eps=float(group["eps"]),
            weight_decay=float(group["weight_decay"]),
            momentum=float(group["momentum"]),
        )
