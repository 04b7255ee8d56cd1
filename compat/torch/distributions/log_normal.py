"""``LogNormal(loc, scale)``: ``exp`` of a ``Normal(loc, scale)``."""

from __future__ import annotations

from typing import Any

from compat._core.ops import exp
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.normal import Normal
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """Log-normal distribution: ``log(X)`` is ``Normal(loc, scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogNormal:
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return exp(self.loc + self.scale.pow(2) / 2)

    @property
    def mode(self) -> Tensor:
        return exp(self.loc - self.scale.square())

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * exp(2 * self.loc + s2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc
