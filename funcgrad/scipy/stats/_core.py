"""Summary statistics of ``jax.scipy.stats``: ``rankdata``, ``mode`` and ``sem``."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.core.dtypes import canonicalize
from funcgrad.numpy._core import ArrayLike, aval, here, normalize_axis, promote


class ModeResult(NamedTuple):
    """``mode``'s result: the most common value and how often it occurs."""

    mode: Any
    count: Any


def _nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(
            f"{name}: illegal nan_policy value {nan_policy!r}; expected one of "
            f"'propagate', 'omit', 'raise'{here()}"
        )
    if nan_policy != "propagate":
        raise NotImplementedError(
            f"{name}: nan_policy={nan_policy!r} is not implemented (as in JAX){here()}"
        )


def _default_float() -> np.dtype:

    return canonicalize(np.float64)


def _rank_last(a: Any, method: str) -> Any:
    """Ranks along the last axis."""
    dt = _default_float()
    n = aval(a).shape[-1]
    order = fnp.argsort(a, axis=-1, stable=True)
    inv = fnp.argsort(order, axis=-1, stable=True)
    if method == "ordinal":
        ranks = (inv + 1).astype(dt)
    else:
        srt = fnp.take_along_axis(a, order, axis=-1)
        new = fnp.concatenate(
            [fnp.ones(aval(a).shape[:-1] + (1,), bool), srt[..., 1:] != srt[..., :-1]], axis=-1
        )
        dense_sorted = fnp.cumsum(new, axis=-1)
        dense = fnp.take_along_axis(dense_sorted, inv, axis=-1)
        if method == "dense":
            ranks = dense.astype(dt)
        else:
            # first and last sorted position of each element's group of ties
            pos = fnp.arange(n)
            same = dense_sorted[..., :, None] == dense_sorted[..., None, :]
            first = fnp.min(fnp.where(same, pos, n), axis=-1, initial=n)
            last = fnp.max(fnp.where(same, pos, -1), axis=-1, initial=-1)
            lo = fnp.take_along_axis(first, inv, axis=-1).astype(dt) + 1
            hi = fnp.take_along_axis(last, inv, axis=-1).astype(dt) + 1
            ranks = {"min": lo, "max": hi, "average": 0.5 * (lo + hi)}[method]
    has_nan = fnp.any(fnp.isnan(a), axis=-1, keepdims=True) if n else False
    return fnp.where(has_nan, np.nan, ranks).astype(dt)


def rankdata(
    a: ArrayLike, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate"
) -> Any:
    """Ranks of the data (1-based), ties resolved by ``method`` (``'average'``,
    ``'min'``, ``'max'``, ``'dense'`` or ``'ordinal'``); a slice holding a NaN ranks as
    all NaN. Without ``axis`` the flattened array is ranked."""
    _nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"rankdata: unknown method {method!r}{here()}")
    (a,) = promote("rankdata", a)
    if axis is None:
        return _rank_last(fnp.ravel(a), method)
    axis = normalize_axis(axis, aval(a).ndim, "rankdata")
    return fnp.moveaxis(_rank_last(fnp.moveaxis(a, axis, -1), method), -1, axis)


def mode(
    a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False
) -> ModeResult:
    """Most common value along ``axis`` (the smallest one among ties) and its count."""
    _nan_policy("mode", nan_policy)
    (x,) = promote("mode", a)
    x = fnp.atleast_1d(x)
    shape = aval(x).shape
    if axis is None:
        x, ax = fnp.ravel(x)[:, None], 0
        out_shape = (1,) * len(shape) if keepdims else ()
    else:
        ax = normalize_axis(axis, len(shape), "mode")
        kept = tuple(1 if i == ax else s for i, s in enumerate(shape))
        out_shape = kept if keepdims else tuple(s for i, s in enumerate(shape) if i != ax)
    x = fnp.moveaxis(x, ax, -1)
    srt = fnp.take_along_axis(x, fnp.argsort(x, axis=-1), axis=-1)
    counts = fnp.sum(srt[..., :, None] == srt[..., None, :], axis=-1)
    best = fnp.argmax(counts, axis=-1)[..., None]
    m = fnp.take_along_axis(srt, best, axis=-1)[..., 0]
    c = fnp.take_along_axis(counts, best, axis=-1)[..., 0]
    return ModeResult(fnp.reshape(m, out_shape), fnp.reshape(c, out_shape))


def sem(
    a: ArrayLike,
    axis: int | None = 0,
    ddof: int = 1,
    nan_policy: str = "propagate",
    *,
    keepdims: bool = False,
) -> Any:
    """Standard error of the mean: ``std(a, ddof) / sqrt(n)`` along ``axis``
    (``nan_policy='omit'`` ignores NaNs)."""
    (b,) = promote("sem", a, to="inexact")
    b = fnp.asarray(b)
    dt = aval(b).dtype
    if nan_policy == "propagate":
        size = b.size if axis is None else aval(b).shape[axis]
        return fnp.std(b, axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(size).astype(dt)
    if nan_policy == "omit":
        count = fnp.sum(~fnp.isnan(b), axis, keepdims=keepdims)
        return fnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(count).astype(dt)
    raise ValueError(f"sem: nan_policy {nan_policy!r} is not supported{here()}")
