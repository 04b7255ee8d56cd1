"""``optim.Adadelta`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _rules
from compat.torch.optim._elementwise import ElementwiseOptimizer, check_lr, check_nonnegative, flags

__all__ = ["Adadelta"]


class Adadelta(ElementwiseOptimizer):
    """Adadelta (Zeiler, 2012): per parameter with a gradient ``g``.

    ``g = -g`` if ``maximize``; ``g += weight_decay * p``; ``v = rho * v + (1 -
    rho) * g * g``; ``delta = sqrt(u + eps) / sqrt(v + eps) * g``; ``u = rho * u
    + (1 - rho) * delta * delta``; ``p -= lr * delta``. State: ``step``,
    ``square_avg`` (``v``), ``acc_delta`` (``u``).

    ``foreach`` and ``capturable`` are accepted (one compiled program per group
    either way); ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.Adadelta([w])
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.adadelta

    def __init__(
        self,
        params: Any,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
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

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        state["step"] = 0.0
        state["square_avg"] = torch.zeros_like(p)
        state["acc_delta"] = torch.zeros_like(p)

    def _advance(
        self, group: dict[str, Any], state: dict[str, Any], p: Any
    ) -> _rules.AdadeltaScalars:
        state["step"] += 1.0
        rho = float(group["rho"])
        return _rules.AdadeltaScalars(
            neg_lr=-float(group["lr"]),
            rho=rho,
            one_minus_rho=1.0 - rho,
            eps=float(group["eps"]),
            weight_decay=float(group["weight_decay"]),
        )
