"""``Kumaraswamy(concentration1, concentration0)``: ``(1 - U**(1/b))**(1/a)`` for uniform
``U``, a Beta-like law on ``[0, 1]`` with a closed-form cdf."""

from __future__ import annotations

import math
from typing import Any

from compat._core.creation_rows import full_like
from compat._core.ops import exp, log, where
from compat._core.ops.unary import digamma, lgamma
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.gumbel import EULER
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import AffineTransform, PowerTransform
from compat.torch.distributions.uniform import Uniform
from compat.torch.distributions.utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    """``E[X**n] = b B(1 + n/a, b)``."""
    arg = 1 + n / a
    return b * exp(lgamma(arg) + lgamma(b) - lgamma(arg + b))


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution with ``concentration1`` (``a``) and ``concentration0``
    (``b``); reparameterised through the uniform draw."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(
            full_like(self.concentration0, 0),
            full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode = where((b < 1) | (a < 1), full_like(log_mode, math.nan), log_mode)
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h0 = digamma(b + 1) + EULER
        return t0 + t1 * h0 - log(a) - log(b)
