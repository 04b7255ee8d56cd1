"""``optim.Adam`` and ``optim.AdamW`` with PyTorch's update formulas and defaults."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _cold, _compiled
from compat.torch.optim._elementwise import (
    GroupStepOptimizer,
    check_flags,
    check_nonnegative,
    differentiable_update,
)
from compat.torch.optim._functional import adam_config, adam_scalars, adam_update

__all__ = ["Adam", "AdamW"]


class _TensorOps:
    @staticmethod
    def sqrt(x: Any) -> Any:
        return torch.sqrt(x)

    @staticmethod
    def maximum(a: Any, b: Any) -> Any:
        maximum = getattr(torch, "maximum", None)
        if maximum is not None:
            return maximum(a, b)
        return torch.where(a >= b, a, b)


class Adam(GroupStepOptimizer):
    """PyTorch's Adam (``torch/optim/adam.py``), same defaults and update order.

    Per parameter with a gradient ``g`` (others are skipped, and their step
    count does not advance): ``step += 1``; ``g = -g`` if ``maximize``; weight
    decay ``g += wd * p`` (or, with ``decoupled_weight_decay``/AdamW, ``p *= 1 -
    lr * wd``); ``m = lerp(m, g, 1 - beta1)``; ``v = beta2 * v + (1 - beta2) *
    g * g``; ``p -= lr / (1 - beta1**step) * m / (sqrt(v) / sqrt(1 -
    beta2**step) + eps)`` (``v`` replaced by its running max with ``amsgrad``).

    ``fused=None`` (default) or ``True`` updates each group with one compiled
    funcgrad program when the compat core allows it; ``fused=False`` forces
    the per-tensor path. ``foreach`` and ``capturable`` are accepted for
    compatibility; ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> model = torch.nn.Linear(3, 1)
        >>> opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        >>> model(torch.randn(4, 3)).pow(2).mean().backward()
        >>> opt.step()
        >>> opt.zero_grad()
    """

    _sparse_refusal = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if isinstance(lr, torch.Tensor):
            if foreach and not capturable:
                raise ValueError(
                    "lr as a Tensor is not supported for capturable=False and foreach=True"
                )
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        check_nonnegative(epsilon=eps)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        check_nonnegative(weight_decay=weight_decay)
        check_flags(differentiable, fused)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    #: group options a pickled optimizer may lack, and their defaults
    _state_defaults = {
        "amsgrad": False,
        "maximize": False,
        "foreach": None,
        "capturable": False,
        "differentiable": False,
        "fused": None,
        "decoupled_weight_decay": False,
    }

    def _step_group(self, group: dict[str, Any], params: list[Any], grads: list[Any]) -> None:
        cfg = adam_config(group)
        states = []
        scalars = []
        last = 0.0  # the highest step count after this step
        for p in params:
            st = self.state[p]
            if len(st) == 0:
                st["step"] = 0.0
                st["exp_avg"] = torch.zeros_like(p)
                st["exp_avg_sq"] = torch.zeros_like(p)
                if cfg.amsgrad:
                    st["max_exp_avg_sq"] = torch.zeros_like(p)
            if group["differentiable"] and getattr(st["step"], "requires_grad", False):
                raise RuntimeError(
                    "`requires_grad` is not supported for `step` in differentiable mode"
                )
            step = _step_value(st["step"]) + 1.0
            st["step"] = step
            last = max(last, step)
            states.append(st)
            scalars.append(adam_scalars(group, step, p.dtype))
        exp_avgs = [st["exp_avg"] for st in states]
        exp_avg_sqs = [st["exp_avg_sq"] for st in states]
        maxes = [st.get("max_exp_avg_sq") if cfg.amsgrad else None for st in states]

        access = _compiled.array_access() if group["fused"] is not False else None
        if group["differentiable"]:
            # recorded tensor by tensor (a Tensor lr or weight_decay that requires grad kept)
            for i, p in enumerate(params):
                differentiable_update(
                    lambda q, m, v, *vmax, s=scalars[i], g=grads[i]: adam_update(
                        cfg, s, _TensorOps, q, g, m, v, *(vmax or (None,))
                    )[: 4 if cfg.amsgrad else 3],
                    p,
                    [exp_avgs[i], exp_avg_sqs[i]] + ([maxes[i]] if cfg.amsgrad else []),
                )
            return
        if access is not None:
            state = (params, grads, exp_avgs, exp_avg_sqs, maxes)
            # a first step runs on NumPy, no program traced (see ``_cold``)
            if not (
                last <= _cold.COLD_STEPS and _cold.adam_host_step(access, cfg, scalars, *state)
            ):
                _compiled.adam_step(access, cfg, scalars, *state)
            return
        for i, p in enumerate(params):
            new_p, m, v, vmax = adam_update(
                cfg, scalars[i], _TensorOps, p, grads[i], exp_avgs[i], exp_avg_sqs[i], maxes[i]
            )
            p.copy_(new_p)
            exp_avgs[i].copy_(m)
            exp_avg_sqs[i].copy_(v)
            if cfg.amsgrad:
                maxes[i].copy_(vmax)


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay``), default ``1e-2``."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def _step_value(step: Any) -> float:
    if isinstance(step, (int, float)):
        return float(step)
    return float(step.item())
