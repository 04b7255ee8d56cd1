"""``nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and ``orthogonal``.

``weight_norm``: ``weight = g * v / ||v||``, the norm over every dimension except
``dim`` (``dim=None``: over the whole tensor); ``g`` and ``v`` are stored as
``parametrizations.weight.original0`` / ``original1``, PyTorch's ``state_dict`` keys.
``spectral_norm``: ``weight / sigma`` with ``sigma = u . (W v)`` estimated by power
iteration on the weight viewed as a ``(shape[dim], -1)`` matrix; the buffers ``_u``
and ``_v`` (``parametrizations.weight.0._u``/``_v``) are updated in place on every
access in training mode, as in PyTorch (their random start differs: compat's
generator). ``orthogonal``: the weight (or each matrix of a batch) as an orthogonal
(unitary) matrix, the image of an unconstrained one under the matrix exponential or the
Cayley map of its skew part, or a product of Householder reflectors; by default
("trivialization") relative to a fixed orthogonal ``base``, the weight's own
orthogonalisation when registered or assigned.

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

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

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

    def load_old_names(state_dict: dict, prefix: str, *args: Any) -> None:
        # a state dict of the old ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``)
        # loads into this one's ``original0``/``original1``, as PyTorch's
        g, v = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g in state_dict and v in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v)

    module._register_load_state_dict_pre_hook(load_old_names)
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


_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eye = torch.eye(k, dtype=q.dtype, device=q.device)
    return bool(torch.allclose(q.mH @ q, eye, atol=10.0 * n * torch.finfo(q.dtype).eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The ``Q`` of ``a = QR`` with ``R``'s diagonal made positive (unique for a full-rank
    ``a``)."""
    q, r = torch.linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(
        self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True
    ) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                zeros = x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)
                x = torch.cat([x, zeros], dim=-1)
            a = x - x.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == "matrix_exp":
                q = torch.matrix_exp(a)
            else:
                eye = torch.eye(n, dtype=a.dtype, device=a.device)
                q = torch.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = torch.linalg.householder_product(a, tau)
            # the diagonal's signs (+-1 in the stored form) flip the columns
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        with torch.no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {q.shape}."
            )
        q_init = q
        n, k = q.size(-2), q.size(-1)
        transpose = n < k
        if transpose:
            q = q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False."
                )
            a, tau = torch.geqrf(q)
            diag = a.diagonal(dim1=-2, dim2=-1)
            signs = torch.where(tau == 0.0, -diag.sign(), diag.sign())
            a = a.clone()
            a.diagonal(dim1=-2, dim2=-1).copy_(signs)  # (the k diagonal cells of n x k)
            return a.mT if transpose else a
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:  # completed to a square orthogonal base by random columns
            extra = torch.randn(*(q.size()[:-2] + (n, n - k)), dtype=q.dtype, device=q.device)
            q = _make_orthogonal(torch.cat([q, extra], dim=-1))
        self.base = q
        # -I: the parametrization's identity (its image is base itself)
        neg_id = torch.zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal
    (unitary): ``"matrix_exp"`` (default for square or complex weights), ``"cayley"`` or
    ``"householder"`` (default otherwise); returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, torch.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
