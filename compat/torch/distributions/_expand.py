"""Distributions whose parameters are all batch-shaped tensors: their construction
(``broadcast_params``) and ``expand`` (``expand_params``)."""

from __future__ import annotations

import numbers
from typing import Any

from compat._core.tensor import Size, Tensor
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import _size, broadcast_all


def broadcast_params(*values: Any) -> tuple[tuple[Tensor, ...], Size]:
    """The parameters broadcast together (``broadcast_all``) and the batch shape they give:
    ``Size()`` when every one was given as a Python number, else their broadcast shape."""
    tensors = broadcast_all(*values)
    if all(isinstance(v, numbers.Number) for v in values):
        return tensors, Size()
    return tensors, tensors[0].size()


def expand_params(
    self: Distribution,
    cls: type,
    names: tuple[str, ...],
    batch_shape: Any,
    _instance: Any = None,
    event_shape: Any = None,
) -> Any:
    """A new ``cls`` with each parameter in ``names`` (present on ``self``) expanded."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = _size(batch_shape)
    event = tuple(self.event_shape if event_shape is None else event_shape)
    for n in names:
        if n in self.__dict__:
            v = self.__dict__[n]
            extra = tuple(v.shape[len(self.batch_shape) :])  # parameter's own event dims
            setattr(new, n, v.expand(tuple(batch_shape) + extra))
    Distribution.__init__(new, batch_shape, event, validate_args=False)
    new._validate_args = self._validate_args
    return new
