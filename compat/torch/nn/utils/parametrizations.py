"""``nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm``.

``weight_norm``: ``weight = g * v / ||v||``, the norm over every dimension except
``dim`` (``dim=None``: over the whole tensor); ``g`` and ``v`` are stored as
``parametrizations.weight.original0`` / ``original1``, PyTorch's ``state_dict`` keys.
``spectral_norm``: ``weight / sigma`` with ``sigma = u . (W v)`` estimated by power
iteration on the weight viewed as a ``(shape[dim], -1)`` matrix; the buffers ``_u``
and ``_v`` (``parametrizations.weight.0._u``/``_v``) are updated in place on every
access in training mode, as in PyTorch (their random start differs: compat's
generator).

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

__all__ = ["spectral_norm", "weight_norm"]

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


def _normalize(x: Tensor, eps: float) -> Tensor:
    """``x / max(||x||, eps)`` (``F.normalize`` of a vector)."""
    return x / torch.clamp(torch.norm(x, 2), min=eps)


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._matrix(weight.detach())
            h, w = mat.shape
            u = torch.empty(h, dtype=mat.dtype).normal_(0, 1)
            v = torch.empty(w, dtype=mat.dtype).normal_(0, 1)
            self.register_buffer("_u", _normalize(u, eps))
            self.register_buffer("_v", _normalize(v, eps))
            self._power_method(mat, 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat: Tensor, iterations: int) -> None:
        with torch.no_grad():
            mat = mat.detach()
            for _ in range(iterations):
                self._u.copy_(_normalize(torch.mv(mat, self._v), self.eps))
                self._v.copy_(_normalize(torch.mv(mat.T, self._u), self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return _normalize(weight, self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / torch.dot(u, torch.mv(mat, v))

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its largest singular value (power-iteration
    estimate); ``dim`` defaults to 1 for transposed convolutions, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, torch.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
