"""``FisherSnedecor(df1, df2)``: the F distribution, a ratio of scaled chi-squared draws."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from compat._core.creation_rows import full_like
from compat._core.ops import log, where
from compat._core.ops.unary import lgamma
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.gamma import Gamma
from compat.torch.distributions.utils import _size, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom;
    ``rsample`` is a ratio of reparameterised gamma draws."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number):
            batch_shape = Size()
        else:
            batch_shape = self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = _size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        df2 = where(self.df2 <= 2, full_like(self.df2, math.nan), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, full_like(mode, math.nan), mode)

    @property
    def variance(self) -> Tensor:
        df1 = self.df1
        df2 = where(self.df2 <= 4, full_like(self.df2, math.nan), self.df2)
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = float(np.finfo(x2._npdtype).tiny)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * log(ct3) + (ct1 - 1) * log(value)
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
