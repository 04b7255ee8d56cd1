"""``NegativeBinomial(total_count, probs=None, logits=None)``: successes before
``total_count`` failures, each trial a success with probability ``probs``."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation_rows import zeros_like
from compat._core.grad_mode import no_grad
from compat._core.ops import exp, sigmoid, where
from compat._core.ops.unary import lgamma
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions._discrete import check_one_of, expand_probs_logits
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.gamma import Gamma
from compat.torch.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from compat.torch.nn.functional.activation import logsigmoid

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Negative binomial distribution (a gamma-Poisson mixture): the number of successes
    before ``total_count`` (a positive real) failures; ``probs`` is the success
    probability in ``[0, 1)``, as PyTorch's parameterisation."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self,
        total_count: Any,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        check_one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        return expand_probs_logits(
            self, NegativeBinomial, batch_shape, _instance, others=("total_count",)
        )

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return self.total_count * exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(self.total_count, exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A Poisson draw at a Gamma(total_count, exp(-logits)) rate."""
        with no_grad():
            rate = self._gamma.sample(sample_shape)
            lam = np.asarray(rate._st.array, np.float64)
            draws = _ops.rng().poisson(lam)
            return _ops.as_tensor(draws.astype(_dt.np_dtype(rate.dtype)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_norm = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        log_norm = where(n + value == 0.0, zeros_like(log_norm), log_norm)
        return log_unnormalized - log_norm
