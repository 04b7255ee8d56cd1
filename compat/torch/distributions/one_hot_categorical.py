"""``OneHotCategorical(probs=None, logits=None)``: a ``Categorical`` draw as a one-hot vector."""

from __future__ import annotations

from typing import Any

from compat._core.creation_rows import arange, eye
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.categorical import Categorical
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import _size

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _one_hot(indices: Tensor, n: int, dtype: Any) -> Tensor:
    return (indices.unsqueeze(-1) == arange(n)).to(dtype)


class OneHotCategorical(Distribution):
    """One-hot categorical distribution; the event is the last dimension."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(
        self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args: Any = None
    ) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = _size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return _one_hot(probs.argmax(dim=-1), probs.shape[-1], probs.dtype)

    @property
    def variance(self) -> Tensor:
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        indices = self._categorical.sample(_size(sample_shape))
        return _one_hot(indices, self._categorical._num_events, self._categorical.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        batch = tuple(self.batch_shape)
        values = eye(n, dtype=self._param.dtype).reshape((n,) + (1,) * len(batch) + (n,))
        if expand:
            values = values.expand((n, *batch, n))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A ``OneHotCategorical`` with the straight-through gradient estimator: ``rsample`` is
    a one-hot draw whose gradient is that of ``probs`` (Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
