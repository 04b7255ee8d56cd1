"""Polynomials with coefficients highest degree first: evaluation (``polyval``),
arithmetic (``polyadd``, ``polysub``, ``polymul``, ``polydiv``), calculus (``polyder``,
``polyint``), construction from roots (``poly``), the Vandermonde matrix (``vander``) and
least-squares fitting (``polyfit``).

Composites of funcgrad.numpy operations: evaluation is a Horner loop, products are
convolutions, ``polyfit`` a scaled ``linalg.lstsq``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcgrad import lax
from funcgrad.core import dtypes
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.core.errors import ConcretizationError
from funcgrad.core.interp import Tracer
from funcgrad.numpy import _creation, _info, _linalg, _reductions, _shape, _ufuncs, linalg
from funcgrad.numpy._core import ArrayLike, as_array, aval, check_arraylike, here, out
from funcgrad.numpy._core import promote as _promote
from funcgrad.numpy._numeric import _inexact, convolve


def polyval(p: ArrayLike, x: ArrayLike, *, unroll: int = 16) -> Any:
    """Value of the polynomial with coefficients ``p`` (highest degree first) at ``x``."""
    p, x = (as_array(v, "polyval") for v in _promote("polyval", p, x))
    if aval(p).ndim != 1:
        raise ValueError(f"polyval: p must be 1-dimensional, got shape {aval(p).shape}")
    y = _creation.zeros_like(x)
    for i in range(aval(p).shape[0]):
        y = y * x + p[i]
    return out(y)


def _trim_lead(name: str, a: ArrayLike) -> Any:
    a = _shape.atleast_1d(a)
    if aval(a).ndim != 1:
        raise ValueError(f"{name}: input must be 1-dimensional")
    return a


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Sum of two polynomials (coefficients highest degree first)."""
    a, b = (as_array(v, "polyadd") for v in _promote("polyadd", a1, a2))
    a, b = _trim_lead("polyadd", a), _trim_lead("polyadd", b)
    na, nb = aval(a).shape[0], aval(b).shape[0]
    if na < nb:
        a, b, na, nb = b, a, nb, na
    return out(a + _shape.pad(b, (na - nb, 0)))


def polysub(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Difference of two polynomials."""
    a, b = (as_array(v, "polysub") for v in _promote("polysub", a1, a2))
    a, b = _trim_lead("polysub", a), _trim_lead("polysub", b)
    n = max(aval(a).shape[0], aval(b).shape[0])
    a = _shape.pad(a, (n - aval(a).shape[0], 0))
    b = _shape.pad(b, (n - aval(b).shape[0], 0))
    return out(a - b)


def polymul(a1: ArrayLike, a2: ArrayLike, *, trim_leading_zeros: bool = False) -> Any:
    """Product of two polynomials (a full convolution)."""
    a, b = _inexact("polymul", a1, a2)
    a, b = _trim_lead("polymul", a), _trim_lead("polymul", b)
    if trim_leading_zeros:
        a, b = (np.trim_zeros(np.asarray(v), "f") if not _traced(v) else v for v in (a, b))
        a = a if np.size(a) else np.zeros(1, aval(b).dtype)
        b = b if np.size(b) else np.zeros(1, aval(a).dtype)
    return convolve(a, b, mode="full")


def _traced(v: Any) -> bool:

    return isinstance(v, Tracer)


def polyder(p: ArrayLike, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial."""
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    p = _trim_lead("polyder", as_array(p, "polyder"))
    if m == 0:
        return out(p)
    n = aval(p).shape[0]
    # coefficient j (power n - 1 - j) times (n-1-j)(n-2-j)...(n-m-j)
    powers = np.arange(n - 1, m - 1, -1)
    fact = np.ones(powers.shape)
    for k in range(m):
        fact = fact * (powers - k)
    dt = dtypes.result_type((aval(p).dtype, aval(p).weak_type), (dtypes.default_dtype(1), True))[0]
    res = p[: max(n - m, 0)] * fact.astype(dt)
    return out(res if n - m > 0 else _creation.zeros((0,), aval(p).dtype))


def polyint(p: ArrayLike, m: int = 1, k: int | ArrayLike | None = None) -> Any:
    """The ``m``-th antiderivative of a polynomial (integration constants ``k``)."""
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"Order of integral must be positive (see polyder) got {m}")
    (p,) = _inexact("polyint", p)
    p = _trim_lead("polyint", p)
    if m == 0:
        return out(p)
    ks = (
        _creation.zeros((m,), aval(p).dtype)
        if k is None
        else _shape.broadcast_to(_creation.asarray(k, dtype=aval(p).dtype), (m,))
    )
    for i in range(m):
        n = aval(p).shape[0]
        p = _shape.concatenate([p / np.arange(n, 0, -1).astype(aval(p).dtype), ks[i : i + 1]])
    return out(p)


def poly(seq_of_zeros: ArrayLike) -> Any:
    """Coefficients of the monic polynomial with the given roots; for a nonempty square
    matrix, of its characteristic polynomial (from its eigenvalues, so complex)."""
    (z,) = _inexact("poly", seq_of_zeros)
    shape = aval(z).shape
    if len(shape) == 2 and shape[0] == shape[1] != 0:
        z = linalg.eigvals(z)
    if aval(z).ndim != 1:
        raise ValueError(f"poly: input must be 1d or non-empty square 2d array, got shape {shape}")
    dt = aval(z).dtype
    if aval(z).shape[0] == 0:
        return out(_creation.ones((), dt))
    a = _creation.ones((1,), dt)
    for i in range(aval(z).shape[0]):
        a = convolve(a, _shape.stack([_creation.ones((), dt), -z[i]]), mode="full")
    return out(a)


def _companion_eigvals(p: Any) -> Any:
    """Roots of ``p`` (leading coefficient nonzero) as its companion matrix's eigenvalues."""
    n = aval(p).shape[0]
    if n < 2:
        wide = aval(p).dtype == np.float64
        return _creation.zeros((0,), np.dtype("complex128" if wide else "complex64"))
    c = _creation.diag(_creation.ones((n - 2,), aval(p).dtype), -1)
    c = c.at[0, :].set(-p[1:] / p[0])
    return linalg.eigvals(c)


def roots(p: ArrayLike, *, strip_zeros: bool = True) -> Any:
    """Roots of the polynomial with coefficients ``p`` (highest degree first), always
    complex. ``strip_zeros=True`` drops leading zeros as NumPy does, which needs concrete
    coefficients; ``strip_zeros=False`` works under ``jit`` and gives NaN for the roots
    that leading zeros remove."""
    check_arraylike("roots", p)
    (p,) = _inexact("roots", p)
    p = _shape.atleast_1d(p)
    n = aval(p).shape[0] if aval(p).ndim == 1 else -1
    if n < 0:
        raise ValueError(f"roots: input must be a rank-1 array, got shape {aval(p).shape}")
    if n < 2:
        return out(_companion_eigvals(p))
    is_zero = p == 0
    n_lead = _ufuncs.where(_reductions.all(is_zero), n, _reductions.argmin(is_zero))
    if strip_zeros:
        try:
            k = operator.index(n_lead)
        except ConcretizationError as e:
            raise ConcretizationError(
                "roots: stripping leading zeros needs concrete coefficients; under jit pass"
                " strip_zeros=False (the roots that leading zeros remove are then NaN)"
            ) from e
        return out(_companion_eigvals(p[k:]))
    # all-zero coefficients would make the companion matrix NaN everywhere: use ones
    p = _ufuncs.where(n_lead == n, _creation.ones_like(p), p)
    r = _companion_eigvals(_shape.roll(p, -n_lead))
    # the rolled-in trailing zeros give zero roots: sort them last, then mark them NaN
    r = lax.sort_key_val(r == 0, r)[1]
    keep = _creation.arange(n - 1) < (n - 1) - n_lead
    return out(_ufuncs.where(keep, r, _creation.asarray(complex(np.nan, np.nan), r.dtype)))


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Quotient and remainder of polynomial division."""
    u, v = _inexact("polydiv", u, v)
    u, v = _trim_lead("polydiv", u), _trim_lead("polydiv", v)
    m, n = aval(u).shape[0] - 1, aval(v).shape[0] - 1
    scale = 1.0 / v[0]
    q = _creation.zeros((max(m - n + 1, 1),), aval(u).dtype)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k : k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = _creation.asarray(np.trim_zeros(np.asarray(r), "f"))
    return out(q), out(r)


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Any:
    """Vandermonde matrix: columns are powers of ``x`` (decreasing unless ``increasing``)."""
    x = as_array(x, "vander")
    if aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = aval(x).shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = np.arange(n)
    if not increasing:
        powers = powers[::-1]
    cols = [_creation.ones_like(x) if k == 0 else x**k for k in powers.tolist()]
    if not cols:
        return out(_creation.zeros((aval(x).shape[0], 0), aval(x).dtype))
    return out(_shape.stack(cols, axis=-1))


# PyTorch's vander: a vector only, ``N`` at least 0, integers and bools as int64; its node
# is the flip's (the increasing powers: the copy into a slice's), none where ``N`` is 0 or 1
# (PyTorch fills the columns with ones); no ``Tensor.vander``
ArrayRow(
    vander,
    torch=TorchArrayForm(
        "FlipBackward0",
        (
            TorchParam("N", "N", "optional_int", None, at_least=(0, "N must be non-negative.")),
            TorchParam("increasing", "increasing", "bool", False),
        ),
        input="x",
        method=False,
        ndim=(1, 1, "x must be a one-dimensional tensor."),
        promote="int64",
        nodes=(("N", 0, None), ("N", 1, None), ("increasing", True, "torch::autograd::CopySlices")),
        torch_grad=False,
        samples=(((3,), ()), ((4,), (3, True)), ((3,), (5,)), ((2,), (1,))),
        out=False,  # (PyTorch's takes no ``out=``)
    ),
)


def polyfit(
    x: ArrayLike,
    y: ArrayLike,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: ArrayLike | None = None,
    cov: bool | str = False,
) -> Any:
    """Least-squares polynomial fit of degree ``deg`` (highest power first), as NumPy's.

    ``full=True`` adds ``(residuals, rank, singular_values, rcond)``; ``cov=True`` adds
    the scaled covariance of the coefficients (``cov='unscaled'`` skips the scaling).
    """
    check_arraylike("polyfit", x, y)
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError(f"polyfit: deg must be non-negative, got {deg}{here()}")
    x, y = _creation.asarray(x), _creation.asarray(y)
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError(f"polyfit: x must be a non-empty 1-D array, got shape {x.shape}{here()}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError(
            f"polyfit: y must be 1-D or 2-D with {x.shape[0]} rows, got shape {y.shape}{here()}"
        )
    order = deg + 1
    dt = _info.result_type(x, y, 1.0)
    x, y = x.astype(dt), y.astype(dt)
    lhs = vander(x, order)
    rhs = y
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(dt).eps)
    if w is not None:
        w = _creation.asarray(w).astype(dt)
        if w.shape != x.shape:
            raise TypeError(f"polyfit: w must have x's shape {x.shape}, got {w.shape}{here()}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = _ufuncs.sqrt(_reductions.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond=rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, _creation.asarray(rcond, dtype=s.dtype)
    if cov:
        base = linalg.inv(lhs.T @ lhs) / _linalg.outer(scale, scale)
        if cov == "unscaled":
            fac = _creation.asarray(1.0, dt)
        else:
            n = x.shape[0]
            if n <= order:
                raise ValueError(f"polyfit: the data must have more points than deg + 1{here()}")
            fac = resids / (n - order)
            if rhs.ndim == 1:
                fac = fac[0] if fac.ndim == 1 and fac.shape[0] else fac
        if rhs.ndim == 1:
            return c, base * fac
        return c, base[:, :, None] * fac
    return c
