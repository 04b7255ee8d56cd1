"""``optim.NAdam`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _rules
from compat.torch.optim._elementwise import (
    ElementwiseOptimizer,
    check_flags,
    check_nonnegative,
    hyper,
    scalar_state,
)
from compat.torch.optim.adamax import check_betas, moment_config, moment_state

__all__ = ["MomentOptimizer", "NAdam"]


class MomentOptimizer(ElementwiseOptimizer):
    """Shared group setup of NAdam and RAdam (decoupled weight decay option)."""

    #: group options a pickled optimizer may lack, and their defaults
    _state_defaults = {
        "foreach": None,
        "maximize": False,
        "capturable": False,
        "differentiable": False,
        "decoupled_weight_decay": False,
    }

    def _config(self, group: dict[str, Any]) -> _rules.MomentConfig:
        return moment_config(group)


class NAdam(MomentOptimizer):
    """NAdam (Adam with Nesterov momentum and a momentum-decay schedule).

    Per parameter with a gradient ``g``, after ``step += 1``: ``mu = beta1 * (1
    - 0.5 * 0.96 ** (step * momentum_decay))`` (``mu_next`` likewise at ``step
    + 1``), ``mu_product *= mu`` (a float32 scalar, as PyTorch's); weight decay
    on the gradient, or with ``decoupled_weight_decay`` ``p *= 1 - lr *
    weight_decay``; ``m = lerp(m, g, 1 - beta1)``; ``v = beta2 * v + (1 -
    beta2) * g * g``; ``denom = sqrt(v / (1 - beta2**step)) + eps``; ``p -= lr
    * (1 - mu) / (1 - mu_product) * g / denom``; ``p -= lr * mu_next / (1 -
    mu_product * mu_next) * m / denom``. State: ``step``, ``mu_product``,
    ``exp_avg``, ``exp_avg_sq``.

    ``foreach`` and ``capturable`` are accepted; ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.NAdam([w])
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.nadam
    _scalar_state = ("step", "mu_product")

    def __init__(
        self,
        params: Any,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_betas(lr, eps, betas, weight_decay)
        check_nonnegative(momentum_decay=momentum_decay)
        check_flags(differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        state["step"] = 0.0
        state["mu_product"] = 1.0
        moment_state(p, state, "exp_avg_sq")

    def _advance(self, group: dict[str, Any], state: dict[str, Any], p: Any) -> _rules.NAdamScalars:
        state["step"] += 1.0
        step = state["step"]
        lr = hyper(group["lr"], group)
        wd = float(group["weight_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        decay_rate = float(group["momentum_decay"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay_rate)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay_rate)))
        mu_product = state["mu_product"]
        if isinstance(mu_product, torch.Tensor):
            # a differentiable group's mu_product that requires grad: PyTorch's in-place
            # product, recorded (gradients flow through it into the step's coefficients)
            mu_product.mul_(mu)
        else:
            # PyTorch keeps mu_product in a scalar-state tensor (float32 unless the default
            # dtype is float64): the product is rounded each step.
            mu_product = scalar_state(scalar_state(mu_product) * scalar_state(mu))
            state["mu_product"] = mu_product
        _, w, w_c = _rules.lerp_weights(1.0 - beta1, p.dtype)
        return _rules.NAdamScalars(
            lerp_w=w,
            lerp_w_c=w_c,
            beta2=beta2,
            one_minus_beta2=1.0 - beta2,
            eps=float(group["eps"]),
            weight_decay=wd,
            decay=1 - lr * wd,
            bias_correction2=1 - beta2**step,
            grad_coef=-lr * (1.0 - mu) / (1.0 - mu_product),
            avg_coef=(-lr * mu_next) / (1.0 - mu_product * mu_next),
        )
