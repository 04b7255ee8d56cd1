"""``optim.Adafactor`` with PyTorch 2.13's defaults, checks, state keys and update order.

The second moment of a parameter with two or more dimensions is kept factored over its
last two: a row factor (the mean of ``g**2`` over the last dimension) and a column
factor (over the one before), whose outer product, divided by the row factor's mean,
estimates it (Shazeer & Stern, 2018). A vector keeps the full second moment.
"""

from __future__ import annotations

import math
from typing import Any

import compat.torch as torch
from compat.torch.optim.optimizer import Optimizer, params_with_grad

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor: per parameter with a gradient ``g`` at step ``t``.

    ``g = -g`` if ``maximize``; ``beta2_t = 1 - t**beta2_decay``; ``rho = min(lr,
    1/sqrt(t))``; ``alpha = max(eps2, rms(p)) * rho``; ``p *= 1 - lr * weight_decay``;
    the second-moment estimate ``v`` moves towards ``g**2`` by ``1 - beta2_t`` (factored
    for a matrix, see the module docstring); ``u = g / sqrt(max(v, eps1**2))``; ``p -=
    alpha / max(1, rms(u) / d) * u``. ``eps1=None`` is the parameter dtype's machine
    epsilon. State: ``step``, and ``row_var``/``col_var`` (a matrix) or ``variance``.

    ``foreach`` is accepted (the update is the same).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3, 2))
        >>> opt = torch.optim.Adafactor([w], lr=0.01)
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    def __init__(
        self,
        params: Any,
        lr: float | Any = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not beta2_decay <= 0.0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not eps[0] >= 0.0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not eps[1] >= 0.0:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not d >= 1.0:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    _state_defaults = {"foreach": None}

    def _init_state(self, p: Any, g: Any) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = torch.tensor(0.0)
            if g.dim() > 1:
                state["row_var"] = g.new_zeros((*g.shape[:-1], 1))
                state["col_var"] = g.new_zeros((*g.shape[:-2], 1, g.shape[-1]))
            else:
                state["variance"] = torch.zeros_like(g)
        return state

    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step (re-evaluating the loss with ``closure`` if given)."""
        loss = self._closure_loss(closure)
        with torch.no_grad():
            for group in self.param_groups:
                for p, g in zip(*params_with_grad(group), strict=True):
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    if g.is_sparse:
                        raise RuntimeError("Adafactor does not support sparse gradients")
                    self._update(group, p, -g if group["maximize"] else g)
        return loss

    def _update(self, group: dict[str, Any], p: Any, g: Any) -> None:
        state = self._init_state(p, g)
        lr = float(group["lr"])
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = torch.finfo(p.dtype).eps
        state["step"] += 1
        t = float(state["step"])
        beta2_c = t ** group["beta2_decay"]  # 1 - beta2_t
        rho = min(lr, 1 / math.sqrt(t))
        alpha = max(eps2, float(p.norm(2)) / math.sqrt(p.numel())) * rho
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        if g.dim() > 1:
            row, col = state["row_var"], state["col_var"]
            row.lerp_(g.norm(dim=-1, keepdim=True).square() / g.size(-1), beta2_c)
            col.lerp_(g.norm(dim=-2, keepdim=True).square() / g.size(-2), beta2_c)
            v = (row @ col) / row.mean(dim=-2, keepdim=True).clamp(min=eps1)
        else:
            state["variance"].lerp_(g * g, beta2_c)
            v = state["variance"].clone()
        u = v.clamp(min=eps1 * eps1).rsqrt() * g
        denom = max(1.0, float(u.norm(2)) / (math.sqrt(u.numel()) * group["d"]))
        p.add_(u, alpha=-alpha / denom)
