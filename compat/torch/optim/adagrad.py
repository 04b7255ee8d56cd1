"""``optim.Adagrad`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _rules
from compat.torch.optim._elementwise import (
    ElementwiseOptimizer,
    check_flags,
    check_lr,
    check_nonnegative,
    densified,
)

__all__ = ["Adagrad"]


class Adagrad(ElementwiseOptimizer):
    """Adagrad: per parameter with a gradient ``g``, after ``step += 1``.

    ``g = -g`` if ``maximize``; ``g += weight_decay * p``; ``clr = lr / (1 +
    (step - 1) * lr_decay)``; ``sum += g * g``; ``p -= clr * g / (sqrt(sum) +
    eps)``. As in PyTorch the state (``step``, ``sum`` filled with
    ``initial_accumulator_value``) exists from construction on, so
    ``state_dict()`` of a fresh optimizer already lists it.

    ``fused=False`` selects the per-tensor path; ``fused=True``/``None`` and
    ``foreach`` run one compiled program per group. ``differentiable=True`` records
    the step for autograd (tensor by tensor). Sparse gradients are taken (not with
    ``weight_decay``), as PyTorch's.

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.Adagrad([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.adagrad

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_lr(lr)
        check_nonnegative(
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            epsilon=eps,
        )
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        check_flags(differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._fill(self.state[p], p, group["initial_accumulator_value"])

    #: group options a pickled optimizer may lack, and their defaults
    _state_defaults = {
        "foreach": None,
        "maximize": False,
        "differentiable": False,
        "fused": None,
    }

    def _sparse_grads(self, group: dict[str, Any], grads: list[Any]) -> list[Any]:
        """Sparse gradients are taken: PyTorch's sparse update touches their rows only, and
        the dense update of the other rows adds zero to ``sum`` and moves nothing; weight
        decay refuses, as PyTorch's."""
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        return densified(grads)

    @staticmethod
    def _fill(state: dict[str, Any], p: Any, value: float) -> None:
        state["step"] = 0.0
        state["sum"] = torch.full_like(p, value)

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        # Parameters added later start from the optimizer's default accumulator, as PyTorch's.
        self._fill(state, p, self.defaults["initial_accumulator_value"])

    def _advance(
        self, group: dict[str, Any], state: dict[str, Any], p: Any
    ) -> _rules.AdagradScalars:
        state["step"] += 1.0
        lr = float(group["lr"])
        clr = lr / (1 + (state["step"] - 1) * group["lr_decay"])
        return _rules.AdagradScalars(
            neg_clr=-clr, eps=float(group["eps"]), weight_decay=float(group["weight_decay"])
        )
