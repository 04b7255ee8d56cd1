"""``optim.SparseAdam`` with PyTorch 2.13's defaults and checks.

SparseAdam updates only the entries a sparse gradient holds (``nn.Embedding(sparse=True)``
gradients). compat's autograd produces dense gradients only (a sparse COO tensor cannot
be a ``.grad``), so every step meets a dense gradient and refuses it with PyTorch's
error, which points to ``Adam``; the constructor checks its arguments as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam restricted to the entries of sparse gradients (see the module docstring:
    with compat's dense gradients ``step`` raises, as PyTorch's does for them).

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
        """Refuse the dense gradients compat's autograd produces (PyTorch's error)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not p.grad.is_sparse:
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
        return loss
