"""``Geometric(probs=None, logits=None)``: failures before the first success."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation_rows import zeros_like
from compat._core.grad_mode import no_grad
from compat._core.ops import where
from compat._core.tensor import Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions._discrete import check_one_of, expand_probs_logits
from compat.torch.distributions._expand import broadcast_params
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from compat.torch.nn.functional.loss import binary_cross_entropy_with_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Geometric distribution on ``0, 1, 2, ...``: ``P(k) = (1 - p)**k p``, with success
    probability ``probs`` in ``(0, 1]`` (or its log-odds ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        check_one_of(probs, logits)
        if probs is not None:
            (self.probs,), batch_shape = broadcast_params(probs)
        else:
            (self.logits,), batch_shape = broadcast_params(logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{value[~valid]}"
                )

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return expand_probs_logits(self, Geometric, batch_shape, _instance)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        dt = _dt.np_dtype(self.probs.dtype)
        with no_grad():
            u = _ops.uniform(shape, dt, float(np.finfo(dt).tiny), 1.0)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # a certain success (p = 1) at k = 0: 0 * log(0) is 0
        probs = where((probs == 1) & (value == 0), zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        bce = binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs
