"""``funcgrad.scipy.special``: ``jax.scipy.special``'s functions over funcgrad primitives.

Each function promotes its arguments as ``jax.scipy.special`` does (integers and bools to
the default float dtype), works under ``jit``/``vmap`` and is differentiable where JAX's
is, with the same derivative conventions at special points (e.g. ``xlogy`` at ``x = 0``).

    >>> from funcgrad.scipy import special
    >>> round(float(special.gammaln(5.0)), 5)  # log(4!)
    3.17805
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import scan
from funcgrad.core.primitive import Composite, Primitive, TorchForm
from funcgrad.custom import custom_jvp
from funcgrad.nn._axis_forms import declared_forms as _axis_forms
from funcgrad.numpy._core import ArrayLike, here, promote
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import named_operands, public_doc, public_forms
from funcgrad.primitives import special as sp
from funcgrad.scipy._expint import exp1, expi
from funcgrad.scipy._expn import expn
from funcgrad.scipy._faddeeva import dawsn, erfcx, wofz
from funcgrad.scipy._fresnel import fresnel
from funcgrad.scipy._hyp1f1 import hyp1f1
from funcgrad.scipy._hyp2f1 import hyp2f1
from funcgrad.scipy._owens_t import owens_t
from funcgrad.scipy._sici import sici
from funcgrad.scipy._spence import spence
from funcgrad.scipy._sph_harm import sph_harm_y

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "entr",
    "erfcx",
    "exp1",
    "expi",
    "expn",
    "factorial",
    "fresnel",
    "gamma",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "loggamma",
    "logit",
    "multigammaln",
    "ndtr",
    "ndtri",
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "spence",
    "sph_harm_y",
    "wofz",
    "xlog1py",
    "zeta",
]


def _real(name: str, *args: ArrayLike) -> list[Any]:
    """``args`` promoted to one inexact dtype and broadcast; complex is rejected."""
    out = [fnp.asarray(a) for a in fnp.broadcast_arrays(*promote(name, *args, to="inexact"))]
    if out and np.issubdtype(out[0].dtype, np.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs{here()}")
    return out


def _k(x: Any, v: float) -> np.ndarray:
    return np.asarray(v, x.dtype)


# --------------------------------------------------------------------------- error functions


@custom_jvp
def _logit(x: Any) -> Any:
    return fnp.log(x / (1 - x))


_logit.defjvps(lambda g, ans, x: g / (x * (1 - x)))


def logit(x: ArrayLike) -> Any:
    """The inverse of :func:`expit`, ``log(x / (1 - x))`` (derivative ``1 / (x (1 - x))``)."""
    (x,) = _real("logit", x)
    return _logit(x)


# --------------------------------------------------------------------------- x log y


@custom_jvp
def _xlogy(x: Any, y: Any) -> Any:
    return fnp.where((x != 0) | fnp.isnan(y), x * fnp.log(y), fnp.zeros_like(x))


@_xlogy.defjvp
def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), tx * fnp.log(y) + ty * x / y


@custom_jvp
def _xlog1py(x: Any, y: Any) -> Any:
    return fnp.where((x != 0) | fnp.isnan(y), x * fnp.log1p(y), fnp.zeros_like(x))


@_xlog1py.defjvp
def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), tx * fnp.log1p(y) + ty * x / (1 + y)


@custom_jvp
def _xlogx(x: Any) -> Any:
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: tuple, tangents: tuple) -> tuple:
    ((x,), (t,)) = primals, tangents
    return _xlogx(x), t * (fnp.log(x) + 1)


#: ``xlogy``'s row, declared here beside its ``custom_jvp`` function (``funcgrad.custom``
#: sits above the primitives, as for numpy's ``sinc``): this module's ``xlogy`` and
#: compat's ``torch.xlogy``, ``Tensor.xlogy(_)``, ``torch.special.xlogy`` come from it
XLOGY = Composite(
    "xlogy",
    _xlogy,
    arity=2,
    public=("scipy.special",),
    doc="``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN), with derivatives "
    "``log(y)`` and ``x / y`` everywhere.",
    domains=((0.5, 2.0), (0.5, 2.0)),
    torch=TorchForm(
        "XlogyBackward0",
        scalar_other="XlogyBackward2",
        scalar_input="XlogyBackward1",
        number_first=True,
        complex_error="\"xlogy_cpu\" not implemented for '{dtype}'",
        special=("xlogy",),
    ),
)


def _declared_form(name: str, row: Primitive | Composite) -> Callable[..., Any]:
    """The ``scipy.special`` form a row declares (``public=("scipy.special", ...)``): its
    operands promoted to one float dtype and broadcast (complex refused), then the row."""

    def unary(x: ArrayLike) -> Any:
        return row.bind(*_real(name, x))

    def binary(x: ArrayLike, y: ArrayLike) -> Any:
        return row.bind(*_real(name, x, y))

    f = binary if row.arity == 2 else unary
    f.__name__ = f.__qualname__ = name
    f.__doc__ = public_doc(row, "scipy.special")
    return named_operands(f, row)


#: the forms rows declare in ``scipy.special`` (``xlogy``; the ``erf``, ``erfc``,
#: ``erf_inv``, ``logistic``, ``i0``, ``lgamma`` and ``digamma`` rows' ``erf``, ``erfc``,
#: ``erfinv``, ``expit``, ``i0``, ``gammaln``, ``digamma``; ``igamma``'s and ``igammac``'s
#: ``gammainc``, ``gammaincc``)
DECLARED = {name: _declared_form(name, row) for name, row in public_forms("scipy.special").items()}
# and the composite reduction rows' (``logsumexp``, ``softmax``, ``log_softmax``)
DECLARED.update(_axis_forms("scipy.special"))
globals().update(DECLARED)
__all__ += sorted(DECLARED)


def xlog1py(x: ArrayLike, y: ArrayLike) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
    x, y = _real("xlog1py", x, y)
    return _xlog1py(x, y)


def entr(x: ArrayLike) -> Any:
    """Elementwise entropy ``-x log x`` (0 at 0, ``-inf`` for ``x < 0``)."""
    (x,) = _real("entr", x)
    return fnp.where(x < 0, -np.inf, -_xlogx(x))


def rel_entr(p: ArrayLike, q: ArrayLike) -> Any:
    """Relative entropy ``p log(p / q)``: 0 where ``p == 0 <= q``, ``inf`` where not defined."""
    p, q = _real("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    safe_p = fnp.where(both, p, fnp.ones_like(p))
    safe_q = fnp.where(both, q, fnp.ones_like(q))
    val = _xlogx(safe_p) - _xlogy(safe_p, safe_q)
    other = fnp.where((p == 0) & (q >= 0), 0.0, np.inf)
    return fnp.where(both, val, other)


def kl_div(p: ArrayLike, q: ArrayLike) -> Any:
    """Elementwise Kullback-Leibler term ``p log(p / q) - p + q``."""
    p, q = _real("kl_div", p, q)
    return rel_entr(p, q) - p + q


# --------------------------------------------------------------------------- gamma family


def gammasgn(x: ArrayLike) -> Any:
    """The sign of ``Gamma(x)`` (NaN at the poles, ``copysign(1, x)`` at ``+-0``)."""
    (x,) = _real("gammasgn", x)
    fl = fnp.floor(x)
    neg = fnp.where(fnp.remainder(fl, 2) == 0, _k(x, 1.0), _k(x, -1.0))
    neg = fnp.where(x == fl, _k(x, np.nan), neg)
    out = fnp.where(x > 0, _k(x, 1.0), neg)
    out = fnp.where(x == 0, fnp.copysign(_k(x, 1.0), x), out)
    return fnp.where(fnp.isnan(x), x, out)


#: Lanczos's approximation with ``g = 7`` and nine terms (Godfrey's coefficients)
_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
)


def _complex_gamma(z: Any) -> Any:
    """``Gamma(z)`` for complex ``z``: Lanczos's approximation on ``Re z >= 1/2``, the
    reflection ``Gamma(z) = pi / (sin(pi z) Gamma(1 - z))`` below; ``nan+nanj`` at the
    poles (the non-positive integers) and where a part is NaN, as SciPy."""
    re, im = fnp.real(z), fnp.imag(z)
    reflect = re < 0.5
    w = fnp.where(reflect, 1.0 - z, z) - 1.0
    series = _LANCZOS[0] + sum(c / (w + k) for k, c in enumerate(_LANCZOS[1:], 1))
    t = w + (_LANCZOS_G + 0.5)
    g = math.sqrt(2 * math.pi) * fnp.exp((w + 0.5) * fnp.log(t) - t) * series
    out = fnp.where(reflect, np.pi / (fnp.sin(np.pi * z) * g), g)
    pole = (im == 0) & (re <= 0) & (re == fnp.floor(re))
    bad = pole | fnp.isnan(re) | fnp.isnan(im)
    return fnp.where(bad, complex(np.nan, np.nan), out).astype(z.dtype)


def gamma(x: ArrayLike) -> Any:
    """The gamma function ``Gamma(x)``, real or complex (see :func:`_complex_gamma`)."""
    x = fnp.asarray(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        return _complex_gamma(x)
    (x,) = _real("gamma", x)
    return gammasgn(x) * fnp.exp(ew.lgamma(x))


def factorial(n: ArrayLike, exact: bool = False) -> Any:
    """``n!`` as ``Gamma(n + 1)`` (0 for negative ``n``); ``exact=True`` is not supported."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _real("factorial", n)
    return fnp.where(n < 0, 0.0, fnp.exp(ew.lgamma(n + 1)))


#: the coefficients ``B_2k / (2k (2k - 1))`` of Stirling's series for ``lgamma``
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def _stirling_tail(x: Any) -> Any:
    """``lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2)`` for ``x >= 8``: seven terms
    of Stirling's series (the next is below ``1e-15`` there)."""
    r = 1.0 / x
    r2 = r * r
    acc = _STIRLING[-1]
    for c in reversed(_STIRLING[:-1]):
        acc = c + r2 * acc
    return r * acc


def betaln(a: ArrayLike, b: ArrayLike) -> Any:
    """``log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``; for a larger
    argument ``b >= 8``, ``gammaln(b) - gammaln(a + b)`` comes from Stirling's series
    (``-(a + b - 1/2) log1p(a / b) - a (log b - 1)`` plus the tails' difference), since
    the difference of the two large ``gammaln`` loses every digit (``betaln(1e7, 1)``)."""
    a, b = _real("betaln", a, b)
    a, b = fnp.minimum(a, b), fnp.maximum(a, b)
    small = ew.lgamma(a) + (ew.lgamma(b) - ew.lgamma(a + b))
    big = fnp.where(b >= 8, b, 8.0)  # (the other branch's operand, kept finite)
    ratio = -(a + big - 0.5) * fnp.log1p(a / big) - a * (fnp.log(big) - 1.0)
    large = ew.lgamma(a) + ratio + (_stirling_tail(big) - _stirling_tail(a + big))
    return fnp.where(b >= 8, large, small)


def beta(a: ArrayLike, b: ArrayLike) -> Any:
    """The beta function ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``."""
    a, b = _real("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * fnp.exp(betaln(a, b))


def polygamma(n: ArrayLike, x: ArrayLike) -> Any:
    """The ``n``-th derivative of :func:`digamma` (``n`` of an integer dtype)."""
    dt = fnp.result_type(n)
    if not np.issubdtype(dt, np.integer):
        raise ValueError(
            f"Argument `n` to polygamma must be of integer type. Got dtype {dt}.{here()}"
        )
    n, x = _real("polygamma", n, x)
    return fnp.asarray(sp.polygamma(n, x))


def multigammaln(a: ArrayLike, d: int) -> Any:
    """Log of the multivariate gamma function of dimension ``d`` (a Python int)."""
    try:
        d = int(d)
    except Exception as e:
        raise TypeError(f"multigammaln: d must be a concrete integer, got {d!r}{here()}") from e
    a, d_ = _real("multigammaln", a, d)
    const = 0.25 * d_ * (d_ - 1) * math.log(math.pi)
    half = fnp.arange(d, dtype=a.dtype) / 2
    return fnp.sum(ew.lgamma(fnp.expand_dims(a, -1) - half), axis=-1) + const


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """Regularized incomplete beta function ``I_x(a, b)`` (differentiable in ``x``)."""
    a, b, x = _real("betainc", a, b, x)
    return fnp.asarray(sp.betainc(a, b, x))


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Any:
    """The Hurwitz zeta function ``sum_k (k + q)^-x`` (``q`` is required, as in JAX)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the "
            "Hurwitz Zeta function."
        )
    x, q = _real("zeta", x, q)
    return fnp.asarray(sp.zeta(x, q))


def i0e(x: ArrayLike) -> Any:
    """Exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
    (x,) = _real("i0e", x)
    return fnp.asarray(sp.bessel_i0e(x))


def i1e(x: ArrayLike) -> Any:
    """Exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
    (x,) = _real("i1e", x)
    return fnp.asarray(sp.bessel_i1e(x))


def i1(x: ArrayLike) -> Any:
    """Modified Bessel function of order 1."""
    (x,) = _real("i1", x)
    return fnp.exp(fnp.abs(x)) * sp.bessel_i1e(x)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers ``B_0 .. B_n`` (with ``B_1 = -1/2``, as SciPy), as a float array
    computed exactly in rational arithmetic."""
    n = int(n)
    if n < 0:
        raise ValueError(f"bernoulli: n must be non-negative, got {n}{here()}")
    from fractions import Fraction

    b = [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        acc = sum((math.comb(m + 1, k) * b[k] for k in range(m)), Fraction(0))
        b[m] = Fraction(int(m == 0)) - acc / (m + 1)
    return fnp.asarray(np.array([float(v) for v in b]))


# --------------------------------------------------------------------------- normal distribution

_SQRT_HALF = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _check_ndtr_dtype(name: str, x: Any) -> None:
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name}: x.dtype={x.dtype} is not supported{here()}")


def _ndtr(x: Any) -> Any:
    # constants of x's dtype: the result is strongly typed, as JAX's
    z = x * _k(x, _SQRT_HALF)
    y = fnp.where(
        fnp.abs(z) < _k(x, _SQRT_HALF),
        _k(x, 1.0) + ew.erf(z),
        fnp.where(z > 0, _k(x, 2.0) - sp.erfc(z), sp.erfc(-z)),
    )
    return _k(x, 0.5) * y


def ndtr(x: ArrayLike) -> Any:
    """The standard normal CDF ``Phi(x)``, accurate in both tails."""
    x = fnp.asarray(x)
    _check_ndtr_dtype("ndtr", x)
    return _ndtr(x)


def _norm_logpdf(x: Any) -> Any:
    return -0.5 * x * x - _LOG_SQRT_2PI


def _log_ndtr_series(x: Any, order: int) -> Any:
    # log Phi(x) for x << -1: log(phi(x) / -x) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))
    x2 = x * x
    s = fnp.ones_like(x)
    x2n = x2
    for n in range(1, order + 1):
        dfact = float(np.prod(np.arange(2 * n - 1, 0, -2)))
        s = s + (-1) ** n * dfact / x2n
        x2n = x2n * x2
    return -0.5 * x2 - fnp.log(-x) - _LOG_SQRT_2PI + fnp.log(s)


def _log_ndtr_impl(x: Any, series_order: int) -> Any:
    f64 = x.dtype == np.float64
    lower, upper = (-20.0, 8.0) if f64 else (-10.0, 5.0)
    above = x > upper
    arg = fnp.where(above, -x, fnp.maximum(x, _k(x, lower)))
    p = _ndtr(arg)
    series = _log_ndtr_series(fnp.minimum(x, _k(x, lower)), series_order)
    return fnp.where(above, -p, fnp.where(x > lower, fnp.log(p), series))


_log_ndtr = custom_jvp(_log_ndtr_impl, nondiff_argnums=(1,))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order: int, primals: tuple, tangents: tuple) -> tuple:
    ((x,), (t,)) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, t * fnp.exp(_norm_logpdf(x) - ans)


def log_ndtr(x: ArrayLike, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate far into both tails (an asymptotic series of
    ``series_order`` terms below -20 in float64, -10 in float32)."""
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError(f"log_ndtr: series_order must be a Python int, got {series_order!r}")
    if series_order < 0:
        raise ValueError(f"log_ndtr: series_order must be non-negative, got {series_order}")
    if series_order > 30:
        raise ValueError(f"log_ndtr: series_order must be <= 30, got {series_order}")
    x = fnp.asarray(x)
    _check_ndtr_dtype("log_ndtr", x)
    return _log_ndtr(x, series_order)


def _ndtri_lower(q: Any) -> Any:
    """``ndtri(q)`` for ``q <= 1/2``: a starting point (``erfinv``, or the tail's asymptotic
    form where ``2q - 1`` rounds to -1) refined by Newton steps on ``log ndtr(x) = log q``."""
    tiny = q < 1e-6
    safe_q = fnp.where(q > 0, q, fnp.ones_like(q))
    t = -2 * fnp.log(fnp.where(tiny, safe_q, _k(q, 1e-6)))
    x_tail = -fnp.sqrt(t - fnp.log(t) - 2 * _LOG_SQRT_2PI)
    x_mid = math.sqrt(2.0) * ew.erf_inv(fnp.where(tiny, _k(q, 0.25), q) * 2 - 1)
    x = fnp.where(tiny, x_tail, x_mid)
    log_q = fnp.log(safe_q)
    for _ in range(3):
        lp = _log_ndtr_impl(x, 3)
        x = x - (lp - log_q) * fnp.exp(lp - _norm_logpdf(x))
    return fnp.where(q > 0, x, _k(q, -np.inf))


@custom_jvp
def _ndtri(p: Any) -> Any:
    x = fnp.where(p > 0.5, -_ndtri_lower(1 - p), _ndtri_lower(fnp.minimum(p, 0.5)))
    x = fnp.where(p == 1, _k(p, np.inf), x)
    return fnp.where((p < 0) | (p > 1) | fnp.isnan(p), _k(p, np.nan), x)


@_ndtri.defjvp
def _ndtri_jvp(primals: tuple, tangents: tuple) -> tuple:
    ((p,), (t,)) = primals, tangents
    x = _ndtri(p)
    return x, t * fnp.exp(-_norm_logpdf(x))


def ndtri(p: ArrayLike) -> Any:
    """The inverse of :func:`ndtr`: ``x`` with ``ndtr(x) == p`` (NaN outside ``[0, 1]``)."""
    p = fnp.asarray(p)
    _check_ndtr_dtype("ndtri", p)
    return _ndtri(p)


# --------------------------------------------------------------------------- combinatorics, Box-Cox


def comb(N: ArrayLike, k: ArrayLike, *, repetition: bool = False) -> Any:
    """Binomial coefficient ``N choose k`` through ``gammaln`` (0 outside ``0 <= k <= N``);
    with ``repetition``, combinations with replacement ``(N + k - 1) choose k``."""
    N, k = _real("comb", N, k)
    if repetition:
        return fnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    n_, k_ = fnp.where(ok, N, 0.0), fnp.where(ok, k, 0.0)
    out = fnp.exp(ew.lgamma(n_ + 1) - ew.lgamma(k_ + 1) - ew.lgamma(n_ + 1 - k_))
    return fnp.where(ok, out, 0.0)


def poch(z: ArrayLike, m: ArrayLike) -> Any:
    """Pochhammer symbol (rising factorial) ``gamma(z + m) / gamma(z)`` (1 where ``m == 0``)."""
    z, m = _real("poch", z, m)
    return _poch(z, m)


@custom_jvp
def _poch(z: Any, m: Any) -> Any:
    return fnp.where(m == 0, 1.0, gamma(z + m) / gamma(z))


@_poch.defjvp
def _poch_jvp(primals: tuple, tangents: tuple) -> tuple:
    # d/dz = (digamma(z + m) - digamma(z)) poch, d/dm = digamma(z + m) poch (also at m = 0)
    (z, m), (tz, tm) = primals, tangents
    out = _poch(z, m)
    dzm = ew.digamma(z + m)
    return out, (tz * (dzm - ew.digamma(z)) + tm * dzm) * out


def loggamma(x: ArrayLike) -> Any:
    """Principal branch of ``log(gamma(x))`` for real ``x``: ``gammaln`` for ``x > 0``, NaN
    elsewhere (complex inputs are not supported)."""
    (x,) = _real("loggamma", x)
    return fnp.where(x > 0, ew.lgamma(x), np.nan)


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log(x)`` where ``lmbda == 0``)."""
    x, lmbda = _real("boxcox", x, lmbda)
    return _boxcox_of_log(fnp.log(x), lmbda)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """Box-Cox transform of ``1 + x``, accurate for small ``x``."""
    x, lmbda = _real("boxcox1p", x, lmbda)
    return _boxcox_of_log(fnp.log1p(x), lmbda)


def _boxcox_of_log(log_x: Any, lmbda: Any) -> Any:
    zero = lmbda == 0
    safe = fnp.where(zero, 1.0, lmbda)
    return fnp.where(zero, log_x, fnp.expm1(safe * log_x) / safe)


def bessel_jn(z: ArrayLike, *, v: int, n_iter: int = 50) -> Any:
    """Bessel functions of the first kind ``J_0(z) ... J_v(z)`` of real ``z``, stacked on a
    new first axis (shape ``(v + 1, *z.shape)``): Miller's backward recurrence
    ``J_{k-1} = (2k / z) J_k - J_{k+1}`` from order ``n_iter`` (started at ``0, 1e-16``),
    normalised by ``J_0 + 2 (J_2 + J_4 + ...) = 1`` (Zhang and Jin's ``BJNDD``)."""
    z = fnp.asarray(z)
    if not np.issubdtype(z.dtype, np.inexact):
        z = z.astype(fnp.result_type(float))
    if np.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("complex input not supported.")
    try:
        v, n_iter = operator.index(v), int(n_iter)
    except TypeError as e:
        raise TypeError(f"bessel_jn: v must be a concrete integer, got {v!r}{here()}") from e

    def step(carry: tuple, k: Any) -> tuple:
        f0, f1, total = carry
        f = 2.0 * (k + 1.0) * f1 / z - f0
        total = total + fnp.where(k % 2 == 0, 2.0 * f, 0.0)
        return (f1, f, total), f

    zero = fnp.zeros_like(z)
    init = (zero, fnp.full_like(z, 1e-16), zero)
    ks = fnp.arange(n_iter + 1, dtype=z.dtype)
    (_, _, total), values = scan(step, init, ks, reverse=True)
    return fnp.divide(values[: v + 1], total - values[0])  # (fnp: rank promotion)
