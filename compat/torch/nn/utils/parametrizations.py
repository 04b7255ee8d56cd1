"""``nn.utils.parametrizations.weight_norm``: ``weight = g * v / ||v||`` as a parametrization.

The norm is taken over every dimension except ``dim`` (``dim=None``: over the whole
tensor). ``register_parametrization`` stores ``g`` and ``v`` as
``parametrizations.weight.original0`` / ``original1``, PyTorch's ``state_dict`` keys.

Example:
    >>> import compat.torch as torch
    >>> from compat.torch.nn.utils.parametrizations import weight_norm
    >>> layer = weight_norm(torch.nn.Linear(4, 3))
    >>> tuple(layer.parametrizations.weight.original0.shape)
    (3, 1)
"""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.nn.modules.module import Module
from compat.torch.nn.utils import parametrize

__all__ = ["weight_norm"]

Tensor = Any


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every axis but ``dim`` (kept as size-1 axes); the
    whole-tensor norm when ``dim == -1``, as PyTorch's ``norm_except_dim``."""
    if dim == -1:
        return torch.norm(v, 2)
    dim = dim % v.dim()
    axes = [a for a in range(v.dim()) if a != dim]
    return torch.norm(v, 2, dim=axes, keepdim=True)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as magnitude ``g`` times direction ``v / ||v||``;
    returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
