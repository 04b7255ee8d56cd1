"""``Categorical(probs=None, logits=None)`` over ``0 .. K-1``."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core.creation import multinomial
from compat._core.creation_rows import full
from compat._core.dtypes import int64
from compat._core.ops import clamp
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions._discrete import (
    check_one_of,
    enumerate_values,
    expand_probs_logits,
)
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import _size, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categorical distribution; the last dimension of ``probs``/``logits`` indexes the
    categories. ``probs`` are normalised to sum to 1, ``logits`` by their ``logsumexp``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(
        self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args: Any = None
    ) -> None:
        check_one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = expand_probs_logits(
            self, Categorical, batch_shape, _instance, extra=(self._num_events,)
        )
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        # PyTorch's draws: one multinomial call (with replacement) over the rows of probs
        sample_shape = _size(sample_shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = tuple(np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape)))
        log_pmf = self.logits.expand(shape)
        value = value.expand(shape[:-1] + (1,))
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits._npdtype).min)
        logits = clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        return enumerate_values(self._num_events, int64, tuple(self._batch_shape), expand)
