"""``optim.Muon`` with PyTorch 2.13's defaults, checks, state key and update order.

Muon (Jordan et al., 2024) orthogonalises the momentum of each 2-D parameter before
stepping: a few Newton-Schulz iterations of the quintic ``X <- a X + (b A + c A^2) X``
(``A = X X^T``) map the update towards ``U V^T`` of its SVD. As PyTorch's, the
iterations run in bfloat16 on the update normalised by its Frobenius norm, on its
transpose when it has more rows than columns.
"""

from __future__ import annotations

import math
from typing import Any

import compat.torch as torch
from compat.torch.optim.optimizer import Optimizer, params_with_grad

__all__ = ["Muon"]

_ADJUST = (None, "original", "match_rms_adamw")


def _orthogonalise(g: Any, coefficients: tuple[float, float, float], steps: int, eps: float) -> Any:
    """Newton-Schulz iterations towards the orthogonal factor of the matrix ``g``."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if g.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = g.size(0) > g.size(1)
    x = g.bfloat16()
    x = x.T if tall else x
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        poly = torch.addmm(gram, gram, gram, beta=b, alpha=c)
        x = torch.addmm(x, poly, x, beta=a)
    return x.T if tall else x


def _lr_scale(adjust: str | None, shape: Any) -> float:
    rows, cols = shape[:2]
    if adjust == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return math.sqrt(max(1, rows / cols))


class Muon(Optimizer):
    """Muon, for 2-D parameters: per parameter with a gradient ``g``.

    ``buf = lerp(buf, g, 1 - momentum)``; ``u = lerp(g, buf, momentum)`` if ``nesterov``
    else ``buf``; ``u`` orthogonalised (module docstring); ``p *= 1 - lr *
    weight_decay``; ``p -= lr * s * u`` with ``s = sqrt(max(1, rows / cols))``
    (``adjust_lr_fn=None``/``'original'``) or ``0.2 sqrt(max(rows, cols))``
    (``'match_rms_adamw'``). State: ``momentum_buffer``.

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3, 2))
        >>> opt = torch.optim.Muon([w], lr=0.02)
        >>> (w * w).sum().backward()
        >>> opt.step()
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
        eps: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not momentum >= 0.0:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in _ADJUST:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step (re-evaluating the loss with ``closure`` if given)."""
        loss = self._closure_loss(closure)
        with torch.no_grad():
            for group in self.param_groups:
                params, grads = params_with_grad(group)
                for p, g in zip(params, grads, strict=True):
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    if g.is_sparse:
                        raise RuntimeError("Muon does not support sparse gradients")
                for p, g in zip(params, grads, strict=True):
                    self._update(group, p, g)
        return loss

    def _update(self, group: dict[str, Any], p: Any, g: Any) -> None:
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = torch.zeros_like(g)
        if g.dim() != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        lr, momentum = float(group["lr"]), group["momentum"]
        buf = state["momentum_buffer"]
        buf.lerp_(g, 1 - momentum)
        u = g.lerp(buf, momentum) if group["nesterov"] else buf
        u = _orthogonalise(u, group["ns_coefficients"], group["ns_steps"], group["eps"])
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(u, alpha=-lr * _lr_scale(group["adjust_lr_fn"], p.shape))
