"""``Weibull(scale, concentration)``: ``scale * E ** (1 / concentration)``, ``E ~ Exp(1)``."""

from __future__ import annotations

from typing import Any

from compat._core.creation_rows import ones_like
from compat._core.ops import exp, log
from compat._core.ops.unary import lgamma
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.exponential import Exponential
from compat.torch.distributions.gumbel import EULER
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import AffineTransform, PowerTransform
from compat.torch.distributions.utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Two-parameter Weibull distribution (scale ``scale``, shape ``concentration``)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Weibull:
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        TransformedDistribution.__init__(
            new, self.base_dist.expand(batch_shape), transforms, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * exp(lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (exp(lgamma(1 + 2 * r)) - exp(2 * lgamma(1 + r)))

    def entropy(self) -> Tensor:
        r = self.concentration_reciprocal
        return EULER * (1 - r) + log(self.scale * r) + 1
