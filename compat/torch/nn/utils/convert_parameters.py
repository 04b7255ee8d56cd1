"""``nn.utils.parameters_to_vector``/``vector_to_parameters``: one flat vector of weights."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import compat.torch as torch
from compat._core.grad_mode import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]

Tensor = Any


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Concatenate the flattened ``parameters`` into one 1-D tensor (differentiable)."""
    return torch.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (their ``.data``)."""
    if not isinstance(vec, torch.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset : offset + n].view_as(p).data
        offset += n
