"""Activation and normalisation functions of ``jax.nn``, built from ``funcgrad.numpy``
(composites: no primitives of their own), with JAX's definitions and derivative
conventions (e.g. ``relu'(0) = 0``)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.core import dtypes
from funcgrad.core.errors import ConcretizationError
from funcgrad.core.reduction_row import Reduction, TorchReduction
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import ArrayLike, here, index, normalize_axes, normalize_axis, promote
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import special as special_prims
from funcgrad.primitives.calls import stop_gradient

__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "logmeanexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
]


def _float(name: str, x: ArrayLike) -> Any:
    (x,) = promote(name, x, to="inexact")
    return fnp.asarray(x)


def relu(x: ArrayLike) -> Any:
    """``max(x, 0)``, with derivative 0 at 0 (as ``jax.nn.relu``)."""
    x = fnp.asarray(x)
    return fnp.where(x <= 0, 0, x)


def relu6(x: ArrayLike) -> Any:
    """``min(max(x, 0), 6)``, with derivative 0 at both kinks."""
    x = fnp.asarray(x)
    return fnp.where(x <= 0, 0, fnp.where(x >= 6, 6.0, x))


def sigmoid(x: ArrayLike) -> Any:
    """Logistic sigmoid ``1 / (1 + exp(-x))`` (integers promote to float)."""
    return fnp.asarray(ew.logistic(_float("sigmoid", x)))


def log_sigmoid(x: ArrayLike) -> Any:
    """``log(sigmoid(x))`` computed stably as ``-softplus(-x)``."""
    return -softplus(-fnp.asarray(x))


def softplus(x: ArrayLike) -> Any:
    """``log(1 + exp(x))`` computed stably."""
    return fnp.logaddexp(x, 0)


def silu(x: ArrayLike) -> Any:
    """``x * sigmoid(x)`` (a.k.a. swish)."""
    x = fnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def mish(x: ArrayLike) -> Any:
    """``x * tanh(softplus(x))``."""
    x = fnp.asarray(x)
    return x * fnp.tanh(softplus(x))


def gelu(x: ArrayLike, approximate: bool = True) -> Any:
    """Gaussian error linear unit (the tanh approximation by default, as ``jax.nn.gelu``)."""
    x = _float("gelu", x)
    dt = x.dtype
    if approximate:
        c = np.asarray(math.sqrt(2.0 / math.pi), dt)
        cdf = 0.5 * (1.0 + fnp.tanh(c * (x + 0.044715 * (x**3))))
        return x * cdf
    half = np.asarray(math.sqrt(0.5), dt)
    erfc = getattr(special_prims, "erfc", None)
    if erfc is not None:  # 0.5 x erfc(-x / sqrt 2): accurate in the far negative tail
        return fnp.asarray(0.5 * x * erfc(-x * half), dt)
    return fnp.asarray(0.5 * x * (1 + ew.erf(x * half)), dt)


def leaky_relu(x: ArrayLike, negative_slope: float = 0.01) -> Any:
    """``x`` for ``x >= 0``, ``negative_slope * x`` otherwise."""
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def elu(x: ArrayLike, alpha: float = 1.0) -> Any:
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""
    x = fnp.asarray(x)
    return fnp.where(x > 0, x, alpha * fnp.expm1(fnp.where(x > 0, 0.0, x)))


def celu(x: ArrayLike, alpha: float = 1.0) -> Any:
    """Continuously differentiable ELU."""
    return fnp.maximum(x, 0.0) + alpha * fnp.expm1(fnp.minimum(x, 0.0) / alpha)


def selu(x: ArrayLike) -> Any:
    """Scaled ELU with the self-normalising constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def hard_tanh(x: ArrayLike) -> Any:
    """``x`` clipped to ``[-1, 1]``."""
    x = fnp.asarray(x)
    return fnp.where(x > 1, 1, fnp.where(x < -1, -1, x))


def hard_sigmoid(x: ArrayLike) -> Any:
    """``relu6(x + 3) / 6``."""
    return relu6(fnp.asarray(x) + 3.0) / 6.0


def hard_silu(x: ArrayLike) -> Any:
    """``x * hard_sigmoid(x)``."""
    x = fnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def soft_sign(x: ArrayLike) -> Any:
    """``x / (|x| + 1)``."""
    x = fnp.asarray(x)
    return x / (fnp.abs(x) + 1)


def glu(x: ArrayLike, axis: int = -1) -> Any:
    """Gated linear unit: the first half of ``axis`` times the sigmoid of the second."""
    x = fnp.asarray(x)
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"glu: axis {axis} of shape {x.shape} must have even size{here()}")
    a, b = fnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def _logsumexp(
    a: ArrayLike,
    axis: Any = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: ArrayLike | None = None,
) -> Any:
    """``log(sum(b * exp(a)))`` along ``axis``, stable for large inputs: shifted by the
    largest real part; a complex sum keeps its phase unless ``return_sign``."""
    if where is not None:
        a = fnp.where(where, a, 0)
    if b is not None:
        a, b = (fnp.asarray(v) for v in promote("logsumexp", a, b, to="inexact"))
        a = fnp.where(b != 0, a, -np.inf)
    else:
        a = _float("logsumexp", a)
    axes = normalize_axes(axis, a.ndim, "logsumexp")
    amax = fnp.max(fnp.real(a), axis=axes, keepdims=True, where=where, initial=-np.inf)
    amax = stop_gradient(fnp.where(fnp.isfinite(amax), amax, fnp.zeros_like(amax)))
    e = fnp.exp(a - fnp.asarray(amax, a.dtype))
    if b is not None:
        e = e * b
    s = fnp.sum(e, axis=axes, keepdims=True, where=where)
    sign = fnp.sign(s)
    complex_sum = s.dtype.kind == "c" and not return_sign
    s_abs = s if complex_sum else fnp.abs(s)
    out = fnp.log(s_abs) + fnp.asarray(amax, s_abs.dtype)
    if not keepdims:
        out = fnp.squeeze(out, axis=axes)
        sign = fnp.squeeze(sign, axis=axes)
    if return_sign:
        return out, sign
    if b is not None and not complex_sum:
        out = fnp.where(sign < 0, np.asarray(np.nan, out.dtype), out)
    return out


def _lowest(x: Any) -> Any:
    """The least value of ``x``'s dtype (-inf for floats): the softmaxes' shift of a masked
    row (JAX's ``initial=-inf``, which an integer dtype takes as its least value)."""
    return dtypes.extreme(x.dtype, largest=False)


def _log_softmax(x: ArrayLike, axis: Any = -1, where: ArrayLike | None = None) -> Any:
    """``x - logsumexp(x)`` along ``axis``."""
    x = fnp.asarray(x)
    axes = normalize_axes(axis, x.ndim, "log_softmax")
    x_max = fnp.max(x, axis=axes, where=where, initial=_lowest(x), keepdims=True)
    x_safe = x if where is None else fnp.where(where, x, -np.inf)
    shifted = x_safe - stop_gradient(x_max)
    lse = fnp.log(fnp.sum(fnp.exp(shifted), axis=axes, where=where, keepdims=True))
    res = shifted - lse
    return res if where is None else fnp.where(where, res, -np.inf)


def _softmax(x: ArrayLike, axis: Any = -1, where: ArrayLike | None = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    x = fnp.asarray(x)
    axes = normalize_axes(axis, x.ndim, "softmax")
    x_max = fnp.max(x, axis=axes, where=where, initial=_lowest(x), keepdims=True)
    x_safe = x if where is None else fnp.where(where, x, -np.inf)
    e = fnp.exp(x_safe - stop_gradient(x_max))
    res = e / fnp.sum(e, axis=axes, where=where, keepdims=True)
    return res if where is None else fnp.where(where, res, 0)


# the rows of the three (``funcgrad/core/reduction_row.py``): their ``funcgrad.nn`` and
# ``funcgrad.scipy.special`` forms (``_axis_forms.py``) and compat's ``torch.X``,
# ``Tensor.X``, ``torch.special.X``, ``out=`` and ``nn.functional.X`` come from them
Reduction(
    "logsumexp",
    None,
    _logsumexp,
    public=("nn", "scipy.special"),
    doc="Log-sum-exp reduction: ``log(sum(b * exp(a)))`` along ``axis``, computed stably; "
    "``return_sign`` also gives the sign of the sum",
    numpy="logsumexp",
    identity=-np.inf,
    torch=TorchReduction(
        "LogsumexpBackward0",
        dtype=False,
        promote="inexact",
        dim_required=True,
        special=("logsumexp",),
    ),
)
for _name, _fn, _doc, _node in (
    ("softmax", _softmax, "``exp(x) / sum(exp(x))`` along ``axis``", "SoftmaxBackward0"),
    ("log_softmax", _log_softmax, "``x - logsumexp(x)`` along ``axis``", "LogSoftmaxBackward0"),
):
    Reduction(
        _name,
        None,
        _fn,
        public=("nn", "scipy.special"),
        doc=_doc,
        docs={"scipy.special": f"{_doc} (every axis by default, as SciPy's)"},
        numpy="normalize",
        identity=None,
        torch=TorchReduction(
            _node,
            promote="float",
            one_dim=True,
            dim_required=True,
            kernel=_name,
            special=(_name,),
            functional=True,
        ),
    )
del _name, _fn, _doc, _node


def one_hot(x: ArrayLike, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """One-hot encoding of integer labels (the default float dtype unless ``dtype``);
    out-of-range labels give all-zero rows. A float ``x`` is deprecated (a
    ``DeprecationWarning``, as JAX's); a bool ``x`` warns and is refused (JAX's TypeError)."""
    try:
        num_classes = index(num_classes, "num_classes", "one_hot")
    except ConcretizationError as e:  # JAX's words name the argument
        raise ConcretizationError(
            f"{e}\nThe error arose in jax.nn.one_hot argument `num_classes`."
        ) from None
    x = fnp.asarray(x)
    if not dtypes.is_integer(x.dtype):
        warnings.warn(
            f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
            DeprecationWarning,
            stacklevel=2,
        )
    if x.dtype == bool:  # (JAX's classes are an iota of x's dtype, which refuses bool)
        raise TypeError(
            "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, "
            "floating, complexfloating."
        )
    dt = float if dtype is None else dtype
    classes = fnp.arange(num_classes, dtype=x.dtype if x.dtype.kind in "iu" else None)
    classes = fnp.reshape(classes, (1,) * x.ndim + (num_classes,))  # (no rank promotion)
    oh = fnp.asarray(fnp.expand_dims(x, -1) == classes, dt)
    out_axis = normalize_axis(axis, oh.ndim, "one_hot")
    return fnp.moveaxis(oh, -1, out_axis) if out_axis != oh.ndim - 1 else oh


def standardize(
    x: ArrayLike,
    axis: Any = -1,
    mean: ArrayLike | None = None,
    variance: ArrayLike | None = None,
    epsilon: float = 1e-5,
    where: ArrayLike | None = None,
    *,
    algorithm: str = "fast",
) -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis`` (``algorithm="stable"``
    computes the variance as the mean of squared deviations)."""
    x = fnp.asarray(x)
    if mean is None:
        mean = fnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = fnp.mean(fnp.square(x - mean), axis=axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = fnp.mean(fnp.square(x), axis=axis, keepdims=True, where=where)
            variance = fnp.clip(variance - fnp.square(mean), 0)
        else:
            raise ValueError(f"standardize: unknown algorithm {algorithm!r}{here()}")
    return fnp.subtract(x, mean) * ew.rsqrt(fnp.asarray(variance + epsilon))


def identity(x: ArrayLike) -> Any:
    """``x`` unchanged (as an array)."""
    return fnp.asarray(x)


def sparse_plus(x: ArrayLike) -> Any:
    """Sparse plus: 0 below -1, ``x`` above 1, ``(x + 1)^2 / 4`` between."""
    x = fnp.asarray(x)
    return fnp.where(x <= -1.0, 0.0, fnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: ArrayLike) -> Any:
    """Sparse sigmoid (the derivative of ``sparse_plus``): ``clip((x + 1) / 2, 0, 1)``."""
    return 0.5 * fnp.clip(fnp.asarray(x) + 1.0, 0.0, 2.0)


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Any:
    """Squareplus, a smooth ReLU: ``(x + sqrt(x^2 + b)) / 2``."""
    x, b = (fnp.asarray(v) for v in promote("squareplus", x, b))
    return (x + fnp.sqrt(fnp.square(x) + b)) / 2


def _log1mexp_impl(x: Any) -> Any:
    c = np.log(2.0)
    return fnp.where(x < c, fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


_log1mexp = custom_jvp(_log1mexp_impl)


@_log1mexp.defjvp
def _log1mexp_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    return _log1mexp(x), t / fnp.expm1(x)


def log1mexp(x: ArrayLike) -> Any:
    """``log(1 - exp(-x))`` computed stably for ``x > 0`` (Mächler's two branches)."""
    return _log1mexp(_float("log1mexp", x))


def logmeanexp(
    x: ArrayLike, axis: Any = None, where: ArrayLike | None = None, keepdims: bool = False
) -> Any:
    """``log(mean(exp(x)))`` along ``axis``: ``logsumexp`` minus the log of the count."""
    lse = _logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = fnp.asarray(x)
    ones = fnp.ones(x.shape, lse.dtype) if where is None else fnp.asarray(where, lse.dtype)
    count = fnp.sum(fnp.broadcast_to(ones, x.shape), axis=axis, keepdims=keepdims)
    return lse - fnp.log(count)
