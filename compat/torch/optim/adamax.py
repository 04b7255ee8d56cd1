"""``optim.Adamax`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _rules
from compat.torch.optim._elementwise import ElementwiseOptimizer, check_lr, check_nonnegative, flags

__all__ = ["Adamax", "check_betas"]


def check_betas(lr: Any, eps: float, betas: tuple[float, float], weight_decay: float) -> None:
    """The Adam family's argument checks, in PyTorch's order and wording."""
    check_lr(lr)
    check_nonnegative(epsilon=eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    check_nonnegative(weight_decay=weight_decay)


def moment_config(group: dict[str, Any]) -> _rules.MomentConfig:
    """Static choices of an Adamax/NAdam/RAdam group."""
    return _rules.MomentConfig(
        maximize=bool(group["maximize"]),
        weight_decay=group["weight_decay"] != 0,
        decoupled=bool(group.get("decoupled_weight_decay", False)),
        lerp_high=_rules.lerp_weights(1.0 - float(group["betas"][0]))[0],
    )


def moment_state(p: Any, state: dict[str, Any], second: str) -> None:
    state["step"] = 0.0
    state["exp_avg"] = torch.zeros_like(p)
    state[second] = torch.zeros_like(p)


class Adamax(ElementwiseOptimizer):
    """Adamax (Adam with the infinity norm): per parameter with a gradient ``g``.

    ``g = -g`` if ``maximize``; ``g += weight_decay * p``; ``m = lerp(m, g, 1 -
    beta1)``; ``u = max(beta2 * u, |g| + eps)``; ``p -= lr / (1 -
    beta1**step) * m / u``. State: ``step``, ``exp_avg``, ``exp_inf``.

    ``foreach`` and ``capturable`` are accepted; ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.Adamax([w])
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.adamax

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_betas(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            **flags(
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        }
        super().__init__(params, defaults)

    def _config(self, group: dict[str, Any]) -> _rules.MomentConfig:
        return moment_config(group)

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        moment_state(p, state, "exp_inf")

    def _advance(
        self, group: dict[str, Any], state: dict[str, Any], p: Any
    ) -> _rules.AdamaxScalars:
        state["step"] += 1.0
        beta1, beta2 = (float(b) for b in group["betas"])
        _, w, w_c = _rules.lerp_weights(1.0 - beta1, p.dtype)
        return _rules.AdamaxScalars(
            lerp_w=w,
            lerp_w_c=w_c,
            beta2=beta2,
            eps=float(group["eps"]),
            weight_decay=float(group["weight_decay"]),
            neg_clr=-(float(group["lr"]) / (1 - beta1 ** state["step"])),
        )
