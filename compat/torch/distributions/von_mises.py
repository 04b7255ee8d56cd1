"""``VonMises(loc, concentration)``: the circular normal distribution on angles."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from compat._core.dtypes import float64
from compat._core.grad_mode import no_grad
from compat._core.ops import acos, cos, where
from compat._core.tensor import Size, Tensor
from compat.torch.distributions import _ops, constraints
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4: I0 and I1 by polynomials in (x/3.75)^2 below 3.75 and
# in 3.75/x above (relative error below 2e-7), the approximation PyTorch evaluates, so
# log_prob and variance agree with PyTorch's to rounding.
_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813)
_I0_LARGE = (
    0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
    -0.01647633, 0.00392377,
)  # fmt: skip
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411)
_I1_LARGE = (
    0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
    0.01787654, -0.00420059,
)  # fmt: skip


def _horner(y: Tensor, coefficients: tuple[float, ...]) -> Tensor:
    """``sum_k c_k y**k`` by Horner's rule (highest coefficient first)."""
    result: Any = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_bessel_i(x: Tensor, order: int) -> Tensor:
    """``log I_order(x)`` for ``x > 0`` and order 0 or 1."""
    small_c, large_c = (_I0_SMALL, _I0_LARGE) if order == 0 else (_I1_SMALL, _I1_LARGE)
    small = _horner((x / 3.75) ** 2, small_c)
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _horner(3.75 / x, large_c).log()
    return where(x < 3.75, small, large)


class VonMises(Distribution):
    """Von Mises distribution on the circle: density ``exp(k cos(x - loc)) / (2 pi I0(k))``.
    ``loc`` and values are any real angles (read modulo ``2 pi``); ``mean`` and ``variance``
    are the circular ones. Draws (no ``rsample``, as PyTorch) use Best and Fisher's (1979)
    rejection sampler in double precision."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        validate_args = self.__dict__.get("_validate_args")
        loc = self.loc.expand(batch_shape)
        concentration = self.concentration.expand(batch_shape)
        return type(self)(loc, concentration, validate_args=validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * cos(value - self.loc) - math.log(2 * math.pi) - _log_bessel_i(k, 0)

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho**2) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Best and Fisher's rejection sampler: each round draws three uniforms per value
        and keeps the accepted ones until all are accepted."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            loc, kappa, r = self._loc.detach(), self._concentration.detach(), self._proposal_r
            r = r.detach()
            x = _ops.as_tensor(np.zeros(shape, np.float64))
            done = _ops.as_tensor(np.zeros(shape, bool))
            while not bool(done.all()):
                u1, u2, u3 = _ops.uniform((3, *shape), np.dtype(np.float64)).unbind()
                z = cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                if bool(accept.any()):
                    x = where(accept, (u3 - 0.5).sign() * acos(f), x)
                    done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        k = self.concentration
        return 1 - (_log_bessel_i(k, 1) - _log_bessel_i(k, 0)).exp()
