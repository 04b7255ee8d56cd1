"""``Dirichlet(concentration)`` over the probability simplex."""

from __future__ import annotations

from typing import Any

from compat._core.creation_rows import zeros_like
from compat._core.ops import where
from compat._core.ops.binary import xlogy
from compat._core.ops.unary import digamma, lgamma
from compat._core.tensor import Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions._expand import expand_params
from compat.torch.distributions.exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution; ``concentration``'s last dimension is the event.

    ``rsample`` is differentiable (normalised gamma draws with the implicit gradient).
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        return expand_params(self, Dirichlet, ("concentration",), batch_shape, _instance)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _ops.dirichlet(self.concentration, shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # all concentrations below 1: PyTorch puts the mode on the first vertex
        first = zeros_like(mode)
        first[..., 0] = 1.0
        mask = (self.concentration < 1).all(-1, keepdim=True)
        return where(mask, first, mode)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (
            lgamma(c).sum(-1)
            - lgamma(a0)
            - (k - a0) * digamma(a0)
            - ((c - 1.0) * digamma(c)).sum(-1)
        )
