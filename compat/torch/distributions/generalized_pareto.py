"""``GeneralizedPareto(loc, scale, concentration)``: the peaks-over-threshold law of
extreme value theory."""

from __future__ import annotations

import math
import numbers
from typing import Any

from compat._core import dtypes as _dt
from compat._core.creation_rows import full_like, ones_like
from compat._core.ops import exp, where
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import _size, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution: support ``[loc, inf)`` for ``concentration >= 0``,
    ``[loc, loc - scale / concentration]`` below; ``concentration`` within ``1e-8`` of 0
    is the exponential limit. ``rsample`` is the inverse cdf of a uniform draw."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(
        self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None
    ) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, numbers.Number) for v in (loc, scale, concentration)):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = _size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        """Where the concentration is (close to) 0, and the concentration with those
        entries replaced by 1 (so the general formula stays finite there)."""
        c = self.concentration
        eq_zero = c.abs() <= 1e-8
        return eq_zero, where(eq_zero, ones_like(c), c)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(_ops.uniform(shape, _dt.np_dtype(self.loc.dtype)))

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        y = 1 / safe + ones_like(z)
        nonzero = where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log P(X > value)``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        return where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        """``log P(X <= value)``."""
        return (-exp(self.log_survival_function(value))).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, safe = self._zero_and_safe()
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        return where(eq_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        valid = c < 1
        safe = where(valid, c, full_like(c, 0.5))
        result = self.loc + self.scale / (1 - safe)
        return where(valid, result, full_like(result, math.nan))

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        valid = c < 0.5
        safe = where(valid, c, full_like(c, 0.25))
        result = self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return where(valid, result, full_like(result, math.nan))

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        c = self.concentration
        upper = where(c < 0, lower - self.scale / c, full_like(lower, math.inf))
        return constraints.interval(lower, upper)
