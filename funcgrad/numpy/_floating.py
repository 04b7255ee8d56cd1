"""Floating-point representation: ``frexp`` and ``ldexp`` (mantissa and exponent),
``modf`` (fractional and integral parts) and ``spacing`` (the distance to the neighbouring
representable float; ``nextafter`` is declared on its row).

Composites of other funcgrad.numpy functions, so they trace;
``ldexp`` and ``frexp`` are exact (powers of two are built from their bit patterns).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import lax
from funcgrad.numpy import _creation, _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    aval,
    check_arraylike,
    check_kind,
    promote_broadcast,
)


def spacing(x: ArrayLike, /) -> Any:
    """Distance from ``x`` to the next float away from zero (negative for ``x < 0``)."""
    (x,) = promote_broadcast("spacing", x, to="inexact")
    check_kind("spacing", "real", x)
    toward = _ufuncs.where(x < 0, -np.inf, np.inf).astype(aval(x).dtype)
    return _ufuncs.DECLARED["nextafter"](x, toward) - x


def _pow2(k: Any, dt: np.dtype) -> Any:
    """Exactly ``2.0**k`` in ``dt`` for integer ``k`` in the normal exponent range."""

    fi = np.finfo(dt)
    width = np.dtype(dt).itemsize * 8
    ut = np.dtype(f"uint{width}")
    biased = (k + (fi.maxexp - 1)).astype(ut)
    return lax.bitcast_convert_type(
        _ufuncs.DECLARED["left_shift"](biased, np.asarray(fi.nmant, ut)), dt
    )


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 * 2**x2`` (``x2`` an integer array), exact unless the result
    over- or underflows."""
    check_arraylike("ldexp", x1, x2)
    (e,) = promote_broadcast("ldexp", _creation.asarray(x2))
    check_kind("ldexp", "int", e)
    (x,) = promote_broadcast("ldexp", x1, to="inexact")
    check_kind("ldexp", "real", x)
    dt = aval(x).dtype
    fi = np.finfo(dt)
    lo, hi = fi.minexp, fi.maxexp - 1
    e = e.astype(np.int64 if np.dtype(dt).itemsize == 8 else np.int32)
    # three steps in the normal range reach every finite result (subnormals included)
    for _ in range(3):
        step = _ufuncs.clip(e, lo, hi)
        x = x * _pow2(step, dt)
        e = e - step
    return x


def frexp(x: ArrayLike, /) -> tuple[Any, Any]:
    """Split ``x`` into a mantissa in ``[0.5, 1)`` (signed) and an ``int32`` exponent with
    ``x == mantissa * 2**exponent``; zeros, infinities and NaNs give ``(x, 0)``."""
    (x,) = promote_broadcast("frexp", x, to="inexact")
    check_kind("frexp", "real", x)
    dt = aval(x).dtype
    special_ = (x == 0) | ~_ufuncs.isfinite(x)
    ax = _ufuncs.where(special_, _creation.ones_like(x), _ufuncs.abs(x))
    e = _ufuncs.floor(_ufuncs.log2(ax)).astype(np.int32) + 1
    m = ldexp(ax, -e)
    # log2 may round across a power of two: fix the off-by-one either way
    big, small = m >= 1, m < 0.5
    e = e + big.astype(np.int32) - small.astype(np.int32)
    m = _ufuncs.where(big, m * np.asarray(0.5, dt), _ufuncs.where(small, m * np.asarray(2, dt), m))
    m = _ufuncs.where(special_, x, _ufuncs.copysign(m, x))
    return m, _ufuncs.where(special_, _creation.zeros_like(e), e)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Any, Any]:
    """Fractional and integral parts of ``x``, both with ``x``'s sign."""
    if out is not None:
        raise NotImplementedError(
            "modf: the 'out' argument is not supported (arrays are immutable)"
        )
    (x,) = promote_broadcast("modf", x, to="inexact")
    whole = _ufuncs.trunc(x)
    return x - whole, whole
