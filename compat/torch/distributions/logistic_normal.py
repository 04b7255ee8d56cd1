"""``LogisticNormal(loc, scale)``: a normal vector pushed onto the simplex by stick
breaking."""

from __future__ import annotations

from typing import Any

from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.normal import Normal
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """Logistic-normal distribution on the ``K``-simplex: ``StickBreakingTransform`` of
    ``Normal(loc, scale)`` over ``K - 1`` coordinates (the last dimension of ``loc``)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
