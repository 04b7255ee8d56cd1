"""Unary transcendental functions and roots: ``exp``, ``log``, trigonometric and
hyperbolic functions, ``sqrt``/``rsqrt``/``cbrt``, ``logistic``, ``erf``, ``lgamma``.

Each is one row (``_unary`` in ``arith.py``) with all it has: lowering, derivative,
input domain, complex examples, host rule and public forms (``public=``), from which
``funcgrad.numpy``/``lax``/``nn`` generate their functions. The wrappers below the rows
are the ones other primitives' rules and funcgrad's composites call (``ew.exp``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core.interp import bind
from funcgrad.core.primitive import TorchForm
from funcgrad.primitives import rules
from funcgrad.primitives.elementwise.arith import _c, _unary, add, div, mul, neg, sub


def _host_rsqrt(x: Any) -> Any:
    return np.reciprocal(np.sqrt(x))


def _host_logistic(x: Any) -> Any:
    return np.divide(1, np.add(1, np.exp(np.negative(x))))


def _host_log1p(x: Any) -> Any:
    """``log1p`` on the host: NumPy's for reals; for complex ``z = a + bi``, whose NumPy
    form is ``log(1 + z)`` (the real part of ``1e-19 + 1e-18j`` is 0, not 1e-19), the
    argument of ``1 + z`` and the log of its modulus from ``log1p(a(a + 2) + b^2) / 2``
    near 0, as XLA's kernel and PyTorch's."""
    if not np.iscomplexobj(x):
        return np.log1p(x)
    z = np.asarray(x)
    a, b = z.real, z.imag
    with np.errstate(all="ignore"):
        r = a * (a + 2) + b * b
        near = np.where(r == 0, a, 0.5 * np.log1p(r))  # (r underflows: a itself)
        re = np.where(np.abs(z) < 0.5, near, np.log(np.hypot(a + 1, b)))
        out = np.empty(z.shape, z.dtype)
        out.real, out.imag = re, np.arctan2(b, a + 1)
    return out if out.ndim else out[()]


def _host_special(name: str) -> Callable:
    def rule(x: Any) -> Any:
        import scipy.special  # (first use only: SciPy costs ~0.1 s to import)

        return getattr(scipy.special, name)(x)

    return rule


exp_p = _unary(
    "exp",
    lax.exp,
    lambda x, y: y,
    complex_domain=(-1.5, 1.5),
    host=np.exp,
    doc="Elementwise ``e**x``",
    docs={"numpy": "Elementwise ``e ** x``"},
    public=("lax", "numpy"),
    torch=TorchForm("ExpBackward0", saves="result"),
)
log_p = _unary(
    "log",
    lax.log,
    lambda x, y: div(_c(x, 1.0), x),
    lo=0.5,
    hi=3.0,
    complex_domain=(0.5, 2.0),
    host=np.log,
    doc="Elementwise natural logarithm",
    public=("lax", "numpy"),
    torch=TorchForm("LogBackward0"),
)
log1p_p = _unary(
    "log1p",
    lax.log1p,
    lambda x, y: div(_c(x, 1.0), add(x, _c(x, 1.0))),
    lo=-0.5,
    complex_domain=(0.2, 1.5),
    host=_host_log1p,
    doc="Elementwise ``log(1 + x)``, accurate near 0",
    docs={"numpy": "Elementwise ``log(1 + x)``"},
    public=("lax", "numpy"),
    torch=TorchForm("Log1PBackward0", special=("log1p",)),
)
expm1_p = _unary(
    "expm1",
    lax.expm1,
    lambda x, y: add(y, _c(x, 1.0)),
    complex_domain=(-1.5, 1.5),
    host=np.expm1,
    doc="Elementwise ``e**x - 1``, accurate near 0",
    docs={"numpy": "Elementwise ``exp(x) - 1``"},
    public=("lax", "numpy"),
    torch=TorchForm("Expm1Backward0", saves="result", special=("expm1",)),
)
sin_p = _unary(
    "sin",
    lax.sin,
    lambda x, y: cos(x),
    complex_domain=(-1.5, 1.5),
    host=np.sin,
    doc="Elementwise sine",
    public=("lax", "numpy"),
    torch=TorchForm("SinBackward0"),
)
cos_p = _unary(
    "cos",
    lax.cos,
    lambda x, y: neg(sin(x)),
    complex_domain=(-1.5, 1.5),
    host=np.cos,
    doc="Elementwise cosine",
    public=("lax", "numpy"),
    torch=TorchForm("CosBackward0"),
)
tan_p = _unary(
    "tan",
    lax.tan,
    lambda x, y: add(_c(x, 1.0), mul(y, y)),
    lo=-1.2,
    hi=1.2,
    host=np.tan,
    doc="Elementwise tangent",
    public=("lax", "numpy"),
    torch=TorchForm("TanBackward0", saves="result"),
)
asin_p = _unary(
    "asin",
    lax.asin,
    lambda x, y: rsqrt(sub(_c(x, 1.0), mul(x, x))),
    lo=-0.9,
    hi=0.9,
    host=np.arcsin,
    doc="Elementwise arc sine",
    docs={"numpy": "Elementwise inverse sine"},
    public=("lax", "numpy:arcsin", "numpy:asin"),
    torch=TorchForm("AsinBackward0", aliases=("arcsin",)),
)
acos_p = _unary(
    "acos",
    lax.acos,
    lambda x, y: neg(rsqrt(sub(_c(x, 1.0), mul(x, x)))),
    lo=-0.9,
    hi=0.9,
    host=np.arccos,
    doc="Elementwise arc cosine",
    docs={"numpy": "Elementwise inverse cosine"},
    public=("lax", "numpy:arccos", "numpy:acos"),
    torch=TorchForm("AcosBackward0", aliases=("arccos",)),
)
atan_p = _unary(
    "atan",
    lax.atan,
    lambda x, y: div(_c(x, 1.0), add(_c(x, 1.0), mul(x, x))),
    host=np.arctan,
    doc="Elementwise arc tangent",
    docs={"numpy": "Elementwise inverse tangent"},
    public=("lax", "numpy:arctan", "numpy:atan"),
    torch=TorchForm("AtanBackward0", aliases=("arctan",)),
)
sinh_p = _unary(
    "sinh",
    lax.sinh,
    lambda x, y: cosh(x),
    host=np.sinh,
    doc="Elementwise hyperbolic sine",
    public=("lax", "numpy"),
    complex_domain=(-1.5, 1.5),
    torch=TorchForm("SinhBackward0"),
)
cosh_p = _unary(
    "cosh",
    lax.cosh,
    lambda x, y: sinh(x),
    host=np.cosh,
    doc="Elementwise hyperbolic cosine",
    public=("lax", "numpy"),
    complex_domain=(-1.5, 1.5),
    torch=TorchForm("CoshBackward0"),
)
tanh_p = _unary(
    "tanh",
    lax.tanh,
    lambda x, y: sub(_c(x, 1.0), mul(y, y)),
    host=np.tanh,
    doc="Elementwise hyperbolic tangent",
    public=("lax", "numpy", "nn"),
    complex_domain=(-1.0, 1.0),
    torch=TorchForm(
        "TanhBackward0",
        saves="result",
        functional="Hyperbolic tangent.",
        module=("Tanh", "Hyperbolic tangent."),
    ),
)
asinh_p = _unary(
    "asinh",
    lax.asinh,
    lambda x, y: rsqrt(add(mul(x, x), _c(x, 1.0))),
    host=np.arcsinh,
    doc="Elementwise inverse hyperbolic sine",
    public=("lax", "numpy:arcsinh", "numpy:asinh"),
    torch=TorchForm("AsinhBackward0", aliases=("arcsinh",), inplace_grad_fn="AsinhBackward1"),
)
acosh_p = _unary(
    "acosh",
    lax.acosh,
    lambda x, y: rsqrt(sub(mul(x, x), _c(x, 1.0))),
    lo=1.2,
    hi=3.0,
    host=np.arccosh,
    doc="Elementwise inverse hyperbolic cosine",
    public=("lax", "numpy:arccosh", "numpy:acosh"),
    torch=TorchForm("AcoshBackward0", aliases=("arccosh",), inplace_grad_fn="AcoshBackward1"),
)
atanh_p = _unary(
    "atanh",
    lax.atanh,
    lambda x, y: div(_c(x, 1.0), sub(_c(x, 1.0), mul(x, x))),
    lo=-0.9,
    hi=0.9,
    host=np.arctanh,
    doc="Elementwise inverse hyperbolic tangent",
    public=("lax", "numpy:arctanh", "numpy:atanh"),
    torch=TorchForm("AtanhBackward0", aliases=("arctanh",), inplace_grad_fn="AtanhBackward1"),
)
sqrt_p = _unary(
    "sqrt",
    lax.sqrt,
    lambda x, y: div(_c(x, 0.5), y),
    lo=0.5,
    hi=3.0,
    complex_domain=(0.5, 2.0),
    host=np.sqrt,
    doc="Elementwise square root",
    public=("lax", "numpy"),
    torch=TorchForm("SqrtBackward0", saves="result"),
)
rsqrt_p = _unary(
    "rsqrt",
    lax.rsqrt,
    lambda x, y: mul(_c(x, -0.5), div(y, x)),
    lo=0.5,
    hi=3.0,
    complex_domain=(0.5, 2.0),
    host=_host_rsqrt,
    doc="Elementwise ``1 / sqrt(x)``",
    public=("lax",),
    torch=TorchForm("RsqrtBackward0", saves="result"),
)
cbrt_p = _unary(
    "cbrt",
    lax.cbrt,
    lambda x, y: div(_c(x, 1.0 / 3.0), mul(y, y)),
    lo=0.5,
    hi=3.0,
    host=np.cbrt,
    doc="Elementwise cube root",
    public=("lax", "numpy"),
)
logistic_p = _unary(
    "logistic",
    lax.logistic,
    lambda x, y: mul(y, sub(_c(x, 1.0), y)),
    host=_host_logistic,
    doc="Elementwise ``1 / (1 + e**-x)``",
    public=("lax", "scipy.special:expit"),
    torch=TorchForm(
        "SigmoidBackward0",
        name="sigmoid",
        saves="result",
        functional="``1 / (1 + exp(-input))``.",
        module=("Sigmoid", "Logistic sigmoid."),
        special=("expit",),
    ),
)
erf_p = _unary(
    "erf",
    lax.erf,
    lambda x, y: mul(_c(x, 2.0 / math.sqrt(math.pi)), exp(neg(mul(x, x)))),
    allowed="real_float",
    host=_host_special("erf"),
    doc="Elementwise error function",
    public=("lax", "scipy.special"),
    torch=TorchForm("ErfBackward0", special=("erf",)),
)
# erf_inv has no host rule: ``random.normal`` is ``erf_inv`` of uniform bits, and its
# samples must be JAX's bit for bit, which only XLA's own approximation gives
erf_inv_p = _unary(
    "erf_inv",
    lax.erf_inv,
    lambda x, y: mul(_c(x, math.sqrt(math.pi) / 2.0), exp(mul(y, y))),
    allowed="real_float",
    lo=-0.9,
    hi=0.9,
    doc="Elementwise inverse error function",
    public=("lax", "scipy.special:erfinv"),
    torch=TorchForm("ErfinvBackward0", name="erfinv", inplace_function=False, special=("erfinv",)),
)
lgamma_p = _unary(
    "lgamma",
    lax.lgamma,
    lambda x, y: digamma(x),
    allowed="real_float",
    lo=0.5,
    hi=3.0,
    smooth=False,
    host=_host_special("gammaln"),
    doc="Elementwise log-gamma",
    docs={"scipy.special": "``log |Gamma(x)|`` (derivatives of every order: ``polygamma``)"},
    public=("lax", "scipy.special:gammaln"),
    torch=TorchForm("LgammaBackward0", inplace_function=False, special=("gammaln",)),
)
digamma_p = _unary(
    "digamma",
    lax.digamma,
    lambda x, y: rules.bind_named("polygamma", _c(x, 1.0), x),
    allowed="real_float",
    lo=0.5,
    hi=3.0,
    host=_host_special("psi"),
    doc="Elementwise digamma (derivative of lgamma)",
    docs={
        "scipy.special": "The digamma function ``d/dx log Gamma(x)`` (derivative "
        "``polygamma(1, x)``)"
    },
    public=("lax", "scipy.special"),
    torch=TorchForm(
        "DigammaBackward0",
        inplace_function=False,
        complex_error="\"digamma\" not implemented for '{dtype}'",
        special=("digamma", "psi"),
    ),
)


def exp(x: Any) -> Any:
    return bind(exp_p, x)


def log(x: Any) -> Any:
    return bind(log_p, x)


def log1p(x: Any) -> Any:
    return bind(log1p_p, x)


def expm1(x: Any) -> Any:
    return bind(expm1_p, x)


def sin(x: Any) -> Any:
    return bind(sin_p, x)


def cos(x: Any) -> Any:
    return bind(cos_p, x)


def tan(x: Any) -> Any:
    return bind(tan_p, x)


def asin(x: Any) -> Any:
    return bind(asin_p, x)


def acos(x: Any) -> Any:
    return bind(acos_p, x)


def atan(x: Any) -> Any:
    return bind(atan_p, x)


def sinh(x: Any) -> Any:
    return bind(sinh_p, x)


def cosh(x: Any) -> Any:
    return bind(cosh_p, x)


def sqrt(x: Any) -> Any:
    return bind(sqrt_p, x)


def rsqrt(x: Any) -> Any:
    return bind(rsqrt_p, x)


def logistic(x: Any) -> Any:
    return bind(logistic_p, x)


def erf(x: Any) -> Any:
    return bind(erf_p, x)


def erf_inv(x: Any) -> Any:
    return bind(erf_inv_p, x)


def lgamma(x: Any) -> Any:
    return bind(lgamma_p, x)


def digamma(x: Any) -> Any:
    return bind(digamma_p, x)
