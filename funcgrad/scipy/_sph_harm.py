"""``scipy.special.sph_harm_y``: the spherical harmonics
``Y_n^m(theta, phi) = N_n^m P_n^m(cos theta) exp(i m phi)`` (orthonormal on the sphere,
with the Condon-Shortley phase), at 1-D arrays of degrees ``n``, orders ``m`` and
colatitudes ``theta`` (``phi`` broadcast to them), as JAX's: ``n_max`` (static; by default
``max(n)``) bounds the recurrences, and ``n`` and ``|m|`` above it are clipped to it in
the Legendre function (the phase ``exp(i |m| phi)`` keeps ``|m|``).

The normalized associated Legendre function ``p_n^M`` (``M = |m|``) comes from the usual
stable recurrences, run for every element at once over ``n_max`` steps: along the diagonal
``p_k^k = -sqrt((2k+1)/(2k)) sin(theta) p_{k-1}^{k-1}`` from ``p_0^0 = 1/sqrt(4 pi)``, then
up in degree ``p_l^M = sqrt((4l**2-1)/(l**2-M**2)) (x p_{l-1}^M
- sqrt(((l-1)**2-M**2)/(4(l-1)**2-1)) p_{l-2}^M)``. Negative orders:
``Y_n^{-M} = (-1)**M conj(Y_n^M)``; ``|m| > n`` gives 0. Derivatives: autodiff of the
recurrences (JAX's are autodiff of its own).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.core.errors import ConcretizationError
from funcgrad.numpy._core import ArrayLike, promote

__all__ = ["sph_harm_y"]


def _legendre(n: Any, order: Any, theta: Any, n_max: int) -> Any:
    """``p_n^order(cos theta)``, normalized, for ``0 <= order <= n <= n_max`` (0 beyond)."""
    x, s = fnp.cos(theta), fnp.sin(theta)
    dt = x.dtype
    diag = fnp.full_like(x, 1 / math.sqrt(4 * math.pi))  # p_k^k up to k = order
    for k in range(1, n_max + 1):
        step = -math.sqrt((2 * k + 1) / (2 * k)) * s * diag
        diag = fnp.where(order >= k, step, diag)
    mf = fnp.asarray(order, dt)
    prev, cur = fnp.zeros_like(x), diag  # p_{l-1}, p_l at l = order
    out = fnp.where(n == order, cur, fnp.zeros_like(x))
    for l in range(1, n_max + 1):  # noqa: E741  (the degree, as in the formulas)
        lf = float(l)
        m2 = mf * mf
        a = fnp.sqrt(fnp.maximum((4 * lf * lf - 1) / fnp.maximum(lf * lf - m2, 1), 0))
        b = fnp.sqrt(fnp.maximum(((lf - 1) ** 2 - m2) / (4 * (lf - 1) ** 2 - 1 if l > 1 else 1), 0))
        nxt = a * (x * cur - b * prev)
        active = l > order  # (at l <= order the pair stays (0, p_order^order))
        prev, cur = fnp.where(active, cur, prev), fnp.where(active, nxt, cur)
        out = fnp.where(active & (n == l), cur, out)
    return out


def sph_harm_y(
    n: ArrayLike,
    m: ArrayLike,
    theta: ArrayLike,
    phi: ArrayLike,
    diff_n: int | None = None,
    n_max: int | None = None,
) -> Any:
    """The spherical harmonics ``Y_n^m(theta, phi)`` (``theta`` the colatitude, ``phi``
    the longitude) at 1-D arrays ``n``, ``m``, ``theta``; ``n_max`` (static) bounds ``n``."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported."
        )
    if fnp.ndim(theta) == 0:  # (a scalar colatitude: one element, as JAX's)
        theta = fnp.reshape(fnp.asarray(theta), (1,))
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n)))
        except ConcretizationError:
            n_max = None
    if n_max is None or not isinstance(n_max, (int, np.integer)):
        raise ConcretizationError(
            "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
            "specified to use `sph_harm` within JAX transformations."
        )
    n_max = int(n_max)
    theta, phi = promote("sph_harm_y", theta, phi, to="inexact")
    theta, phi = fnp.asarray(theta), fnp.asarray(phi)
    n = fnp.clip(fnp.asarray(n), 0, n_max)
    order = fnp.clip(fnp.abs(fnp.asarray(m)), 0, n_max)
    p = _legendre(n, order, theta, n_max)
    # (the phase and sign take |m| unclipped, as JAX's)
    am = fnp.abs(fnp.asarray(m))
    angle = fnp.asarray(am, theta.dtype) * phi
    cdt = np.result_type(theta.dtype, np.complex64)
    y = fnp.asarray(p * fnp.cos(angle), cdt) + fnp.asarray(p * fnp.sin(angle), cdt) * np.asarray(
        1j, cdt
    )
    sign = fnp.where(am % 2 == 1, -fnp.ones_like(p), fnp.ones_like(p))
    return fnp.where(fnp.asarray(m) < 0, fnp.asarray(sign, cdt) * fnp.conj(y), y)
