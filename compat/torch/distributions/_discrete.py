"""What the probs/logits-parameterised discrete distributions share."""

from __future__ import annotations

from typing import Any

from compat._core.creation_rows import arange
from compat._core.tensor import Tensor
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import _size


def check_one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def expand_probs_logits(
    self: Any, cls: type, batch_shape: Any, _instance: Any, extra: tuple = (), others: tuple = ()
) -> Any:
    """``expand`` for distributions holding ``probs`` and/or ``logits`` (and ``others``)."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = _size(batch_shape)
    shape = tuple(batch_shape) + tuple(extra)
    for name in others:
        setattr(new, name, getattr(self, name).expand(batch_shape))
    for name in ("probs", "logits"):
        if name in self.__dict__:
            setattr(new, name, self.__dict__[name].expand(shape))
            new._param = new.__dict__[name]
    Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


def enumerate_values(n: int, dtype: Any, batch_shape: tuple, expand: bool) -> Tensor:
    """``0 .. n-1`` shaped ``(n, 1, ..., 1)``, or expanded to ``(n, *batch_shape)``."""
    values = arange(n, dtype=dtype).reshape((-1,) + (1,) * len(batch_shape))
    if expand:
        values = values.expand((-1, *batch_shape))
    return values
