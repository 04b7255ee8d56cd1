"""Transforms beyond ``transforms.py`` (which holds the elementwise and shape ones):
onto positive-definite matrices, through a distribution's cdf, and the slice-wise
``CatTransform``/``StackTransform``. PyTorch keeps them in
``torch.distributions.transforms``; compat exports them from the package."""

from __future__ import annotations

from typing import Any

from compat._core.ops import matmul
from compat._core.ops.array_rows import cat, stack
from compat._core.ops.linalg_ns import cholesky
from compat._core.tensor import Tensor
from compat.torch.distributions import constraints
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.transforms import LowerCholeskyTransform, Transform
from compat.torch.distributions.utils import _sum_rightmost

__all__ = [
    "CatTransform",
    "CumulativeDistributionTransform",
    "PositiveDefiniteTransform",
    "StackTransform",
]


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: ``L L^T`` for ``L`` the
    ``LowerCholeskyTransform`` of the input; the inverse goes through a Cholesky factor."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Tensor) -> Tensor:
        lower = LowerCholeskyTransform()(x)
        return matmul(lower, lower.mT)

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(cholesky(y))


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: onto the unit interval (a copula's margins); its
    log-det-Jacobian is the density ``distribution.log_prob(x)``."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


def _check_along(t: Any, z: Tensor, name: str, what: str, size: int, call: bool) -> None:
    """PyTorch's checks (and messages): ``dim`` in range for ``z``, ``z``'s size along it
    ``size`` (``what`` names it); a call or inverse calls ``z`` "tensor" in the first."""
    if not (-z.dim() <= t.dim < z.dim()):
        word = "tensor" if call else name
        raise AssertionError(f"dim {t.dim} out of range for {word} with {z.dim()} dimensions")
    if z.size(t.dim) != size:
        raise AssertionError(f"{name}.size({t.dim}) = {z.size(t.dim)} must equal {what} {size}")


class CatTransform(Transform):
    """Transforms applied to consecutive slices along ``dim`` (of ``lengths``), joined as
    ``torch.cat`` joins them."""

    def __init__(
        self,
        tseq: list[Transform],
        dim: int = 0,
        lengths: list[int] | None = None,
        cache_size: int = 0,
    ) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})"
            )
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        """The total length along ``dim``."""
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, z: Tensor) -> list[Tensor]:
        out, start = [], 0
        for n in self.lengths:
            out.append(z.narrow(self.dim, start, n))
            start += n
        return out

    def _call(self, x: Tensor) -> Tensor:
        _check_along(self, x, "x", "length", self.length, True)
        return cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        _check_along(self, y, "y", "length", self.length, True)
        return cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        _check_along(self, x, "x", "length", self.length, False)
        _check_along(self, y, "y", "length", self.length, False)
        parts = []
        for t, xs, ys in zip(self.transforms, self._pieces(x), self._pieces(y)):
            ladj = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                ladj = _sum_rightmost(ladj, self.event_dim - t.event_dim)
            parts.append(ladj)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return cat(parts, dim)
        return sum(parts[1:], parts[0])

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms applied to the slices along ``dim``, one each, joined as ``torch.stack``
    joins them."""

    def __init__(self, tseq: list[Transform], dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z: Tensor) -> list[Tensor]:
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x: Tensor) -> Tensor:
        _check_along(self, x, "x", "len(transforms)", len(self.transforms), True)
        return stack([t(s) for s, t in zip(self._slice(x), self.transforms)], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        _check_along(self, y, "y", "len(transforms)", len(self.transforms), True)
        return stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        _check_along(self, x, "x", "len(transforms)", len(self.transforms), False)
        _check_along(self, y, "y", "len(transforms)", len(self.transforms), False)
        parts = [
            t.log_abs_det_jacobian(xs, ys)
            for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)
        ]
        return stack(parts, self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
