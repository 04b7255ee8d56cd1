"""``Cauchy(loc, scale)``."""

from __future__ import annotations

import math
from typing import Any

from compat._core import dtypes as _dt
from compat._core.creation_rows import full
from compat._core.ops import atan, log, tan
from compat._core.tensor import Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions._expand import broadcast_params, expand_params
from compat.torch.distributions.distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy (Lorentz) distribution with median ``loc`` and half-width ``scale``; its mean
    is undefined (NaN) and its variance infinite, as PyTorch reports them."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        (self.loc, self.scale), batch_shape = broadcast_params(loc, scale)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return expand_params(self, Cauchy, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        eps = _ops.cauchy(shape, _dt.np_dtype(self.loc.dtype))
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - log(self.scale) - z.pow(2).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + log(self.scale)
