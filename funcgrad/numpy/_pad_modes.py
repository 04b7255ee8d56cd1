"""``pad``'s statistic modes (``maximum``, ``minimum``, ``mean``, ``median``) and
``linear_ramp``, axis by axis as NumPy pads: each side of an axis is filled from the
array padded so far (statistics of the first/last ``stat_length`` entries; a ramp from
``end_values`` to the edge value). Compositions of slices, reductions and
concatenations, so they trace and differentiate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy._core import aval, broadcast_to_shape, convert
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh
from funcgrad.primitives import sort as srt


def _pairs(v: Any, nd: int) -> list[tuple[Any, Any]]:
    """A per-axis ``(before, after)`` option (NumPy's broadcasting of pad options)."""
    if v is None:
        return [(None, None)] * nd
    arr = np.broadcast_to(np.asarray(v, dtype=object), (nd, 2))
    return [(arr[d, 0], arr[d, 1]) for d in range(nd)]


def _take(a: Any, d: int, start: int, stop: int) -> Any:
    shape = aval(a).shape
    lo = [0] * len(shape)
    hi = list(shape)
    lo[d], hi[d] = start, stop
    return sh.slice(a, tuple(lo), tuple(hi), (1,) * len(shape))


def _fill(v: Any, a: Any, d: int, width: int) -> Any:
    shape = list(aval(a).shape)
    shape[d] = width
    return broadcast_to_shape(v, tuple(shape), "pad")


def _stat(mode: str, block: Any, d: int) -> Any:
    """The statistic of ``block`` along axis ``d``, kept as a size-1 axis (a mean or
    median in the inexact dtype)."""
    a = aval(block)
    keep = tuple(1 if i == d else s for i, s in enumerate(a.shape))
    if mode in ("maximum", "minimum"):
        v = (rd.reduce_max if mode == "maximum" else rd.reduce_min)(block, (d,))
        return sh.reshape(v, keep)
    ct = dtypes.to_inexact(a.dtype) if not dtypes.is_inexact(a.dtype) else a.dtype
    x = convert(block, ct)
    k = a.shape[d]
    if mode == "mean":
        return sh.reshape(ew.div(rd.reduce_sum(x, (d,)), np.asarray(k, ct)), keep)
    (s,) = srt.sort(x, dimension=d)
    mid = ew.add(_take(s, d, (k - 1) // 2, (k - 1) // 2 + 1), _take(s, d, k // 2, k // 2 + 1))
    return ew.mul(mid, np.asarray(0.5, ct))


def pad_stat(a: Any, widths: list[tuple[int, int]], mode: str, stat_length: Any) -> Any:
    """``pad(a, widths, mode)`` for ``mode`` in maximum/minimum/mean/median."""
    dt = aval(a).dtype
    for d, ((lo, hi), (sl_lo, sl_hi)) in enumerate(zip(widths, _pairs(stat_length, len(widths)))):
        n = aval(a).shape[d]
        parts = []
        for width, length, first in ((lo, sl_lo, True), (hi, sl_hi, False)):
            if not width:
                parts.append(None)
                continue
            k = n if length is None else max(1, min(int(length), n))
            block = _take(a, d, 0, k) if first else _take(a, d, n - k, n)
            v = _stat(mode, block, d)
            if mode in ("mean", "median") and not dtypes.is_inexact(dt):
                v = ew.round(v)  # to nearest even, as NumPy's around
            parts.append(_fill(convert(v, dt), a, d, width))
        pieces = [p for p in (parts[0], a, parts[1]) if p is not None]
        a = sh.concatenate(*pieces, dimension=d) if len(pieces) > 1 else a
    return a


def pad_linear_ramp(a: Any, widths: list[tuple[int, int]], end_values: Any) -> Any:
    """``pad(a, widths, "linear_ramp", end_values=...)``: each side a ramp from its end
    value towards the edge value (the edge itself excluded), as NumPy's."""
    dt = aval(a).dtype
    ct = dtypes.to_inexact(dt) if not dtypes.is_inexact(dt) else dt
    ends = _pairs(0 if end_values is None else end_values, len(widths))
    for d, ((lo, hi), (e_lo, e_hi)) in enumerate(zip(widths, ends)):
        n = aval(a).shape[d]
        nd = aval(a).ndim
        parts = []
        for width, end, first in ((lo, e_lo, True), (hi, e_hi, False)):
            if not width:
                parts.append(None)
                continue
            edge = convert(_take(a, d, 0, 1) if first else _take(a, d, n - 1, n), ct)
            # t runs over the new entries, 0 at the end value, towards 1 at the edge
            steps = np.arange(width, dtype=np.float64) / width
            t = steps if first else steps[::-1]
            shape = [1] * nd
            shape[d] = width
            full = _fill(edge, a, d, width)
            t = np.broadcast_to(np.asarray(t.reshape(shape), ct), aval(full).shape)
            e = np.asarray(end, ct)
            ramp = ew.add(e, ew.mul(ew.sub(full, e), t))
            if not dtypes.is_inexact(dt):  # NumPy's integer linspace rounds down
                ramp = ew.floor(ramp)
            parts.append(convert(ramp, dt))
        pieces = [p for p in (parts[0], a, parts[1]) if p is not None]
        a = sh.concatenate(*pieces, dimension=d) if len(pieces) > 1 else a
    return a
