"""``optim.Rprop`` with PyTorch 2.13's defaults, checks, state keys and update order."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim import _rules
from compat.torch.optim._elementwise import ElementwiseOptimizer, check_lr, flags

__all__ = ["Rprop"]


class Rprop(ElementwiseOptimizer):
    """Resilient backpropagation: per parameter with a gradient ``g``.

    ``g = -g`` if ``maximize``; where ``g * prev > 0`` the step size grows by
    ``etaplus``, where ``< 0`` it shrinks by ``etaminus`` (and ``g`` counts as
    0), else it stays; step sizes are clamped to ``step_sizes``; ``p -= sign(g)
    * step_size``; ``prev = g``. State: ``step``, ``prev``, ``step_size``
    (starting at ``lr``).

    ``foreach`` and ``capturable`` are accepted; ``differentiable=True`` records the step for autograd (tensor by tensor).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.Rprop([w])
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    _rule = _rules.rprop

    def __init__(
        self,
        params: Any,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
            **flags(
                foreach=foreach,
                maximize=maximize,
                differentiable=differentiable,
                capturable=capturable,
            ),
        }
        super().__init__(params, defaults)

    def _config(self, group: dict[str, Any]) -> _rules.RpropConfig:
        return _rules.RpropConfig(maximize=bool(group["maximize"]))

    def _init_state(self, group: dict[str, Any], p: Any, state: dict[str, Any]) -> None:
        state["step"] = 0.0
        state["prev"] = torch.zeros_like(p)
        lr = float(group["lr"])
        # a complex parameter is two reals: its imaginary parts start at lr too, as PyTorch's
        state["step_size"] = torch.full_like(p, complex(lr, lr) if p.is_complex() else lr)

    def _advance(self, group: dict[str, Any], state: dict[str, Any], p: Any) -> _rules.RpropScalars:
        state["step"] += 1.0
        etaminus, etaplus = (float(e) for e in group["etas"])
        lo, hi = (float(s) for s in group["step_sizes"])
        return _rules.RpropScalars(
            etaminus=etaminus, etaplus=etaplus, step_size_min=lo, step_size_max=hi
        )
