"""``ExpRelaxedCategorical`` and ``RelaxedOneHotCategorical(temperature, probs=None,
logits=None)``: the Concrete (Gumbel-softmax) relaxation of a one-hot categorical."""

from __future__ import annotations

from typing import Any

from compat._core import dtypes as _dt
from compat._core.creation_rows import full_like
from compat._core.ops.unary import lgamma
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions.categorical import Categorical
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import ExpTransform
from compat.torch.distributions.utils import _size, broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` draw: ``log_softmax((logits + G) / T)``
    for Gumbel noise ``G``; its support is a submanifold of ``real_vector``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = _size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = clamp_probs(_ops.uniform(shape, _dt.np_dtype(self.logits.dtype)))
        gumbels = -(-u.log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = lgamma(full_like(self.temperature, float(k))) - self.temperature.log().mul(
            -(k - 1)
        )
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Relaxed one-hot categorical (Concrete / Gumbel-softmax) on the simplex: ``exp`` of an
    ``ExpRelaxedCategorical``; ``rsample`` is differentiable in ``probs``/``logits``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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
