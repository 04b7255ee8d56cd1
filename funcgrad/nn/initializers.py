"""Parameter initializers with ``jax.nn.initializers``' names, signatures and values.

Each builder returns an initializer ``init(key, shape, dtype=None)``; with the same
key the values are bit for bit those of JAX (the same samplers, the same order of
float operations in the same dtype).

    >>> import funcgrad as fg
    >>> from funcgrad.nn import initializers
    >>> w = initializers.glorot_normal()(fg.random.key(0), (3, 4))
    >>> w.shape
    (3, 4)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from funcgrad import numpy as fnp
from funcgrad import random
from funcgrad.core import dtypes
from funcgrad.jit import jit
from funcgrad.primitives import elementwise as ew
from funcgrad.random._core import static_shape
from funcgrad.sharding import reshard

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]

Axes = int | Sequence[int]


@runtime_checkable
class Initializer(Protocol):
    """What every builder here returns: ``init(key, shape, dtype=None) -> array``."""

    def __call__(
        self, key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None
    ) -> Any:
        """A new array of ``shape`` and ``dtype`` (the default float dtype when ``None``) drawn with ``key``."""
        ...


def _dtype(dtype: Any) -> np.dtype:
    return dtypes.canonicalize(np.float64 if dtype is None else dtype)


def _placing(init: Any) -> Any:
    """``init`` with its result resharded to the ``out_sharding`` it is given (JAX's
    keyword; the values do not depend on the placement)."""

    @functools.wraps(init)
    def run(key: Any, shape: Sequence[int], *rest: Any, **kw: Any) -> Any:
        target = kw.pop("out_sharding", None)
        if len(rest) > 1:
            target, rest = rest[1], rest[:1] + rest[2:]
        x = init(key, shape, *rest, **kw)
        return x if target is None else reshard(x, target)

    return run


def _scale(x: Any, s: Any, dt: np.dtype) -> Any:
    """``x * s`` in ``dt`` (``s`` a host scalar rounded to ``dt`` first, as JAX's
    ``jnp.array(s, dtype)``)."""
    return ew.mul(x, np.asarray(s, dt))


# --------------------------------------------------------------------------- constant


@_placing
def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of zeros (``key`` is ignored)."""
    return fnp.zeros(static_shape("zeros", shape), _dtype(dtype))


@_placing
def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of ones (``key`` is ignored)."""
    return fnp.ones(static_shape("ones", shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling arrays with ``value``."""

    @_placing
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        return fnp.full(static_shape("constant", shape), value, dtype=_dtype(dtype))

    return init


# --------------------------------------------------------------------------- random


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``."""

    @_placing
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        dt = _dtype(dtype)
        return _scale(random.uniform(key, shape, dt), scale, dt)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a centred normal with standard deviation ``stddev``."""

    @_placing
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        dt = _dtype(dtype)
        return _scale(random.normal(key, shape, dt), stddev, dt)

    return init


def _truncated_normal_impl(
    key: Any, lower: float, upper: float, shape: tuple[int, ...], dt: np.dtype
) -> Any:
    # inverse CDF of a uniform on [erf(lower/√2), erf(upper/√2)), clamped to the open
    # interval (JAX's recipe, so the bits agree)
    sqrt2 = np.asarray(np.sqrt(2), dt)
    lo, hi = np.asarray(lower, dt), np.asarray(upper, dt)
    a = ew.erf(np.asarray(lo / sqrt2, dt))
    b = ew.erf(np.asarray(hi / sqrt2, dt))
    u = random.uniform(key, shape, dt, minval=a, maxval=b)
    out = ew.mul(sqrt2, ew.erf_inv(u))
    lo_open = np.nextafter(lo, np.asarray(np.inf, dt))
    hi_open = np.nextafter(hi, np.asarray(-np.inf, dt))
    return ew.min(ew.max(out, lo_open), hi_open)


_truncated_normal_unit = jit(_truncated_normal_impl, static_argnums=(1, 2, 3, 4))


def _truncated_normal(key: Any, lower: float, upper: float, shape: Any, dt: np.dtype) -> Any:
    """Standard normal samples truncated to ``(lower, upper)``:
    ``funcgrad.random.truncated_normal`` where it exists, else the same recipe here."""
    shape = static_shape("truncated_normal", shape)
    if not dtypes.is_float(dt):
        raise TypeError("truncated_normal only accepts floating point dtypes.")
    sampler = getattr(random, "truncated_normal", None)
    if sampler is not None:
        return sampler(key, lower, upper, shape, dt)
    key = random._check_key("truncated_normal", key)
    return _truncated_normal_unit(key, float(lower), float(upper), shape, dt)


def truncated_normal(
    stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0
) -> Initializer:
    """An initializer drawing from a normal truncated to ``(lower, upper)`` standard
    deviations, then scaled by ``stddev`` (no variance correction, as JAX)."""

    @_placing
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        dt = _dtype(dtype)
        return _scale(_truncated_normal(key, lower, upper, shape, dt), stddev, dt)

    return init


# --------------------------------------------------------------------------- variance scaling


def _axis_size(shape: tuple[int, ...], axes: Axes) -> int:
    if isinstance(axes, (int, np.integer)):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(
    shape: tuple[int, ...], in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = ()
) -> tuple[float, float]:
    """(fan_in, fan_out) of a dense or convolution kernel: axes outside the in, out and
    batch axes form the receptive field."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly."
        )
    in_size = _axis_size(shape, in_axis)
    out_size = _axis_size(shape, out_axis)
    batch_size = _axis_size(shape, batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def _complex_uniform(key: Any, shape: tuple[int, ...], dt: np.dtype) -> Any:
    # uniform on the unit-variance disk: radius sqrt(2u), angle 2πv
    k_r, k_t = random.split(key)
    real = np.finfo(dt).dtype
    r = fnp.asarray(fnp.sqrt(2 * random.uniform(k_r, shape, real)), dt)
    theta = 2 * np.pi * fnp.asarray(random.uniform(k_t, shape, real), dt)
    return r * fnp.exp(1j * theta)


def _complex_truncated_normal(key: Any, upper: float, shape: tuple[int, ...], dt: np.dtype) -> Any:
    k_r, k_t = random.split(key)
    real = np.finfo(dt).dtype
    t = (1 - fnp.exp(fnp.asarray(-(upper**2), dt))) * fnp.asarray(
        random.uniform(k_r, shape, real), dt
    )
    r = fnp.sqrt(-fnp.log(1 - t))
    theta = 2 * np.pi * fnp.asarray(random.uniform(k_t, shape, real), dt)
    return r * fnp.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(
    scale: Any,
    mode: Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"],
    distribution: Literal["truncated_normal", "normal", "uniform"],
    in_axis: Axes = -2,
    out_axis: Axes = -1,
    batch_axis: Axes = (),
    dtype: Any = None,
) -> Initializer:
    """An initializer whose variance is ``scale / n``, ``n`` the kernel's fan chosen by
    ``mode``; ``distribution`` picks a (2σ-truncated) normal or a uniform."""

    @_placing
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        shp = static_shape("variance_scaling", shape)
        dt = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shp, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = np.asarray(scale / denominator, dt)
        cplx = dt.kind == "c"
        if distribution == "truncated_normal":
            if not cplx:
                stddev = np.sqrt(variance) / np.asarray(0.87962566103423978, dt)
                return _scale(_truncated_normal(key, -2, 2, shp, dt), stddev, dt)
            stddev = np.sqrt(variance) / np.asarray(0.95311164380491208, dt)
            return _complex_truncated_normal(key, 2, shp, dt) * stddev
        if distribution == "normal":
            return _scale(random.normal(key, shp, dt), np.sqrt(variance), dt)
        if distribution == "uniform":
            if not cplx:
                u = random.uniform(key, shp, dt, -1)
                return _scale(u, np.sqrt(np.asarray(3 * variance, dt)), dt)
            return _complex_uniform(key, shp, dt) * np.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def glorot_uniform(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None
) -> Initializer:
    """Glorot (Xavier) uniform: ``variance_scaling(1.0, "fan_avg", "uniform")``."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None
) -> Initializer:
    """Glorot (Xavier) normal: ``variance_scaling(1.0, "fan_avg", "truncated_normal")``."""
    return variance_scaling(
        1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype
    )


def lecun_uniform(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None
) -> Initializer:
    """LeCun uniform: ``variance_scaling(1.0, "fan_in", "uniform")``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None
) -> Initializer:
    """LeCun normal: ``variance_scaling(1.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None
) -> Initializer:
    """He (Kaiming) uniform: ``variance_scaling(2.0, "fan_in", "uniform")``."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(
    in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None
) -> Initializer:
    """He (Kaiming) normal: ``variance_scaling(2.0, "fan_in", "truncated_normal")``."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# --------------------------------------------------------------------------- orthogonal


def _random_orthogonal(key: Any, n: int, dt: np.dtype, m: int) -> Any:
    sampler = getattr(random, "orthogonal", None)
    if sampler is None:
        raise NotImplementedError(
            "nn.initializers.orthogonal needs funcgrad.random.orthogonal (a QR "
            "decomposition), which this build of funcgrad does not have yet"
        )
    return sampler(key, n, (), dt, m)


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (semi-)orthogonal matrices: the columns along ``column_axis``
    are orthonormal, times ``scale``."""

    @_placing
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        shp = static_shape("orthogonal", shape)
        dt = _dtype(dtype)
        if len(shp) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shp):
            return fnp.zeros(shp, dt)
        n_cols = shp[column_axis]
        n_rows = math.prod(shp) // n_cols
        q = _random_orthogonal(key, n_rows, dt, n_cols)
        rest = tuple(np.delete(np.asarray(shp), column_axis).tolist())
        q = fnp.moveaxis(fnp.reshape(q, (*rest, n_cols)), -1, column_axis)
        return ew.mul(np.asarray(scale, dt), q)

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer for 3-5D convolution kernels: zero except an orthogonal matrix
    at the spatial centre (the delta-orthogonal scheme of Xiao et al., 2018)."""

    @_placing
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        shp = static_shape("delta_orthogonal", shape)
        dt = _dtype(dtype)
        if len(shp) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shp[-1] < shp[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        mat = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shp[-2:])
        centre = tuple((k - 1) // 2 for k in shp[:-2])
        return fnp.zeros(shp, dt).at[centre].set(mat)

    return init
