"""Differences, integration, interpolation, convolution and polynomials.

Composites of funcgrad.numpy operations: ``convolve``/``correlate`` are one
``conv_general_dilated`` (a 1-D cross-correlation), ``interp`` is a ``searchsorted`` and two
gathers, polynomials are Horner loops and convolutions.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer
from funcgrad.numpy import _creation, _indexing, _info, _reductions, _shape, _sorting, _ufuncs
from funcgrad.numpy._core import ArrayLike, as_array, aval, convert, here, normalize_axis, out
from funcgrad.numpy._core import promote as _promote
from funcgrad.numpy._setops import searchsorted
from funcgrad.primitives.conv import ConvDimensionNumbers, conv_general_dilated


def _inexact(name: str, *args: Any) -> list:
    return [as_array(a, name) for a in _promote(name, *args, to="inexact")]


# --------------------------------------------------------------------------- differences


def _slice_axis(x: Any, axis: int, start: int | None, stop: int | None) -> Any:
    idx = [slice(None)] * aval(x).ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def diff(
    a: ArrayLike,
    n: int = 1,
    axis: int = -1,
    prepend: ArrayLike | None = None,
    append: ArrayLike | None = None,
) -> Any:
    """``n``-th discrete difference along ``axis`` (``not_equal`` for booleans)."""
    x = as_array(a, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}{here()}")
    if aval(x).ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {x}")
    if n == 0:
        return out(x)
    ax = normalize_axis(axis, aval(x).ndim, "diff")

    def edge(extra: Any) -> Any:
        e = _creation.asarray(extra)
        if aval(e).ndim == 0:
            shape = list(aval(x).shape)
            shape[ax] = 1
            e = _shape.broadcast_to(e, tuple(shape))
        return e

    parts = [] if prepend is None else [edge(prepend)]
    parts.append(x)
    if append is not None:
        parts.append(edge(append))
    if len(parts) > 1:
        x = _shape.concatenate(parts, axis=ax)
    for _ in range(n):
        hi, lo = _slice_axis(x, ax, 1, None), _slice_axis(x, ax, None, -1)
        x = _ufuncs.not_equal(hi, lo) if aval(x).dtype == np.bool_ else hi - lo
    return out(x)


def ediff1d(
    ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None
) -> Any:
    """Differences of consecutive elements of the flattened array, with optional ends."""
    x = _shape.ravel(ary)
    d = x[1:] - x[:-1]
    parts = []
    if to_begin is not None:
        parts.append(_shape.ravel(_creation.asarray(to_begin, dtype=aval(d).dtype)))
    parts.append(d)
    if to_end is not None:
        parts.append(_shape.ravel(_creation.asarray(to_end, dtype=aval(d).dtype)))
    return out(_shape.concatenate(parts) if len(parts) > 1 else d)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (samples at ``x`` or spaced
    ``dx``)."""
    if x is None:
        (yy, d) = _inexact("trapezoid", y, dx)
    else:
        yy, d = _inexact("trapezoid", y, x)
    ax = normalize_axis(axis, aval(yy).ndim, "trapezoid")
    yy = _shape.moveaxis(yy, ax, -1)
    if x is not None:
        if aval(d).ndim == 1:
            d = diff(d)
        else:
            d = diff(_shape.moveaxis(d, ax, -1), axis=-1)
    return out(0.5 * _reductions.sum(d * (yy[..., 1:] + yy[..., :-1]), axis=-1))


def gradient(
    f: ArrayLike,
    *varargs: ArrayLike,
    axis: int | Sequence[int] | None = None,
    edge_order: int | None = None,
) -> Any:
    """Gradient by second-order central differences inside and first-order one-sided
    differences at the edges (``varargs``: scalar spacings or coordinate arrays)."""
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    (y,) = _inexact("gradient", f)
    nd = aval(y).ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, int):
        axes = (normalize_axis(axis, nd, "gradient"),)
    else:
        axes = tuple(normalize_axis(a, nd, "gradient") for a in axis)
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and _info.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments to jnp.gradient")
    res = []
    for ax, h in zip(axes, spacing):
        n = aval(y).shape[ax]
        if n < 2:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, at least "
                f"(edge_order + 1) elements are required.{here()}"
            )
        t = _shape.moveaxis(y, ax, -1)
        if _info.ndim(h) == 0:
            inner = (t[..., 2:] - t[..., :-2]) / (2.0 * h)
            first = (t[..., 1:2] - t[..., :1]) / h
            last = (t[..., -1:] - t[..., -2:-1]) / h
        else:
            xs = _creation.asarray(h, dtype=aval(t).dtype)
            dx = diff(xs)
            d1, d2 = dx[:-1], dx[1:]
            a = -d2 / (d1 * (d1 + d2))
            b = (d2 - d1) / (d1 * d2)
            c = d1 / (d2 * (d1 + d2))
            inner = a * t[..., :-2] + b * t[..., 1:-1] + c * t[..., 2:]
            first = (t[..., 1:2] - t[..., :1]) / dx[0]
            last = (t[..., -1:] - t[..., -2:-1]) / dx[-1]
        g = _shape.concatenate([first, inner, last], axis=-1)
        res.append(out(_shape.moveaxis(g, -1, ax)))
    return res[0] if len(res) == 1 else res


def unwrap(
    p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi
) -> Any:
    """Unwrap a phase by adding multiples of ``period`` where consecutive values jump by more
    than ``discont`` (default ``period / 2``)."""
    (x,) = _inexact("unwrap", p)
    ax = normalize_axis(axis, aval(x).ndim, "unwrap")
    x = _shape.moveaxis(x, ax, -1)
    if discont is None:
        discont = period / 2
    interval = period / 2
    dd = diff(x, axis=-1)
    ddmod = _ufuncs.mod(dd + interval, period) - interval
    ddmod = _ufuncs.where(_ufuncs.logical_and(ddmod == -interval, dd > 0), interval, ddmod)
    corr = _ufuncs.where(_ufuncs.abs(dd) < discont, 0, ddmod - dd)
    cum = _shape.concatenate(
        [_creation.zeros_like(x[..., :1]), _reductions.cumsum(corr, axis=-1)], axis=-1
    )
    return out(_shape.moveaxis(x + cum, -1, ax))


# --------------------------------------------------------------------------- interpolation


def interp(
    x: ArrayLike,
    xp: ArrayLike,
    fp: ArrayLike,
    left: ArrayLike | str | None = None,
    right: ArrayLike | str | None = None,
    period: ArrayLike | None = None,
) -> Any:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``; ``left``/``right`` (or ``"extrapolate"``) outside, ``period`` for angles."""

    if _info.ndim(xp) != 1 or _info.ndim(fp) != 1:
        raise ValueError("xp and fp must be one-dimensional")
    if _info.shape(xp)[0] != _info.shape(fp)[0]:
        raise ValueError("xp and fp must be the same length")
    if _info.shape(xp)[0] == 0:
        raise ValueError("xp and fp must be non-empty")
    x, xp, fp = _inexact("interp", x, xp, fp)
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(f"{name}={v!r} is not valid; expected a value or 'extrapolate'")
    if period is not None:
        if _info.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = _ufuncs.abs(period)
        x = _ufuncs.mod(x, period)
        xp = _ufuncs.mod(xp, period)
        order = _sorting.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = _shape.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = _shape.concatenate([fp[-1:], fp, fp[:1]])
    n = aval(xp).shape[0]
    if n == 1:
        f = _shape.broadcast_to(fp[0], aval(x).shape)
    else:
        i = _ufuncs.clip(searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1 = _indexing.take(xp, i - 1), _indexing.take(xp, i)
        f0, f1 = _indexing.take(fp, i - 1), _indexing.take(fp, i)
        dx = x1 - x0
        f = _ufuncs.where(dx == 0, f1, f0 + (x - x0) * (f1 - f0) / _ufuncs.where(dx == 0, 1, dx))
    if period is None:
        if not isinstance(left, str):
            f = _ufuncs.where(x < xp[0], fp[0] if left is None else left, f)
        if not isinstance(right, str):
            f = _ufuncs.where(x > xp[-1], fp[-1] if right is None else right, f)
    return out(convert(f, aval(x).dtype, aval(x).weak_type))


# --------------------------------------------------------------------------- convolution


def _conv(name: str, a: ArrayLike, v: ArrayLike, mode: str, correlate: bool, pet: Any) -> Any:

    if _info.ndim(a) != 1 or _info.ndim(v) != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.{here()}")
    a, v = _inexact(name, a, v)
    if aval(a).shape[0] == 0 or aval(v).shape[0] == 0:
        raise ValueError(
            f"{name}: inputs cannot be empty, got shapes {aval(a).shape} and {aval(v).shape}."
        )
    swap = aval(v).shape[0] > aval(a).shape[0]
    if swap:  # the longer operand slides; a swapped correlation is reversed and conjugated
        a, v = v, a
    if correlate:
        v = _ufuncs.conj(v) if dtypes.kind(aval(v).dtype) == 3 else v
    else:
        v = v[::-1]
    nv = aval(v).shape[0]
    if mode == "valid":
        padding = ((0, 0),)
    elif mode == "same":
        padding = ((nv // 2, nv - nv // 2 - 1),)
    elif mode == "full":
        padding = ((nv - 1, nv - 1),)
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    dn = ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
    r = conv_general_dilated(
        a[None, None, :],
        v[None, None, :],
        window_strides=(1,),
        padding=padding,
        lhs_dilation=(1,),
        rhs_dilation=(1,),
        dimension_numbers=dn,
        preferred_element_type=pet,
    )[0, 0]
    if correlate and swap:
        r = r[::-1]
        if dtypes.kind(aval(r).dtype) == 3:
            r = _ufuncs.conj(r)
    return out(r)


def convolve(
    a: ArrayLike,
    v: ArrayLike,
    mode: str = "full",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Discrete linear convolution of two 1-D arrays (``mode``: full, same or valid)."""
    return _conv("convolve", a, v, mode, False, preferred_element_type)


def correlate(
    a: ArrayLike,
    v: ArrayLike,
    mode: str = "valid",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Cross-correlation of two 1-D arrays, ``sum(a[n + k] * conj(v[n]))``."""
    return _conv("correlate", a, v, mode, True, preferred_element_type)


# --------------------------------------------------------------------------- polynomials


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
    """Coefficients of the monic polynomial with the given roots (or a square matrix's
    characteristic polynomial is not supported)."""
    (z,) = _inexact("poly", seq_of_zeros)
    if aval(z).ndim != 1:
        raise NotImplementedError("poly of a matrix (its eigenvalues) is not supported")
    a = _creation.ones((1,), aval(z).dtype)
    for i in range(aval(z).shape[0]):
        a = convolve(a, _shape.stack([_creation.ones((), aval(z).dtype), -z[i]]), mode="full")
    return out(a)


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


__all__ = [
    "convolve",
    "correlate",
    "diff",
    "ediff1d",
    "gradient",
    "interp",
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "trapezoid",
    "unwrap",
    "vander",
]
