"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a multivariate normal whose
covariance is ``cov_factor @ cov_factor.T + diag(cov_diag)``."""

from __future__ import annotations

import math
from typing import Any

from compat._core.broadcasting import broadcast_tensors
from compat._core.creation_rows import eye
from compat._core.ops import matmul
from compat._core.ops.linalg_ns import cholesky, solve_triangular
from compat._core.ops.selecting import diag_embed, diagonal
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv
from compat.torch.distributions.utils import _size, _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """The Cholesky factor of the capacitance ``I + W^T D^-1 W`` (``m x m``, ``m`` the rank)."""
    m = w.size(-1)
    k = matmul(w.mT / d.unsqueeze(-2), w) + eye(m, dtype=w.dtype)
    return cholesky(k)


def _batch_lowrank_logdet(w: Tensor, d: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``log det(W W^T + D)`` by the matrix determinant lemma: ``log det C + log det D``."""
    c_diag = diagonal(capacitance_tril, dim1=-2, dim2=-1)
    return 2 * c_diag.log().sum(-1) + d.log().sum(-1)


def _batch_lowrank_mahalanobis(w: Tensor, d: Tensor, x: Tensor, capacitance_tril: Tensor) -> Tensor:
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity, through the capacitance."""
    wt_dinv_x = _batch_mv(w.mT / d.unsqueeze(-2), x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with a low-rank-plus-diagonal covariance; ``log_prob`` and
    ``entropy`` cost ``O(n m^2)`` (Woodbury identity, determinant lemma), not ``O(n^3)``."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        cov_factor: Tensor,
        cov_diag: Tensor,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, "
                "with optional leading batch dimensions"
            )
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                f"cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = _size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, extra: tuple) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) + extra

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (w.pow(2).sum(-1) + d).expand(self._full(()))

    @lazy_property
    def scale_tril(self) -> Tensor:
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / d_sqrt
        k = matmul(dinvsqrt_w, dinvsqrt_w.mT) + eye(n, dtype=d_sqrt.dtype)
        return (d_sqrt * cholesky(k)).expand(self._full((n,)))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        cov = matmul(w, w.mT) + diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(self._full((self._event_shape[0],)))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        d = self._unbroadcasted_cov_diag
        wt_dinv = self._unbroadcasted_cov_factor.mT / d.unsqueeze(-2)
        a = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = diag_embed(d.reciprocal()) - matmul(a.mT, a)
        return precision.expand(self._full((self._event_shape[0],)))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = _standard_normal(w_shape, self.loc.dtype)
        eps_d = _standard_normal(shape, self.loc.dtype)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )

    def _logdet(self) -> Tensor:
        return _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            value - self.loc,
            self._capacitance_tril,
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + m)

    def entropy(self) -> Tensor:
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        if len(self._batch_shape) == 0:
            return h
        return h.expand(tuple(self._batch_shape))
