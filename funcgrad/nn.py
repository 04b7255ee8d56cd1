"""Neural-network functions built from ``funcgrad.numpy`` (composites, no new primitives)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.core import dtypes
from funcgrad.primitives.calls import stop_gradient


def relu(x: Any) -> Any:
    """``max(x, 0)``; gradient 0 at 0."""
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, fnp.zeros_like(x))


def sigmoid(x: Any) -> Any:
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    from funcgrad.primitives.elementwise import logistic

    return logistic(fnp._ufuncs._float_arg("sigmoid", x))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))`` computed stably."""
    return fnp.logaddexp(x, 0.0)


def silu(x: Any) -> Any:
    """``x * sigmoid(x)``."""
    return x * sigmoid(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit (tanh approximation by default, as in JAX)."""
    x = fnp._ufuncs._float_arg("gelu", x)
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + fnp.tanh(c * (x + 0.044715 * (x**3))))
    from funcgrad.primitives.elementwise import erf

    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def leaky_relu(x: Any, negative_slope: float = 0.01) -> Any:
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def elu(x: Any, alpha: float = 1.0) -> Any:
    x = fnp.asarray(x)
    safe = fnp.where(x > 0, 0.0, x)
    return fnp.where(x > 0, x, alpha * fnp.expm1(safe))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x)))`` along ``axis``, stable for large inputs."""
    x = fnp._ufuncs._float_arg("logsumexp", x)
    m = stop_gradient(fnp.max(x, axis=axis, keepdims=True))
    m = fnp.where(fnp.isfinite(m), m, fnp.zeros_like(m))
    s = fnp.sum(fnp.exp(x - m), axis=axis, keepdims=True)
    out = fnp.log(s) + m
    if not keepdims:
        out = fnp.squeeze(out, axis=axis) if axis is not None else fnp.reshape(out, ())
    return out


def log_softmax(x: Any, axis: int = -1) -> Any:
    """``x - logsumexp(x)`` along ``axis``."""
    x = fnp._ufuncs._float_arg("log_softmax", x)
    return x - logsumexp(x, axis=axis, keepdims=True)


def softmax(x: Any, axis: int = -1) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    x = fnp._ufuncs._float_arg("softmax", x)
    m = stop_gradient(fnp.max(x, axis=axis, keepdims=True))
    e = fnp.exp(x - m)
    return e / fnp.sum(e, axis=axis, keepdims=True)


def one_hot(x: Any, num_classes: int, dtype: Any = None, axis: int = -1) -> Any:
    """One-hot encoding of integer labels (float by default)."""
    x = fnp.asarray(x)
    dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_dtype(2)
    classes = fnp.arange(num_classes, dtype=x.dtype if x.dtype.kind in "iu" else np.int32)
    out = fnp.expand_dims(x, -1) == classes
    out = fnp.asarray(out, dt)
    if axis != -1 and axis != out.ndim - 1:
        out = fnp.moveaxis(out, -1, axis)
    return out


def standardize(x: Any, axis: int = -1, epsilon: float = 1e-5) -> Any:
    mean = fnp.mean(x, axis=axis, keepdims=True)
    var = fnp.var(x, axis=axis, keepdims=True)
    return (x - mean) / fnp.sqrt(var + epsilon)
