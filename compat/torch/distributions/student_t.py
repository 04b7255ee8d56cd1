"""``StudentT(df, loc=0.0, scale=1.0)``."""

from __future__ import annotations

import math
from typing import Any

from compat._core.creation_rows import full_like
from compat._core.ops import where
from compat._core.ops.unary import digamma, lgamma
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.chi2 import Chi2
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import _size, _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``. ``rsample`` is ``loc + scale * X / sqrt(Z / df)`` (``X`` normal, ``Z`` a
    reparameterised chi-squared draw), differentiable in all three parameters."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(
        self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = _size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return where(self.df > 1, self.loc, full_like(self.loc, math.nan))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        out = where(df > 2, finite, full_like(finite, math.inf))
        return where(df > 1, out, full_like(finite, math.nan))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(tuple(shape), self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        y = x * (z / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * df.log()
            + 0.5 * math.log(math.pi)
            + lgamma(0.5 * df)
            - lgamma(0.5 * (df + 1.0))
        )
        return -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (
            self.scale.log()
            + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
            + 0.5 * df.log()
            + lbeta
        )
