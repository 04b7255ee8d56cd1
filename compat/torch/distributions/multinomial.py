"""``Multinomial(total_count=1, probs=None, logits=None)``: category counts of
``total_count`` independent categorical draws."""

from __future__ import annotations

import math
from typing import Any

from compat._core.creation import tensor
from compat._core.creation_rows import arange, zeros_like
from compat._core.grad_mode import no_grad
from compat._core.ops import exp, where
from compat._core.ops.unary import lgamma
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.binomial import Binomial
from compat.torch.distributions.categorical import Categorical
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import _size, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Multinomial distribution over count vectors (the last dimension of ``probs`` or
    ``logits`` indexes the categories). ``total_count`` must be one Python int, as in
    PyTorch; ``log_prob`` does not need it (any total is scored)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(
        self,
        total_count: int = 1,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = _size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = _size(sample_shape)
        with no_grad():
            draws = self._categorical.sample(Size((self.total_count, *sample_shape)))
            n = self._categorical._num_events
            onehot = (draws.unsqueeze(-1) == arange(n)).to(self.probs.dtype)
            return onehot.sum(0).reshape(tuple(self._extended_shape(sample_shape)))

    def entropy(self) -> Tensor:
        n = tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = exp(self._binomial.log_prob(support))
        weights = lgamma(support + 1)
        term2 = (binomial_probs * weights).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        # an impossible category drawn zero times contributes nothing
        logits = where((value == 0) & (logits == -math.inf), zeros_like(logits), logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
