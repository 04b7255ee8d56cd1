"""Transforms beyond ``transforms.py`` (which holds the elementwise and shape ones):
onto positive-definite matrices, and through a distribution's cdf. PyTorch keeps them in
``torch.distributions.transforms``; compat exports them from the package."""

from __future__ import annotations

from typing import Any

from compat._core.ops import matmul
from compat._core.ops.linalg_ns import cholesky
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.transforms import LowerCholeskyTransform, Transform

__all__ = ["CumulativeDistributionTransform", "PositiveDefiniteTransform"]


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: ``L L^T`` for ``L`` the
    ``LowerCholeskyTransform`` of the input; the inverse goes through a Cholesky factor."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        lower = LowerCholeskyTransform()(x)
        return matmul(lower, lower.mT)

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(cholesky(y))


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: onto the unit interval (a copula's margins); its
    log-det-Jacobian is the density ``distribution.log_prob(x)``."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
