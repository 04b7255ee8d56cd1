"""Count samplers: poisson, binomial, multinomial, geometric (``jax.random``'s algorithms).

Poisson uses Knuth's product of uniforms for ``lam < 10`` and Hörmann's transformed
rejection (PTRS) above; binomial uses geometric-sum inversion for ``n·min(p, 1-p) <= 10``
and Hörmann's BTRS above. Both run whole-array ``while_loop``s with JAX's key splits, so
for a given key the counts equal ``jax.random``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import scan, while_loop
from funcgrad.core import dtypes
from funcgrad.core.interp import to_aval
from funcgrad.jit import jit
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as rd
from funcgrad.random._continuous import _broadcast_shapes, _check_shape
from funcgrad.random._core import (
    _check_key,
    _key_row,
    placed_sampler,
    split,
    static_shape,
    uniform,
)

_F32 = np.dtype("float32")


def _rows(key: Any, n: int) -> list:
    keys = split(key, n)
    return [_key_row(keys, i) for i in range(n)]


def _int_dtype(name: str, dtype: Any) -> np.dtype:
    dt = dtypes.canonicalize(np.int64 if dtype is None else dtype)
    if not dtypes.is_integer(dt):
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dt}")
    return dt


# --------------------------------------------------------------------------- poisson


def _poisson_knuth(key: Any, lam: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    def body(carry: tuple) -> tuple:
        i, k, rng, log_prod = carry
        rng, sub = _rows(rng, 2)
        k = fnp.where(log_prod > -lam, k + 1, k)
        u = uniform(sub, shape, _F32)
        return i + 1, k, rng, log_prod + fnp.log(u)

    def cond(carry: tuple) -> Any:
        return fnp.any(carry[3] > -lam)

    init = (np.int32(0), fnp.zeros(shape, dt), key, fnp.zeros(shape, _F32))
    k = while_loop(cond, body, init)[1]
    return (k - 1).astype(dt)


def _poisson_rejection(key: Any, lam: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    log_lam = fnp.log(lam)
    b = 0.931 + 2.53 * fnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry: tuple) -> tuple:
        i, k_out, accepted, rng = carry
        rng, k0, k1 = _rows(rng, 3)
        u = uniform(k0, shape, _F32) - 0.5
        v = uniform(k1, shape, _F32)
        us = 0.5 - fnp.abs(u)
        k = fnp.floor((2 * a / us + b) * u + lam + 0.43)
        s = fnp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - ew.lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, fnp.where(accept, k, k_out), accepted | accept, rng

    def cond(carry: tuple) -> Any:
        return fnp.any(~carry[2])

    init = (np.int32(0), fnp.full(shape, -1.0, _F32), fnp.zeros(shape, bool), key)
    return while_loop(cond, body, init)[1].astype(dt)


def _poisson(key: Any, lam: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    use_knuth = (lam != lam) | (lam < 10)
    lam_knuth = fnp.where(use_knuth, lam, np.float32(0))
    lam_rej = fnp.where(use_knuth, np.float32(100000.0), lam)
    result = fnp.where(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dt),
        _poisson_rejection(key, lam_rej, shape, dt),
    )
    return fnp.where(lam == 0, fnp.zeros_like(result), result)


_poisson_unit = jit(_poisson, static_argnums=(2, 3))


@placed_sampler
def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Poisson(``lam``) counts (Knuth below 10, transformed rejection above)."""
    key = _check_key("poisson", key)
    dt = _int_dtype("poisson", dtype)
    shape = tuple(to_aval(lam).shape) if shape is None else static_shape("poisson", shape)
    lam = fnp.broadcast_to(lam, shape).astype(_F32)
    return _poisson_unit(key, lam, shape, dt)


# --------------------------------------------------------------------------- binomial

_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.010411265261972,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_approx_tail(k: Any) -> Any:
    table = fnp.asarray(np.asarray(_STIRLING_TAIL, to_aval(k).dtype))
    use_table = k <= 9
    k = fnp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    idx = fnp.floor(k).astype(np.int32)
    return fnp.where(use_table, fnp.take(table, idx), approx)


def _binomial_inversion(key: Any, count: Any, prob: Any, shape: tuple[int, ...]) -> Any:
    pdt = to_aval(prob).dtype
    log1mp = fnp.log1p(-prob)

    def body(carry: tuple) -> tuple:
        i, num_geom, geom_sum, rng = carry
        sub, rng = _rows(rng, 2)
        num_geom_out = fnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(sub, shape, pdt)
        geom = fnp.ceil(fnp.log(u) / log1mp)
        return i + 1, num_geom_out, geom_sum + geom, rng

    def cond(carry: tuple) -> Any:
        return fnp.any(carry[2] <= count)

    init = (np.int32(0), fnp.zeros(shape, pdt), fnp.zeros(shape, pdt), key)
    return while_loop(cond, body, init)[1] - 1


def _btrs(key: Any, count: Any, prob: Any, shape: tuple[int, ...]) -> Any:
    pdt = to_aval(prob).dtype
    stddev = fnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = fnp.floor((count + 1) * prob)
    st = _stirling_approx_tail

    def body(carry: tuple) -> tuple:
        i, k_out, accepted, rng = carry
        rng, k0, k1 = _rows(rng, 3)
        u = uniform(k0, shape, pdt)
        v = uniform(k1, shape, pdt)
        u = u - 0.5
        us = 0.5 - fnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = fnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = fnp.log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * fnp.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * fnp.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * fnp.log(r * (count - k + 1) / (k + 1))
            + st(m)
            + st(count - m)
            - st(k)
            - st(count - k)
        )
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, fnp.where(accept, k, k_out), accepted | accept, rng

    def cond(carry: tuple) -> Any:
        return fnp.any(~carry[2])

    init = (np.int32(0), fnp.full(shape, -1, pdt), fnp.zeros(shape, bool), key)
    return while_loop(cond, body, init)[1]


def _binomial(key: Any, count: Any, prob: Any, shape: Any, dt: np.dtype) -> Any:
    if shape is None:
        shape = tuple(np.broadcast_shapes(to_aval(count).shape, to_aval(prob).shape))
    else:
        _check_shape("binomial", shape, to_aval(count).shape, to_aval(prob).shape)
    prob = fnp.asarray(prob)
    if not dtypes.is_inexact(to_aval(prob).dtype):
        prob = prob.astype(dtypes.to_inexact(to_aval(prob).dtype))
    count = fnp.broadcast_to(fnp.asarray(count).astype(to_aval(prob).dtype), shape)
    prob = fnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = fnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = (count != count) | (count < 0.0)
    count_inf = fnp.isinf(count)
    q_is_nan = q != q
    q_l_0 = q < 0.0
    q = fnp.where(q_is_nan | q_l_0, fnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = fnp.floor(count)
    count_inv = fnp.where(use_inversion, count, fnp.full_like(count, 0.0))
    count_btrs = fnp.where(use_inversion, fnp.full_like(count, 10000.0), count)
    q_btrs = fnp.where(use_inversion, fnp.full_like(q, 0.5), q)
    samples = fnp.where(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape).astype(dt),
        _btrs(key, count_btrs, q_btrs, shape).astype(dt),
    )
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = fnp.where(invalid, fnp.full_like(samples, np.nan, dt), samples)
    samples = fnp.where(count_inf & ~invalid, fnp.full_like(samples, np.inf, dt), samples)
    keep = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return fnp.where(keep, samples, count.astype(dt) - samples)


_binomial_unit = jit(_binomial, static_argnums=(3, 4))


def _float_out(name: str, dtype: Any) -> np.dtype:
    dt = dtypes.canonicalize(np.float64 if dtype is None else dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


def binomial(
    key: Any, n: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Any:
    """Binomial(``n``, ``p``) counts, as floats (inversion for small means, BTRS above)."""
    key = _check_key("binomial", key)
    dt = _float_out("binomial", dtype)
    return _binomial_unit(key, n, p, None if shape is None else static_shape("binomial", shape), dt)


def multinomial(
    key: Any,
    n: Any,
    p: Any,
    *,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    unroll: int | bool = 1,
) -> Any:
    """Multinomial(``n``, ``p``) counts over the last axis, as a chain of binomials."""
    key = _check_key("multinomial", key)
    n, p = fnp.asarray(n), fnp.asarray(p)
    res, _ = dtypes.result_type(*[(to_aval(x).dtype, to_aval(x).weak_type) for x in (n, p)])
    fdt = dtypes.canonicalize(dtypes.to_inexact(res))
    n, p = n.astype(fdt), p.astype(fdt)
    shape = tuple(to_aval(p).shape) if shape is None else static_shape("multinomial", shape)
    n = fnp.broadcast_to(n, shape[:-1])
    p = fnp.broadcast_to(p, shape)
    p = fnp.moveaxis(p, -1, 0)
    remaining = rd.cumsum(p, axis=0, reverse=True)
    ratios = p / fnp.where(remaining == 0, 1, remaining)
    keys = split(key, to_aval(ratios).shape[0])

    def step(remainder: Any, ratio_key: tuple) -> tuple:
        ratio, k = ratio_key
        count = _binomial(k, remainder, fnp.clip(ratio, 0, 1), None, to_aval(remainder).dtype)
        return remainder - count, count

    _, counts = scan(step, n, (ratios, keys))
    out_dt = fdt if dtype is None else dtypes.canonicalize(dtype)
    return fnp.moveaxis(counts, 0, -1).astype(out_dt)


def _geometric(key: Any, p: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    p = fnp.asarray(p)
    if not dtypes.is_inexact(to_aval(p).dtype):
        p = p.astype(dtypes.to_inexact(to_aval(p).dtype))
    u = uniform(key, shape, to_aval(p).dtype)
    u = fnp.where(u == 0, 1, u)
    log_u = fnp.log(u)
    log_1mp = fnp.broadcast_to(fnp.log1p(-p), shape)
    return (fnp.floor(log_u / log_1mp) + 1).astype(dt)


_geometric_unit = jit(_geometric, static_argnums=(2, 3))


@placed_sampler
def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Geometric(``p``) counts of trials up to the first success (at least 1)."""
    key = _check_key("geometric", key)
    dt = _int_dtype("geometric", dtype)
    shape = _broadcast_shapes("geometric", shape, p)
    return _geometric_unit(key, p, shape, dt)
