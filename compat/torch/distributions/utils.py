"""Helpers shared by the distributions (``torch.distributions.utils``)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation import tensor
from compat._core.ops import clamp, log, sigmoid, softmax
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import _ops

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
]


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Numbers and tensors as tensors of one broadcast shape.

    Numbers take the dtype of the first tensor argument (the default dtype if there is
    none), as ``torch.distributions.utils.broadcast_all``.
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of numbers.Number, torch.Tensor or "
            "objects implementing __torch_function__."
        )
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dt = first.dtype if first is not None else _dt.get_default_dtype()
    ts = [v if isinstance(v, Tensor) else tensor(v, dtype=dt) for v in values]
    shape = tuple(np.broadcast_shapes(*(tuple(t.shape) for t in ts)))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in ts)


def _standard_normal(shape: tuple[int, ...], dtype: Any) -> Tensor:
    return _ops.standard_normal(tuple(shape), _dt.np_dtype(dtype))


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits (sigmoid if binary, else softmax over the last dim)."""
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, -1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to ``[eps, 1 - eps]`` of their dtype."""
    eps = float(np.finfo(probs._npdtype).eps)
    return clamp(probs, min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (log-odds if binary, else log)."""
    ps = clamp_probs(probs)
    if is_binary:
        return log(ps) - (-ps).log1p()
    return log(ps)


class lazy_property:
    """A property computed on first access and then stored on the instance."""

    def __init__(self, wrapped: Callable) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _size(shape: Any) -> Size:
    if isinstance(shape, int):
        return Size((shape,))
    return Size(tuple(int(s) for s in shape))
