"""``InverseGamma(concentration, rate)``: ``1 / X`` for ``X ~ Gamma(concentration, rate)``."""

from __future__ import annotations

import math
from typing import Any

from compat._core.creation_rows import full_like
from compat._core.ops import where
from compat._core.ops.unary import digamma, lgamma
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.gamma import Gamma
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """Inverse gamma distribution (a conjugate prior of a normal's variance); ``rsample``
    is differentiable through the reparameterised gamma draw."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        result = self.rate / (c - 1)
        return where(c > 1, result, full_like(result, math.inf))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        result = self.rate.square() / ((c - 1).square() * (c - 2))
        return where(c > 2, result, full_like(result, math.inf))

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + lgamma(c) - (1 + c) * digamma(c)
