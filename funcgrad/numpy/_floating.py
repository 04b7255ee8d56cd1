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
    """Distance from ``x`` to the next float away from zero, with ``x``'s sign bit (as
    ``jnp.spacing``: ``-0.0`` gives the negative smallest subnormal); infinities give NaN.

    Built from the bit pattern, not as a difference of neighbours: XLA's CPU code flushes
    subnormal results of arithmetic to zero, which made the spacing of every subnormal
    (and of zero) 0. ``float16`` follows NumPy's (and JAX's) own rule for it: the step
    towards ``+inf``, whatever the sign, computed in ``float32`` where its subnormals are
    normal numbers.
    """
    (x,) = promote_broadcast("spacing", x, to="inexact")
    check_kind("spacing", "real", x)
    dt = aval(x).dtype
    if dt == np.float16:
        up = _ufuncs.DECLARED["nextafter"](x, np.asarray(np.inf, dt))
        return (up.astype(np.float32) - x.astype(np.float32)).astype(dt)
    fi = np.finfo(dt)
    ut = np.dtype(f"uint{np.dtype(dt).itemsize * 8}")
    shl, shr = _ufuncs.DECLARED["left_shift"], _ufuncs.DECLARED["right_shift"]
    bits = lax.bitcast_convert_type(x, ut)
    sign_bit = np.asarray(1, ut) << np.asarray(np.dtype(dt).itemsize * 8 - 1, ut)
    sign = bits & sign_bit
    magnitude = bits & ~sign_bit
    nmant = np.asarray(fi.nmant, ut)
    biased = shr(magnitude, nmant)  # the biased exponent: 0 for zero and subnormals
    one = np.asarray(1, ut)
    # a normal spacing 2**(e - nmant) when that is normal, else one subnormal step
    normal = shl(biased - nmant, nmant)
    sub = shl(one, _ufuncs.maximum(biased, one) - one)
    step = lax.bitcast_convert_type(_ufuncs.where(biased > nmant, normal, sub) | sign, dt)
    at_max = magnitude == lax.bitcast_convert_type(np.asarray(fi.max, dt), ut)
    inf = _ufuncs.where(sign > 0, -np.inf, np.inf).astype(dt)
    step = _ufuncs.where(at_max, inf, step)
    return _ufuncs.where(_ufuncs.isfinite(x), step, np.asarray(np.nan, dt))


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
