"""``LogitRelaxedBernoulli`` and ``RelaxedBernoulli(temperature, probs=None, logits=None)``:
the binary Concrete (Gumbel-softmax) relaxation, reparameterisable."""

from __future__ import annotations

import numbers
from typing import Any

from compat._core import dtypes as _dt
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions._discrete import check_one_of, expand_probs_logits
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import SigmoidTransform
from compat.torch.distributions.utils import (
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    """The logit of a ``RelaxedBernoulli`` draw: ``(logit(U) + logits) / temperature``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        self.temperature = temperature
        check_one_of(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        batch_shape = Size() if isinstance(given, numbers.Number) else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        new = expand_probs_logits(self, LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(_ops.uniform(shape, _dt.np_dtype(probs.dtype)))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Relaxed Bernoulli (binary Concrete) on ``(0, 1)``: the sigmoid of a
    ``LogitRelaxedBernoulli``; ``rsample`` is differentiable in ``probs``/``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedBernoulli:
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
