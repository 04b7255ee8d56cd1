"""``optim.RAdam`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

from compat.torch.optim import _rules
from compat.torch.optim._elementwise import check_flags
from compat.torch.optim.adamax import check_betas, moment_state
from compat.torch.optim.nadam import MomentOptimizer

__all__ = ["RAdam"]


class RAdam(MomentOptimizer):
    """RAdam (rectified Adam): Adam's moments with a variance rectification term.

    Per parameter with a gradient ``g``, after ``step += 1``: weight decay as in
    NAdam; ``m = lerp(m, g, 1 - beta1)``; ``v = beta2 * v + (1 - beta2) * g *
    g``; ``rho_inf = 2 / (1 - beta2) - 1``; ``rho_t = rho_inf - 2 * step *
    beta2**step / (1 - beta2**step)``; if ``rho_t > 5``: ``p -= m / (1 -
    beta1**step) * lr * sqrt(1 - beta2**step) / (sqrt(v) + eps) * rect`` with
    ``rect = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2)
    rho_t))``, else ``p -= m / (1 - beta1**step) * lr``. State: ``step``,
    ``exp_avg``, ``exp_avg_sq``.

    ``foreach`` and ``capturable`` are accepted; ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.RAdam([w], decoupled_weight_decay=True, weight_decay=0.01)
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.radam

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_betas(lr, eps, betas, weight_decay)
        check_flags(differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        moment_state(p, state, "exp_avg_sq")

    def _advance(self, group: dict[str, Any], state: dict[str, Any], p: Any) -> _rules.RAdamScalars:
        state["step"] += 1.0
        step = state["step"]
        lr = float(group["lr"])
        wd = float(group["weight_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        bias_correction2 = 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        rectified = rho_t > 5.0
        rect = 0.0
        if rectified:
            num = (rho_t - 4) * (rho_t - 2) * rho_inf
            rect = (num / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        _, w, w_c = _rules.lerp_weights(1.0 - beta1, p.dtype)
        return _rules.RAdamScalars(
            lerp_w=w,
            lerp_w_c=w_c,
            beta2=beta2,
            one_minus_beta2=1.0 - beta2,
            eps=float(group["eps"]),
            weight_decay=wd,
            decay=1 - lr * wd,
            bias_correction1=1 - beta1**step,
            lr=lr,
            bias_correction2_sqrt=bias_correction2**0.5,
            rect=rect,
            rectified=1.0 if rectified else 0.0,
        )
