"""Continuous samplers built from ``uniform``, ``normal`` and the ``random_gamma`` primitive.

Each follows ``jax.random``'s recipe step for step (same key splits, same operations in the
same order) and is compiled as one unit, as JAX jits its samplers, so for a given key the
values equal ``jax.random``'s. Samples are differentiable in their parameters wherever the
recipe is (normal- and uniform-based transforms pathwise; gamma, beta, dirichlet, t,
chisquare and f through the implicit gamma gradient).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer, bind, to_aval
from funcgrad.jit import jit
from funcgrad.numpy import linalg
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import random as rp
from funcgrad.primitives.bits import nextafter_p
from funcgrad.primitives.calls import stop_gradient
from funcgrad.random._core import (
    _check_key,
    _float_dtype,
    _key_row,
    bernoulli,
    exponential,
    normal,
    placed_sampler,
    split,
    static_shape,
    uniform,
)


def _finfo(dt: np.dtype) -> Any:
    import ml_dtypes

    return ml_dtypes.finfo(dt)


def _c(v: float, dt: np.dtype) -> np.ndarray:
    return np.asarray(v, dt)


def _cast(x: Any, dt: np.dtype) -> Any:
    return ew.convert_element_type(fnp.asarray(x), dt)


def _bshape(x: Any) -> tuple[int, ...]:
    return tuple(to_aval(x).shape)


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if param_shapes:
        try:
            out = tuple(np.broadcast_shapes(shape, *param_shapes))
        except ValueError:
            out = None
        if out != shape:
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                "and the result of broadcasting the shapes must equal the shape argument, "
                f"but got result {out} for shape argument {shape}."
            )


def _broadcast_shapes(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """``shape`` checked against the parameters' shapes, or their broadcast shape if None."""
    shapes = [_bshape(p) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    shape = static_shape(name, shape)
    _check_shape(name, shape, *shapes)
    return shape


def _check_safe_cast(name: str, dt: np.dtype, *params: Any) -> None:
    for p in params:
        aval = to_aval(p)
        out, _ = dtypes.result_type((aval.dtype, aval.weak_type), (dt, False))
        if out != dt:
            raise ValueError(
                f"In arguments to {name}, cannot safely cast argument of type {aval.dtype} to {dt}"
            )


def _bcast(x: Any, shape: tuple[int, ...]) -> Any:
    return x if _bshape(x) == shape else fnp.broadcast_to(x, shape)


def _rows(key: Any, n: int) -> list:
    keys = split(key, n)
    return [_key_row(keys, i) for i in range(n)]


# --------------------------------------------------------------------------- gamma family


def _gamma(key: Any, a: Any, shape: Any, dt: np.dtype, log_space: bool) -> Any:
    if shape is None:
        shape = _bshape(a)
    else:
        _check_shape("gamma", shape, _bshape(a))
    a = _bcast(_cast(a, dt), shape)
    return rp.random_gamma(key, a, log_space=log_space)


_gamma_unit = jit(_gamma, static_argnums=(2, 3, 4))


def _gamma_args(name: str, key: Any, shape: Any, dtype: Any) -> tuple:
    key = _check_key(name, key)
    dt = _float_dtype(name, dtype)
    return key, (None if shape is None else static_shape(name, shape)), dt


@placed_sampler
def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma(``a``, 1) samples (Marsaglia–Tsang); differentiable in ``a`` by the implicit
    reparameterisation gradient."""
    key, shape, dt = _gamma_args("gamma", key, shape, dtype)
    return _gamma_unit(key, a, shape, dt, False)


@placed_sampler
def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Logs of Gamma(``a``, 1) samples, accurate for small ``a`` where samples underflow."""
    key, shape, dt = _gamma_args("loggamma", key, shape, dtype)
    return _gamma_unit(key, a, shape, dt, True)


def _beta(key: Any, a: Any, b: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    a, b = _cast(a, dt), _cast(b, dt)
    key_a, key_b = _rows(key, 2)
    a, b = _bcast(a, shape), _bcast(b, shape)
    log_ga = _gamma(key_a, a, shape, dt, True)
    log_gb = _gamma(key_b, b, shape, dt, True)
    log_max = ew.max(log_ga, log_gb)
    ga = ew.exp(ew.sub(log_ga, log_max))
    gb = ew.exp(ew.sub(log_gb, log_max))
    return ew.div(ga, ew.add(ga, gb))


_beta_unit = jit(_beta, static_argnums=(3, 4))


@placed_sampler
def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Beta(``a``, ``b``) samples, as ``Ga / (Ga + Gb)`` of two log-space gamma samples."""
    key = _check_key("beta", key)
    dt = _float_dtype("beta", dtype)
    _check_safe_cast("beta", dt, a, b)
    shape = _broadcast_shapes("beta", shape, a, b)
    return _beta_unit(key, a, b, shape, dt)


def _softmax_last(x: Any) -> Any:
    m = stop_gradient(fnp.max(x, axis=-1, keepdims=True))
    e = ew.exp(ew.sub(x, fnp.broadcast_to(m, _bshape(x))))
    return ew.div(e, fnp.broadcast_to(fnp.sum(e, axis=-1, keepdims=True), _bshape(x)))


def _dirichlet(key: Any, alpha: Any, shape: Any, dt: np.dtype) -> Any:
    ashape = _bshape(alpha)
    if shape is None:
        shape = ashape[:-1]
    else:
        _check_shape("dirichlet", shape, ashape[:-1])
    alpha = _cast(alpha, dt)
    return _softmax_last(_gamma(key, alpha, (*shape, ashape[-1]), dt, True))


_dirichlet_unit = jit(_dirichlet, static_argnums=(2, 3))


@placed_sampler
def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Dirichlet(``alpha``) samples over the last axis (softmax of log-gamma samples)."""
    key = _check_key("dirichlet", key)
    dt = _float_dtype("dirichlet", dtype)
    if to_aval(alpha).ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {0}")
    return _dirichlet_unit(
        key, alpha, None if shape is None else static_shape("dirichlet", shape), dt
    )


def _t(key: Any, df: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    df = _cast(df, dt)
    key_n, key_g = _rows(key, 2)
    n = normal(key_n, shape, dt)
    half_df = ew.div(df, _c(2, dt))
    g = _gamma(key_g, half_df, shape, dt, False)
    return ew.mul(n, fnp.sqrt(ew.div(_bcast(half_df, shape), g)))


_t_unit = jit(_t, static_argnums=(2, 3))


@placed_sampler
def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t samples with ``df`` degrees of freedom."""
    key = _check_key("t", key)
    dt = _float_dtype("t", dtype)
    shape = _broadcast_shapes("t", shape, df)
    _check_safe_cast("t", dt, df)
    return _t_unit(key, df, shape, dt)


def _chisquare(key: Any, df: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    df = _cast(df, dt)
    two = _c(2, dt)
    log_g = _gamma(key, ew.div(df, two), shape, dt, True)
    return ew.mul(ew.exp(log_g), two)


_chisquare_unit = jit(_chisquare, static_argnums=(2, 3))


@placed_sampler
def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Chi-square samples with ``df`` degrees of freedom (``2 · Gamma(df / 2)``)."""
    key = _check_key("chisquare", key)
    dt = _float_dtype("chisquare", dtype)
    shape = _broadcast_shapes("chisquare", shape, df)
    _check_safe_cast("chisquare", dt, df)
    return _chisquare_unit(key, df, shape, dt)


def _f(key: Any, dfnum: Any, dfden: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    dfden, dfnum = _cast(dfden, dt), _cast(dfnum, dt)
    key_dfd, key_dfn = _rows(key, 2)
    chi2_dfn = _chisquare(key_dfn, dfnum, shape, dt)
    chi2_dfd = _chisquare(key_dfd, dfden, shape, dt)
    return ew.div(ew.div(chi2_dfn, _bcast(dfnum, shape)), ew.div(chi2_dfd, _bcast(dfden, shape)))


_f_unit = jit(_f, static_argnums=(3, 4))


@placed_sampler
def f(
    key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """F-distribution samples with ``dfnum`` and ``dfden`` degrees of freedom."""
    key = _check_key("f", key)
    dt = _float_dtype("f", dtype)
    shape = _broadcast_shapes("f", shape, dfnum, dfden)
    _check_safe_cast("f", dt, dfnum, dfden)
    return _f_unit(key, dfnum, dfden, shape, dt)


def _generalized_normal(key: Any, p: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    k0, k1 = _rows(key, 2)
    inv_p = ew.div(_c(1, dt), _cast(p, dt)) if isinstance(p, Tracer) else 1 / p
    g = _gamma(k0, _full_param(inv_p, dt, shape), shape, dt, False)
    r = _rademacher(k1, shape, dt)
    return ew.mul(r, fnp.power(g, inv_p))


def _full_param(x: Any, dt: np.dtype, shape: tuple[int, ...]) -> Any:
    return _bcast(_cast(x, dt), shape)


_generalized_normal_unit = jit(_generalized_normal, static_argnums=(2, 3))


@placed_sampler
def generalized_normal(key: Any, p: float, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Generalized normal samples with shape parameter ``p`` (density ∝ ``exp(-|x|^p)``)."""
    key = _check_key("generalized_normal", key)
    dt = _float_dtype("generalized_normal", dtype)
    return _generalized_normal_unit(key, p, static_shape("generalized_normal", shape), dt)


def _ball(key: Any, p: Any, d: int, shape: tuple[int, ...], dt: np.dtype) -> Any:
    k1, k2 = _rows(key, 2)
    g = _generalized_normal(k1, p, (*shape, d), dt)
    e = exponential(k2, shape, dt)
    inv_p = 1 / p if not isinstance(p, Tracer) else ew.div(_c(1, dt), _cast(p, dt))
    s = fnp.sum(fnp.power(fnp.abs(g), p), axis=-1)
    return fnp.divide(g, fnp.power(ew.add(s, e), inv_p)[..., None])


_ball_unit = jit(_ball, static_argnums=(2, 3, 4))


@placed_sampler
def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Points uniform in the unit ``p``-norm ball of dimension ``d``: ``shape + (d,)``."""
    key = _check_key("ball", key)
    dt = _float_dtype("ball", dtype)
    if isinstance(d, Tracer):
        raise TypeError("ball: the dimension `d` must be a concrete int")
    return _ball_unit(key, p, int(d), static_shape("ball", shape), dt)


# --------------------------------------------------------------------------- normal family


def _truncated_normal(key: Any, lower: Any, upper: Any, shape: Any, dt: np.dtype) -> Any:
    if shape is None:
        shape = tuple(np.broadcast_shapes(_bshape(lower), _bshape(upper)))
    else:
        _check_shape("truncated_normal", shape, _bshape(lower), _bshape(upper))
    sqrt2 = _c(np.sqrt(2), dt)
    lower, upper = _cast(lower, dt), _cast(upper, dt)
    a = ew.erf(ew.div(lower, sqrt2))
    b = ew.erf(ew.div(upper, sqrt2))
    u = uniform(key, shape, dt, minval=a, maxval=b)
    out = ew.mul(sqrt2, ew.erf_inv(u))
    # clamped to the open interval: the exact neighbours of the bounds, as JAX
    lo = bind(nextafter_p, stop_gradient(lower), _c(np.inf, dt))
    hi = bind(nextafter_p, stop_gradient(upper), _c(-np.inf, dt))
    return fnp.clip(out, lo, hi)


_truncated_normal_unit = jit(_truncated_normal, static_argnums=(3, 4))


@placed_sampler
def truncated_normal(
    key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """Standard normal samples truncated to ``(lower, upper)`` (inverse CDF)."""
    key = _check_key("truncated_normal", key)
    dt = _float_dtype("truncated_normal", dtype)
    shape = None if shape is None else static_shape("truncated_normal", shape)
    return _truncated_normal_unit(key, lower, upper, shape, dt)


def _multivariate_normal(
    key: Any, mean: Any, cov: Any, shape: Any, dt: np.dtype, method: str
) -> Any:

    n = _bshape(mean)[-1]
    if shape is None:
        shape = tuple(np.broadcast_shapes(_bshape(mean)[:-1], _bshape(cov)[:-2]))
    else:
        _check_shape("normal", shape, _bshape(mean)[:-1], _bshape(cov)[:-2])
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = fnp.multiply(u, fnp.sqrt(s[..., None, :]))
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = fnp.multiply(v, fnp.sqrt(w[..., None, :]))
    else:
        factor = linalg.cholesky(cov)
    z = normal(key, (*shape, n), dt)
    return fnp.add(mean, fnp.einsum("...ij,...j->...i", factor, z))


_multivariate_normal_unit = jit(_multivariate_normal, static_argnums=(3, 4, 5))


@placed_sampler
def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    method: str = "cholesky",
) -> Any:
    """Samples of N(``mean``, ``cov``): ``mean + factor @ z`` with ``factor`` from a Cholesky,
    eigen or singular-value decomposition of ``cov``; shape ``shape + mean.shape[-1:]``."""
    key = _check_key("multivariate_normal", key)
    mean, cov = fnp.asarray(mean), fnp.asarray(cov)
    mdt = dtypes.to_inexact(
        dtypes.result_type(*[(to_aval(x).dtype, False) for x in (mean, cov)])[0]
    )
    mean, cov = mean.astype(mdt), cov.astype(mdt)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dt = mdt if dtype is None else _float_dtype("multivariate_normal", dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dt}")
    if to_aval(mean).ndim < 1:
        raise ValueError(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {to_aval(mean).ndim}"
        )
    if to_aval(cov).ndim < 2:
        raise ValueError(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {to_aval(cov).ndim}"
        )
    n = _bshape(mean)[-1]
    if _bshape(cov)[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {_bshape(cov)}."
        )
    shape = None if shape is None else static_shape("multivariate_normal", shape)
    return _multivariate_normal_unit(key, mean, cov, shape, dt, method)


_ONE_F32 = np.float32(1)


def _lognormal(key: Any, sigma: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    sigma = _cast(sigma, dt)
    return ew.exp(ew.mul(normal(key, shape, dt), _bcast(sigma, shape)))


_lognormal_unit = jit(_lognormal, static_argnums=(2, 3))


@placed_sampler
def lognormal(
    key: Any, sigma: Any = _ONE_F32, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """Log-normal samples: ``exp(sigma · z)``."""
    key = _check_key("lognormal", key)
    dt = _float_dtype("lognormal", dtype)
    shape = _broadcast_shapes("lognormal", shape, sigma)
    _check_safe_cast("lognormal", dt, sigma)
    return _lognormal_unit(key, sigma, shape, dt)


def _maxwell(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    z = normal(key, (*shape, 3), dt)
    return fnp.sqrt(fnp.sum(ew.mul(z, z), axis=-1))


_maxwell_unit = jit(_maxwell, static_argnums=(1, 2))


@placed_sampler
def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Maxwell samples: the norm of a 3-d standard normal vector."""
    key = _check_key("maxwell", key)
    return _maxwell_unit(key, static_shape("maxwell", shape), _float_dtype("maxwell", dtype))


def _double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: tuple[int, ...], dt: np.dtype
) -> Any:
    params = tuple(np.broadcast_shapes(_bshape(loc), _bshape(scale)))
    if not shape:
        shape = params
    shape = (*shape, *params)
    k_m, k_r = _rows(key, 2)
    m = _maxwell(k_m, shape, dt)
    sign = _rademacher(k_r, shape, dt)
    return fnp.add(fnp.multiply(ew.mul(sign, m), scale), loc)


_double_sided_maxwell_unit = jit(_double_sided_maxwell, static_argnums=(3, 4))


def double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Any:
    """Double-sided Maxwell samples: a random sign times a Maxwell sample, scaled and shifted;
    the result has shape ``shape + broadcast(loc, scale).shape``."""
    key = _check_key("double_sided_maxwell", key)
    dt = _float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell_unit(
        key, loc, scale, static_shape("double_sided_maxwell", shape), dt
    )


def _rademacher(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    b = ew.convert_element_type(bernoulli(key, 0.5, shape), dt)
    return ew.convert_element_type(ew.sub(ew.mul(_c(2, dt), b), _c(1, dt)), dt)


_rademacher_unit = jit(_rademacher, static_argnums=(1, 2))


@placed_sampler
def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Random signs ±1 with equal probability (integers by default)."""
    key = _check_key("rademacher", key)
    dt = dtypes.canonicalize(np.int64 if dtype is None else dtype)
    return _rademacher_unit(key, static_shape("rademacher", shape), dt)


# --------------------------------------------------------------------------- uniform transforms


def _simple(name: str, transform: Any) -> Any:
    """A parameterless sampler ``transform(key, shape, dt)`` with JAX's checks, compiled."""
    unit = jit(transform, static_argnums=(1, 2))

    def sampler(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
        key = _check_key(name, key)
        return unit(key, static_shape(name, shape), _float_dtype(name, dtype))

    sampler.__name__ = sampler.__qualname__ = name
    return placed_sampler(sampler)


def _cauchy(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    u = uniform(key, shape, dt, minval=float(_finfo(dt).eps), maxval=1.0)
    return ew.tan(ew.mul(_c(np.pi, dt), ew.sub(u, _c(0.5, dt))))


def _laplace(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    u = uniform(key, shape, dt, minval=-1.0 + float(_finfo(dt).epsneg), maxval=1.0)
    return ew.mul(ew.sign(u), ew.log1p(ew.neg(ew.abs(u))))


def _logistic(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    x = uniform(key, shape, dt, minval=float(_finfo(dt).tiny), maxval=1.0)
    return ew.sub(ew.log(x), ew.log1p(ew.neg(x)))


cauchy = _simple("cauchy", _cauchy)
cauchy.__doc__ = """Standard Cauchy samples: ``tan(π (u - 1/2))``."""
laplace = _simple("laplace", _laplace)
laplace.__doc__ = """Standard Laplace samples: ``sign(u) · log1p(-|u|)`` for ``u`` in (-1, 1)."""
logistic = _simple("logistic", _logistic)
logistic.__doc__ = """Standard logistic samples: ``log(u) - log1p(-u)``."""


def _pareto(key: Any, b: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    b = _cast(b, dt)
    e = exponential(key, shape, dt)
    return ew.exp(ew.div(e, _bcast(b, shape)))


_pareto_unit = jit(_pareto, static_argnums=(2, 3))


@placed_sampler
def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto samples with shape ``b``: ``exp(E / b)`` for a standard exponential ``E``."""
    key = _check_key("pareto", key)
    dt = _float_dtype("pareto", dtype)
    shape = _broadcast_shapes("pareto", shape, b)
    _check_safe_cast("pareto", dt, b)
    return _pareto_unit(key, b, shape, dt)


def _weibull_min(key: Any, scale: Any, concentration: Any, shape: tuple, dt: np.dtype) -> Any:
    u = uniform(key, shape, dt, minval=0, maxval=1)
    e = ew.neg(ew.log1p(ew.neg(u)))
    inv = ew.div(1.0, concentration) if isinstance(concentration, Tracer) else 1.0 / concentration
    return fnp.multiply(fnp.power(e, inv), scale)


_weibull_min_unit = jit(_weibull_min, static_argnums=(3, 4))


def weibull_min(
    key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (), dtype: Any = None
) -> Any:
    """Weibull samples: ``scale · E^(1 / concentration)`` for a standard exponential ``E``."""
    key = _check_key("weibull_min", key)
    dt = _float_dtype("weibull_min", dtype)
    return _weibull_min_unit(key, scale, concentration, static_shape("weibull_min", shape), dt)


def _rayleigh(key: Any, scale: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    u = uniform(key, shape, dt)
    scale = _bcast(_cast(scale, dt), shape)
    return ew.mul(scale, ew.sqrt(ew.mul(ew.log(u), _c(-2, dt))))


_rayleigh_unit = jit(_rayleigh, static_argnums=(2, 3))


@placed_sampler
def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Rayleigh samples: ``scale · sqrt(-2 log u)``."""
    key = _check_key("rayleigh", key)
    dt = _float_dtype("rayleigh", dtype)
    shape = _broadcast_shapes("rayleigh", shape, scale)
    _check_safe_cast("rayleigh", dt, scale)
    return _rayleigh_unit(key, scale, shape, dt)


def _wald(key: Any, mean: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    k1, k2 = _rows(key, 2)
    mean = _bcast(_cast(mean, dt), shape)
    v = normal(k1, shape, dt)
    z = uniform(k2, shape, dt)
    y = ew.mul(v, v)
    y_sq = ew.mul(y, y)
    mean_sq = ew.mul(mean, mean)
    sqrt_term = ew.sqrt(ew.add(ew.mul(ew.mul(_c(4, dt), mean), y), ew.mul(mean_sq, y_sq)))
    x = ew.add(mean, ew.div(ew.mul(mean_sq, y), _c(2, dt)))
    x = ew.sub(x, ew.mul(ew.div(mean, _c(2, dt)), sqrt_term))
    return ew.select_n(ew.le(z, ew.div(mean, ew.add(mean, x))), ew.div(mean_sq, x), x)


_wald_unit = jit(_wald, static_argnums=(2, 3))


@placed_sampler
def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) samples with ``mean`` and unit shape."""
    key = _check_key("wald", key)
    dt = _float_dtype("wald", dtype)
    shape = _broadcast_shapes("wald", shape, mean)
    _check_safe_cast("wald", dt, mean)
    return _wald_unit(key, mean, shape, dt)


def _triangular(
    key: Any, left: Any, mode: Any, right: Any, shape: tuple[int, ...], dt: np.dtype
) -> Any:
    left, right, mode = (_bcast(_cast(x, dt), shape) for x in (left, right, mode))
    fc = ew.div(ew.sub(mode, left), ew.sub(right, left))
    u = uniform(key, shape, dt)
    out1 = ew.add(left, ew.sqrt(ew.mul(ew.mul(u, ew.sub(right, left)), ew.sub(mode, left))))
    q = ew.sub(_c(1, dt), u)
    out2 = ew.sub(right, ew.sqrt(ew.mul(ew.mul(q, ew.sub(right, left)), ew.sub(right, mode))))
    return ew.select_n(ew.lt(u, fc), out2, out1)


_triangular_unit = jit(_triangular, static_argnums=(4, 5))


@placed_sampler
def triangular(
    key: Any,
    left: Any,
    mode: Any,
    right: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
) -> Any:
    """Triangular samples on ``[left, right]`` with peak at ``mode`` (inverse CDF)."""
    key = _check_key("triangular", key)
    dt = _float_dtype("triangular", dtype)
    shape = _broadcast_shapes("triangular", shape, left, mode, right)
    _check_safe_cast("triangular", dt, left, mode, right)
    return _triangular_unit(key, left, mode, right, shape, dt)


def _orthogonal(key: Any, n: int, m: int, shape: tuple[int, ...], dt: np.dtype) -> Any:

    z = normal(key, (*shape, max(n, m), min(n, m)), dt)
    q, r = linalg.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = ew.mul(q, fnp.broadcast_to(fnp.expand_dims(fnp.sign(d), -2), _bshape(q)))
    return fnp.swapaxes(x, -1, -2) if n < m else x


_orthogonal_unit = jit(_orthogonal, static_argnums=(1, 2, 3, 4))


@placed_sampler
def orthogonal(
    key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None, m: int | None = None
) -> Any:
    """Random ``n × m`` matrices with orthonormal columns (or rows), Haar-distributed
    (QR of a Gaussian matrix with the signs of ``R``'s diagonal folded into ``Q``)."""
    key = _check_key("orthogonal", key)
    dt = _float_dtype("orthogonal", dtype)
    if isinstance(n, Tracer) or isinstance(m, Tracer):
        raise TypeError("orthogonal: n and m must be concrete ints")
    n = int(n)
    m = n if m is None else int(m)
    return _orthogonal_unit(key, n, m, static_shape("orthogonal", shape), dt)
