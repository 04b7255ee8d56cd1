"""``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``."""

from __future__ import annotations

import math
from typing import Any

from compat._core.creation_rows import full_like, zeros_like
from compat._core.ops import where
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.normal import Normal
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    """Half-normal distribution: the absolute value of a zero-mean normal."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, lp, full_like(lp, -math.inf))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
