"""``optim.SparseAdam`` with PyTorch 2.13's defaults, checks and update.

SparseAdam updates only the entries a sparse gradient holds (``nn.Embedding(sparse=True)``
gradients): the gradient is coalesced, and at its indices alone the moments move and the
parameter steps, as PyTorch's ``_functional.sparse_adam``; a dense gradient is refused with
PyTorch's error, which points to ``Adam``.
"""

from __future__ import annotations

import math
from typing import Any

import compat.torch as torch
from compat.torch.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam restricted to the entries of sparse gradients (see the module docstring).

    Example:
        >>> import compat.torch as torch
        >>> w = torch.nn.Parameter(torch.ones(3))
        >>> opt = torch.optim.SparseAdam([w], lr=1e-3)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Any = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr > 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not eps > 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        where = [
            (i, j, p)
            for i, group in enumerate(self.param_groups)
            for j, p in enumerate(group["params"])
        ]
        sparse = [[i, j] for i, j, p in where if p.is_sparse]
        if sparse:
            raise ValueError(
                f"Sparse params at indices {sparse}: SparseAdam requires dense parameter tensors"
            )
        complex_ = [[i, j] for i, j, p in where if p.is_complex()]
        if complex_:
            raise ValueError(
                f"Complex params at indices {complex_}: SparseAdam does not support complex "
                "parameters"
            )

    def step(self, closure: Any = None) -> Any:
        """One step: each parameter with a (sparse) gradient updated at its indices."""
        loss = self._closure_loss(closure)
        with torch.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not p.grad.is_sparse:
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider "
                            "Adam instead"
                        )
                    self._update(group, p, p.grad)
        return loss

    def _update(self, group: dict[str, Any], p: Any, grad: Any) -> None:
        """PyTorch's update of one parameter (its order of operations, for its rounding)."""
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = torch.zeros_like(p)
            state["exp_avg_sq"] = torch.zeros_like(p)
        state["step"] += 1
        step = state["step"]
        grad = grad.coalesce()
        where = tuple(grad._indices()[d] for d in range(grad.sparse_dim()))
        values = -grad._values() if group["maximize"] else grad._values()
        beta1, beta2 = group["betas"]
        lr = float(group["lr"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        old_avg = exp_avg[where]
        avg_update = (values - old_avg) * (1 - beta1)
        exp_avg[where] = old_avg + avg_update
        old_sq = exp_avg_sq[where]
        sq_update = (values.pow(2) - old_sq) * (1 - beta2)
        exp_avg_sq[where] = old_sq + sq_update
        numer = avg_update + old_avg
        denom = (sq_update + old_sq).sqrt() + group["eps"]
        step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
        p.index_put_(where, (numer / denom) * -step_size, accumulate=True)
