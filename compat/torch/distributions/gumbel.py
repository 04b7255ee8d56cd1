"""``Gumbel(loc, scale)``: ``loc - scale * log(-log(U))`` for ``U ~ Uniform(tiny, 1 - eps)``."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from compat._core.creation_rows import full_like, ones_like
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import AffineTransform, ExpTransform
from compat.torch.distributions.uniform import Uniform
from compat.torch.distributions.utils import broadcast_all

__all__ = ["Gumbel"]

EULER = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """Gumbel (type-I extreme value) distribution with location ``loc`` and scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = np.finfo(self.loc._npdtype)
        tiny, top = float(fi.tiny), 1 - float(fi.eps)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base = Uniform(tiny, top, validate_args=validate_args)
        else:
            base = Uniform(
                full_like(self.loc, tiny), full_like(self.loc, top), validate_args=validate_args
            )
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-ones_like(self.scale)),
            ExpTransform().inv,
            AffineTransform(loc=loc, scale=-self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + EULER)
