"""``optim.ASGD`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _rules
from compat.torch.optim._elementwise import (
    ElementwiseOptimizer,
    check_lr,
    check_nonnegative,
    flags,
    scalar_state,
)

__all__ = ["ASGD"]


class ASGD(ElementwiseOptimizer):
    """Averaged SGD: per parameter with a gradient ``g``, after ``step += 1``.

    ``g = -g`` if ``maximize``; ``g += weight_decay * p``; ``p *= 1 - lambd *
    eta``; ``p -= eta * g``; ``ax = p`` while ``mu == 1``, else ``ax += (p -
    ax) * mu``; then ``eta = lr / (1 + lambd * lr * step) ** alpha`` and ``mu
    = 1 / max(1, step - t0)``. State: ``step``, ``eta``, ``mu`` (float32
    scalars, as PyTorch's) and ``ax``.

    ``foreach`` and ``capturable`` are accepted; ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.ASGD([w], lr=0.1, t0=2)
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.asgd
    _scalar_state = ("step", "eta", "mu")

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonnegative(weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
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
        state["eta"] = scalar_state(float(group["lr"]))
        state["mu"] = 1.0
        state["ax"] = torch.zeros_like(p)

    def _advance(self, group: dict[str, Any], state: dict[str, Any], p: Any) -> _rules.ASGDScalars:
        state["step"] += 1.0
        step = state["step"]
        lr = float(group["lr"])
        lambd = float(group["lambd"])
        eta, mu = state["eta"], state["mu"]
        scalars = _rules.ASGDScalars(
            decay=1 - lambd * eta,
            neg_eta=-eta,
            weight_decay=float(group["weight_decay"]),
            mu=mu,
            average=1.0 if mu != 1 else 0.0,
        )
        state["eta"] = scalar_state(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        state["mu"] = scalar_state(1 / max(1, step - group["t0"]))
        return scalars
