"""Statistics: NaN-ignoring reductions, quantiles, ``cov``/``corrcoef`` and histograms.

All are composites of funcgrad.numpy operations (reductions, ``sort``, gathers,
``scatter_add``), so they differentiate and batch through those primitives' rules.
Quantiles sort the reduced axes into one trailing axis (NaNs sort last) and gather the
two order statistics around ``q * (n - 1)``.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy import (
    _creation,
    _indexing,
    _info,
    _linalg,
    _numeric,
    _reductions,
    _shape,
    _sorting,
    _ufuncs,
)
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    check_arraylike,
    convert,
    fmt,
    here,
    normalize_axes,
    normalize_axis,
    out,
    promote,
    unsupported,
    user_dtype,
)
from funcgrad.numpy._setops import bincount, searchsorted
from funcgrad.sharding import auto_axes


def _no_out(name: str, o: Any) -> None:
    if o is not None:
        raise unsupported(f"{name}(..., out=...)")


# --------------------------------------------------------------------------- NaN reductions


def _nan_fill(a: Any, fill: Any) -> Any:
    if not dtypes.is_inexact(aval(a).dtype):
        return a
    return _ufuncs.where(_ufuncs.isnan(a), fill, a)


def nanprod(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Any:
    """Product treating NaNs as one."""
    _no_out("nanprod", out)
    a = as_array(a, "nanprod")
    kw = {} if initial is None else {"initial": initial}
    if where is not None:
        kw["where"] = where
    return _reductions.prod(_nan_fill(a, 1), axis=axis, dtype=dtype, keepdims=keepdims, **kw)


def _nan_minmax(name: str, a: ArrayLike, axis: Any, keepdims: bool, initial: Any, where: Any):
    a = as_array(a, name)
    red = _reductions.max if name == "nanmax" else _reductions.min
    kw: dict = {}
    if initial is not None:
        kw["initial"] = initial
    if where is not None:
        kw["where"] = where
    if not dtypes.is_inexact(aval(a).dtype):
        return red(a, axis=axis, keepdims=keepdims, **kw)
    nan = _ufuncs.isnan(a)
    res = red(
        _ufuncs.where(nan, -np.inf if name == "nanmax" else np.inf, a),
        axis,
        keepdims=keepdims,
        **kw,
    )
    allnan = _reductions.all(
        nan, axis=axis, keepdims=keepdims, **({} if where is None else {"where": where})
    )
    if initial is not None:
        return res
    return out(_ufuncs.where(allnan, np.nan, res))


def nanmax(
    a: ArrayLike,
    axis: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Any:
    """Maximum ignoring NaNs (NaN for an all-NaN slice)."""
    _no_out("nanmax", out)
    return _nan_minmax("nanmax", a, axis, keepdims, initial, where)


def nanmin(
    a: ArrayLike,
    axis: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike | None = None,
) -> Any:
    """Minimum ignoring NaNs (NaN for an all-NaN slice)."""
    _no_out("nanmin", out)
    return _nan_minmax("nanmin", a, axis, keepdims, initial, where)


def _nan_arg(name: str, a: ArrayLike, axis: Any, keepdims: Any) -> Any:
    a = as_array(a, name)
    red = _reductions.argmax if name == "nanargmax" else _reductions.argmin
    kw = {} if keepdims is None else {"keepdims": keepdims}
    if not dtypes.is_inexact(aval(a).dtype):
        return red(a, axis=axis, **kw)
    nan = _ufuncs.isnan(a)
    res = red(_ufuncs.where(nan, -np.inf if name == "nanargmax" else np.inf, a), axis=axis, **kw)
    allnan = _reductions.all(nan, axis=axis, keepdims=bool(keepdims))
    return out(_ufuncs.where(allnan, -1, res))


def nanargmax(
    a: ArrayLike, axis: int | None = None, out: Any = None, keepdims: bool | None = None
) -> Any:
    """Index of the maximum ignoring NaNs (-1 for an all-NaN slice)."""
    _no_out("nanargmax", out)
    return _nan_arg("nanargmax", a, axis, keepdims)


def nanargmin(
    a: ArrayLike, axis: int | None = None, out: Any = None, keepdims: bool | None = None
) -> Any:
    """Index of the minimum ignoring NaNs (-1 for an all-NaN slice)."""
    _no_out("nanargmin", out)
    return _nan_arg("nanargmin", a, axis, keepdims)


def nanvar(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    where: ArrayLike | None = None,
) -> Any:
    """Variance ignoring NaNs (NaN where fewer than ``ddof + 1`` values remain); NaNs get
    zero gradient."""
    _no_out("nanvar", out)
    a = as_array(a, "nanvar")
    _reductions.check_where("nanvar", where)
    dt = dtypes.to_inexact(aval(a).dtype) if dtype is None else user_dtype(dtype, "nanvar")
    if dtypes.kind(aval(a).dtype) == 3 and dtypes.kind(dt) != 3:
        raise ValueError(
            f"nanvar: a real dtype= for the variance of complex values is not supported, "
            f"got {dt} for {fmt(a)} (as jax.numpy.var){here()}"
        )
    x = convert(a, dt, aval(a).weak_type)
    keep = _ufuncs.logical_not(_ufuncs.isnan(x))
    if where is not None:
        keep = _ufuncs.logical_and(keep, where)
    x = _ufuncs.where(keep, x, 0)
    cnt = _reductions.sum(keep, axis=axis, keepdims=True, dtype=dtypes.to_inexact(dt))
    mean = _reductions.sum(x, axis=axis, keepdims=True) / _ufuncs.maximum(cnt, 1)
    c = _ufuncs.where(keep, x - mean, 0)
    sq = _ufuncs.real(c * _ufuncs.conj(c)) if dtypes.kind(dt) == 3 else c * c
    s = _reductions.sum(sq, axis=axis, keepdims=keepdims)
    norm = _reductions.sum(keep, axis=axis, keepdims=keepdims, dtype=aval(s).dtype) - ddof
    pos = norm > 0
    return _ufuncs.where(pos, s / _ufuncs.where(pos, norm, 1), np.nan)


def nanstd(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    where: ArrayLike | None = None,
) -> Any:
    """Standard deviation ignoring NaNs."""
    check_arraylike("nanstd", a)
    return _ufuncs.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


def nancumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaNs as zero."""
    _no_out("nancumsum", out)
    return _reductions.cumsum(_nan_fill(as_array(a, "nancumsum"), 0), axis=axis, dtype=dtype)


def nancumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaNs as one."""
    _no_out("nancumprod", out)
    return _reductions.cumprod(_nan_fill(as_array(a, "nancumprod"), 1), axis=axis, dtype=dtype)


# --------------------------------------------------------------------------- quantiles

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile(
    name: str,
    a: ArrayLike,
    q: ArrayLike,
    axis: Any,
    method: str,
    keepdims: bool,
    squash_nans: bool,
    out_arg: Any,
    interpolation: Any,
    weights: ArrayLike | None = None,
) -> Any:
    """The quantile functions' one body (``name`` for messages; ``q`` in [0, 1])."""
    _no_out(name, out_arg)
    if interpolation is not None:
        raise TypeError(f"{name}() argument interpolation was removed; use method instead.")
    if method not in _METHODS:
        raise ValueError(
            f"{name}: method can only be {', '.join(map(repr, _METHODS))}, got {method!r}"
        )
    a = as_array(a, name)
    if weights is not None:
        a, weights = _quantile_weights(name, a, weights, axis, method)
    if dtypes.kind(aval(a).dtype) == 3:
        raise ValueError(f"{name} does not support complex input{here()}")
    q = as_array(q, name)
    if aval(q).ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {aval(q).shape}")
    a_dt = dtypes.to_inexact(aval(a).dtype)
    dt, weak = dtypes.result_type((a_dt, aval(a).weak_type), (aval(q).dtype, aval(q).weak_type))
    dt = dtypes.to_inexact(dt)
    a, q = convert(a, dt, weak), convert(q, dt, weak)
    shape = aval(a).shape
    axes = normalize_axes(axis, len(shape), name)
    rest = [d for d in range(len(shape)) if d not in axes]
    n = int(np.prod([shape[d] for d in axes], dtype=np.int64))

    def to_rows(x: Any) -> Any:  # the reduced axes last, flattened: (*rest, n)
        return _shape.reshape(_shape.transpose(x, (*rest, *axes)), (*[shape[d] for d in rest], n))

    y = to_rows(a)
    if method == "inverted_cdf":
        order = _sorting.argsort(y, axis=-1, stable=True)
        s = _indexing.take_along_axis(y, order, axis=-1)
        w = None if weights is None else _indexing.take_along_axis(to_rows(weights), order, axis=-1)
    else:
        s = _sorting.sort(y, axis=-1)
    nan = _ufuncs.isnan(y)
    if squash_nans:
        count = _reductions.sum(_ufuncs.logical_not(nan), axis=-1, keepdims=True, dtype=dt)
    else:
        count = _creation.full((*aval(y).shape[:-1], 1), n, dt)
    qs = _shape.reshape(q, (*[1] * len(rest), -1))  # (1, ..., Q): no rank promotion
    if method == "inverted_cdf":
        res = _inverted_cdf(s, w, qs, count, squash_nans)
        return _quantile_result(res, q, shape, axes, keepdims, dt, weak)
    pos = qs * (count - 1)  # (*rest, Q)
    lo = _ufuncs.clip(_ufuncs.floor(pos), 0, _ufuncs.maximum(count - 1, 0))
    hi = _ufuncs.clip(_ufuncs.ceil(pos), 0, _ufuncs.maximum(count - 1, 0))
    ilo, ihi = convert(lo, dtypes.default_dtype(1)), convert(hi, dtypes.default_dtype(1))
    vlo = _indexing.take_along_axis(s, ilo, axis=-1)
    vhi = _indexing.take_along_axis(s, ihi, axis=-1)
    frac = pos - lo
    if method == "linear":
        res = vlo * (1 - frac) + vhi * frac
    elif method == "lower":
        res = vlo
    elif method == "higher":
        res = vhi
    elif method == "midpoint":
        res = (vlo + vhi) * 0.5
    else:  # nearest: ties go to the lower neighbour, as jnp
        res = _ufuncs.where(frac <= 0.5, vlo, vhi)
    if squash_nans:
        res = _ufuncs.where(_ufuncs.equal(count, 0), np.nan, res)
    else:
        res = _ufuncs.where(_reductions.any(nan, axis=-1, keepdims=True), np.nan, res)
    return _quantile_result(res, q, shape, axes, keepdims, dt, weak)


def _quantile_result(
    res: Any, q: Any, shape: tuple, axes: Sequence[int], keepdims: bool, dt: Any, weak: bool
) -> Any:
    """The quantiles ``(*rest, Q)`` in NumPy's layout: ``q``'s axis first, the reduced
    axes dropped (or kept as ones)."""
    res = _shape.moveaxis(res, -1, 0)  # (Q, *rest)
    if keepdims:
        kept = tuple(1 if d in axes else k for d, k in enumerate(shape))
        res = _shape.reshape(res, (aval(res).shape[0], *kept))
    if aval(q).ndim == 0:
        res = res[0]
    return out(convert(res, dt, weak))


def _quantile_weights(name: str, a: Any, weights: ArrayLike, axis: Any, method: str) -> tuple:
    """``a`` and ``weights`` promoted together, the weights broadcast to ``a``'s shape
    (weights over the reduced axes, in ``axis``'s order, as JAX's); only the
    ``inverted_cdf`` method takes weights."""
    weights = as_array(weights, name)
    if dtypes.kind(aval(weights).dtype) == 3:
        raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
        raise NotImplementedError(
            f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights."
        )
    a, weights = promote(name, a, weights, to="inexact")
    av, wv = aval(a), aval(weights)
    if wv.shape == av.shape:
        return a, weights
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    order = [normalize_axis(d, av.ndim, name) for d in np.atleast_1d(axis).tolist()]
    want = tuple(av.shape[d] for d in order)
    if wv.shape != want:
        raise ValueError(f"Weights shape {wv.shape} must match reduction axes {want}")
    perm = tuple(int(i) for i in np.argsort(order))
    weights = _shape.transpose(weights, perm)
    kept = [av.shape[d] if d in order else 1 for d in range(av.ndim)]
    return a, _shape.broadcast_to(_shape.reshape(weights, tuple(kept)), av.shape)


def _inverted_cdf(s: Any, w: Any, qs: Any, count: Any, squash_nans: bool) -> Any:
    """The ``inverted_cdf`` quantiles of the sorted rows ``s`` (``(*rest, n)``) with
    weights ``w`` sorted alike (``None``: ones): the first value whose cumulative weight
    reaches ``q`` times the row's total. NaN values weigh nothing; a negative or NaN
    weight, or a NaN value where NaNs are not squashed, makes the row's quantiles NaN.
    Returns ``(*rest, Q)``."""
    nan = _ufuncs.isnan(s)
    if w is None:
        w = _creation.ones_like(s)
    bad = _ufuncs.logical_or(_ufuncs.less(w, 0), _ufuncs.isnan(w))
    clean = _ufuncs.where(_ufuncs.logical_or(bad, nan), 0, w)
    cw = _reductions.cumsum(clean, axis=-1)  # (*rest, n)
    target = qs * cw[..., -1:]  # (*rest, Q)
    below = _ufuncs.less(_shape.expand_dims(cw, -2), _shape.expand_dims(target, -1))
    idx = _reductions.sum(below, axis=-1, dtype=dtypes.default_dtype(1))  # (*rest, Q)
    limit = convert(_ufuncs.maximum(count - 1, 0), dtypes.default_dtype(1))
    idx = _ufuncs.minimum(idx, limit)
    res = _indexing.take_along_axis(s, idx, axis=-1)
    force = _reductions.any(bad, axis=-1, keepdims=True)
    if squash_nans:
        force = _ufuncs.logical_or(force, _ufuncs.equal(count, 0))
    else:
        force = _ufuncs.logical_or(force, _reductions.any(nan, axis=-1, keepdims=True))
    return _ufuncs.where(force, np.nan, res)


def quantile(
    a: ArrayLike,
    q: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: Any = None,
) -> Any:
    """The ``q``-th quantiles (``q`` in [0, 1], scalar or 1-D) over ``axis``; ``weights``
    (same shape as ``a``, or the reduced axes' shape) only with ``method="inverted_cdf"``."""
    check_arraylike("quantile", a, q)
    return _quantile("quantile", a, q, axis, method, keepdims, False, out, interpolation, weights)


def nanquantile(
    a: ArrayLike,
    q: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: Any = None,
) -> Any:
    """:func:`quantile` ignoring NaNs."""
    check_arraylike("nanquantile", a, q)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, out, interpolation, weights)


def percentile(
    a: ArrayLike,
    q: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The ``q``-th percentiles (``q`` in [0, 100]); with ``out_sharding`` computed with the
    mesh's axes automatic and placed by it (as JAX's)."""
    check_arraylike("percentile", a, q)
    q = _ufuncs.true_divide(q, 100.0)

    def run(a: Any, q: Any, weights: Any) -> Any:
        return _quantile(
            "percentile", a, q, axis, method, keepdims, False, out, interpolation, weights
        )

    if out_sharding is not None:
        return auto_axes(run, out_sharding=out_sharding)(a, q, weights)
    return run(a, q, weights)


def nanpercentile(
    a: ArrayLike,
    q: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: ArrayLike | None = None,
    interpolation: Any = None,
) -> Any:
    """:func:`percentile` ignoring NaNs."""
    check_arraylike("nanpercentile", a, q)
    q = _ufuncs.true_divide(q, 100.0)
    return _quantile(
        "nanpercentile", a, q, axis, method, keepdims, True, out, interpolation, weights
    )


def nanmedian(
    a: ArrayLike,
    axis: int | tuple[int, ...] | None = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Any:
    """Median ignoring NaNs."""
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True, out, None)


# --------------------------------------------------------------------------- cov, corrcoef


def cov(
    m: ArrayLike,
    y: ArrayLike | None = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: ArrayLike | None = None,
    aweights: ArrayLike | None = None,
    dtype: Any = None,
) -> Any:
    """Covariance matrix of the variables in the rows (``rowvar``) or columns of ``m``
    (and ``y``), with optional frequency and analytic weights, computed in ``dtype`` (an
    inexact dtype) when given."""
    _check_inexact("cov", dtype)
    m = as_array(m, "cov")
    if aval(m).ndim > 2:
        raise ValueError(f"m has more than 2 dimensions{here()}")
    x = _shape.atleast_2d(_creation.asarray(m))
    x = _creation.asarray(x, dtype=dtypes.to_inexact(aval(x).dtype))
    if not rowvar and aval(x).shape[0] != 1:
        x = x.T
    if aval(x).shape[0] == 0:
        return out(_creation.zeros((0, 0), aval(x).dtype))
    if y is not None:
        yy = _shape.atleast_2d(_creation.asarray(y))
        if aval(yy).ndim > 2:
            raise ValueError(f"y has more than 2 dimensions{here()}")
        if not rowvar and aval(yy).shape[0] != 1:
            yy = yy.T
        x = _shape.concatenate([x, _creation.asarray(yy, dtype=aval(x).dtype)], axis=0)
    if dtype is not None:
        x = _creation.asarray(x, dtype=dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    nobs = aval(x).shape[1]
    w = None
    if fweights is not None:
        f = _creation.asarray(fweights)
        if aval(f).ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if aval(f).shape[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if dtypes.kind(aval(f).dtype) != 1:
            raise TypeError("fweights must be integer.")
        w = f
    if aweights is not None:
        aw = _creation.asarray(aweights)
        if aval(aw).ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aval(aw).shape[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and aweights")
        w = aw if w is None else w * aw
    if w is None:
        avg = _reductions.mean(x, axis=1)
        fact = nobs - ddof
        x = x - avg[:, None]
        c = _linalg.dot(x, _ufuncs.conj(x).T) / fact
    else:
        w = _creation.asarray(w, dtype=aval(x).dtype)
        wsum = _reductions.sum(w)
        avg = _reductions.sum(x * w, axis=1) / wsum
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = wsum - ddof
        else:
            fact = (
                wsum
                - ddof
                * _reductions.sum(w * _creation.asarray(aweights, dtype=aval(x).dtype))
                / wsum
            )
        x = x - avg[:, None]
        c = _linalg.dot(x * w, _ufuncs.conj(x).T) / fact
    return out(_shape.squeeze(c))


def _check_inexact(name: str, dtype: Any) -> None:
    if dtype is not None and not _info.issubdtype(dtype, np.inexact):
        raise ValueError(f"{name}: dtype must be a subclass of float or complex; got {dtype=}")


def corrcoef(
    x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, dtype: Any = None
) -> Any:
    """Pearson correlation coefficients (``cov`` normalised by the standard deviations),
    computed in ``dtype`` (an inexact dtype) when given."""
    check_arraylike("corrcoef", x)
    _check_inexact("corrcoef", dtype)
    c = cov(x, y, rowvar, dtype=dtype)
    if aval(c).ndim == 0:
        return out(c / c)
    d = _ufuncs.real(_shape.diagonal(c)) if dtypes.kind(aval(c).dtype) == 3 else _shape.diagonal(c)
    sd = _ufuncs.sqrt(d)
    c = c / sd[:, None] / sd[None, :]
    if dtypes.kind(aval(c).dtype) == 3:
        return out(_ufuncs.clip(_ufuncs.real(c), -1, 1) + 1j * _ufuncs.clip(_ufuncs.imag(c), -1, 1))
    return out(_ufuncs.clip(c, -1, 1))


# --------------------------------------------------------------------------- histograms


def histogram_bin_edges(
    a: ArrayLike,
    bins: ArrayLike = 10,
    range: Sequence[ArrayLike] | None = None,
    weights: ArrayLike | None = None,
) -> Any:
    """Bin edges :func:`histogram` uses: ``bins + 1`` even edges over ``range`` (by default
    the data's min and max), or ``bins`` itself when it is an array of edges."""
    check_arraylike("histogram_bin_edges", a)
    (a,) = promote("histogram_bin_edges", _shape.ravel(a), to="inexact")
    dt = aval(a).dtype
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        nb = operator.index(bins)
        if nb < 1:
            raise ValueError(f"histogram: bins must be a positive integer, got {bins}{here()}")
        if range is None:
            lo, hi = _reductions.min(a), _reductions.max(a)
        else:
            if len(range) != 2:
                raise ValueError(f"histogram: range must be a pair (min, max), got {range!r}")
            lo, hi = _creation.asarray(range[0]), _creation.asarray(range[1])
        lo, hi = convert(_creation.asarray(lo), dt), convert(_creation.asarray(hi), dt)
        same = _ufuncs.equal(lo, hi)
        lo = _ufuncs.where(same, lo - 0.5, lo)
        hi = _ufuncs.where(same, hi + 0.5, hi)
        t = np.linspace(0.0, 1.0, nb + 1)[:-1].astype(dt)
        return out(_shape.concatenate([lo + (hi - lo) * t, _shape.reshape(hi, (1,))]))
    edges = _creation.asarray(bins)
    if aval(edges).ndim != 1:
        raise ValueError(f"histogram: bins must be an int or a 1-D array, got {aval(edges).shape}")
    return out(convert(edges, dt))


def histogram(
    a: ArrayLike,
    bins: ArrayLike = 10,
    range: Sequence[ArrayLike] | None = None,
    weights: ArrayLike | None = None,
    density: bool | None = None,
) -> tuple[Any, Any]:
    """Counts (or summed ``weights``) of ``a`` in each bin, and the bin edges; the last bin
    includes its right edge; values outside the edges are dropped."""

    # as jnp: the data and the weights promoted together to an inexact dtype, which the
    # edges and the counts take
    check_arraylike("histogram", a)
    if weights is not None:
        a, w = promote("histogram", _shape.ravel(a), _shape.ravel(weights), to="inexact")
        if aval(w).shape != aval(a).shape:
            raise ValueError(
                f"histogram: weights should have the same shape as a, got {aval(w).shape} and "
                f"{aval(a).shape}"
            )
    else:
        (a,) = promote("histogram", _shape.ravel(a), to="inexact")
        w = _creation.ones(aval(a).shape, aval(a).dtype)
    edges = histogram_bin_edges(a, bins, range, weights)
    nb = aval(edges).shape[0] - 1
    idx = searchsorted(edges, a, side="right") - 1
    idx = _ufuncs.where(_ufuncs.equal(a, edges[-1]), nb - 1, idx)
    inside = _ufuncs.logical_and(
        _ufuncs.greater_equal(a, edges[0]), _ufuncs.less_equal(a, edges[-1])
    )
    idx = _ufuncs.where(inside, idx, nb)  # dropped by bincount's length
    counts = bincount(idx, w, length=nb)
    if density:
        counts = counts / _reductions.sum(counts) / _numeric.diff(edges)
    return counts, edges


def histogram2d(
    x: ArrayLike,
    y: ArrayLike,
    bins: ArrayLike | list[ArrayLike] = 10,
    range: Sequence[Sequence[ArrayLike] | None] | None = None,
    weights: ArrayLike | None = None,
    density: bool | None = None,
) -> tuple[Any, Any, Any]:
    """Two-dimensional histogram of the points ``(x[i], y[i])``."""
    check_arraylike("histogram2d", x, y)
    sample = _shape.stack([_shape.ravel(x), _shape.ravel(y)], axis=1)
    h, edges = histogramdd(sample, bins, range, weights, density)
    return h, edges[0], edges[1]


def histogramdd(
    sample: ArrayLike,
    bins: ArrayLike | list[ArrayLike] = 10,
    range: Sequence[Sequence[ArrayLike] | None] | None = None,
    weights: ArrayLike | None = None,
    density: bool | None = None,
) -> tuple[Any, list[Any]]:
    """D-dimensional histogram of the rows of ``sample`` (shape ``(N, D)``)."""

    check_arraylike("histogramdd", sample)
    sample = _creation.asarray(sample)
    if aval(sample).ndim == 1:
        sample = sample[:, None]
    # as jnp: the sample (with the weights) promoted to an inexact dtype, which the edges
    # take, and the weighted counts too; unweighted counts are integers
    if weights is not None:
        sample, weights = promote("histogramdd", sample, _shape.ravel(weights), to="inexact")
    else:
        (sample,) = promote("histogramdd", sample, to="inexact")
    n, d = aval(sample).shape
    if isinstance(bins, (int, np.integer)):
        bins = [bins] * d
    if len(bins) != d:
        raise ValueError("should be a bin for each dimension.")
    if range is None:
        range = [None] * d
    edges = [histogram_bin_edges(sample[:, i], bins[i], range[i]) for i in builtins.range(d)]
    sizes = [aval(e).shape[0] - 1 for e in edges]
    flat = _creation.zeros((n,), dtypes.default_dtype(1))
    inside = _creation.ones((n,), bool)
    for i, e in enumerate(edges):
        # the values in the edges' dtype (NumPy's comparison; explicit, so JAX's strict
        # promotion mode does not reject funcgrad's own arithmetic)
        v = _creation.asarray(sample[:, i], aval(e).dtype)
        j = searchsorted(e, v, side="right") - 1
        j = _ufuncs.where(_ufuncs.equal(v, e[-1]), sizes[i] - 1, j)
        inside = _ufuncs.logical_and(inside, _ufuncs.logical_and(v >= e[0], v <= e[-1]))
        flat = flat * sizes[i] + _creation.asarray(j, aval(flat).dtype)
    total = int(np.prod(sizes))
    flat = _ufuncs.where(inside, flat, total)
    w = _creation.ones((n,), dtypes.default_dtype(1)) if weights is None else _shape.ravel(weights)
    h = _shape.reshape(bincount(flat, w, length=total), sizes)
    if density:
        h = convert(h, aval(sample).dtype)
        h = h / _reductions.sum(h)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = sizes[i]
            h = h / _shape.reshape(_numeric.diff(e), shape)
    return h, edges


__all__ = [
    "corrcoef",
    "cov",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nanvar",
    "percentile",
    "quantile",
]

_ = normalize_axis
