"""Bit-level reinterpretation of arrays: the ``view(dtype)`` and ``byteswap()`` methods.

Both are compositions of ``bitcast_convert_type`` with reshapes, so they trace: a
view to a narrower dtype splits each element into a new trailing axis that is folded
into the last one (NumPy's shape rule), a view to a wider one groups the last axis,
and ``byteswap`` views the bytes, reverses them and views them back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.numpy._core import aval, fmt, here, user_dtype
from funcgrad.primitives import bits
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh

_U8 = np.dtype("uint8")


def _bits(dt: np.dtype) -> int:
    """The bit width, bool counting as 8 (as NumPy's views do); 4 for int4/uint4."""
    if dt == np.bool_:
        return 8
    return int(getattr(dt, "itemsize", 1) * 8) if dt.name not in ("int4", "uint4") else 4


def _same_width(x: Any, dt: np.dtype) -> Any:
    """Bitcast between dtypes of one width, bool through uint8 (0/1 bytes)."""
    src = aval(x).dtype
    if src == dt:
        return x
    if src == np.bool_:
        x, src = ew.convert_element_type(x, _U8), _U8
    if dt == np.bool_:
        y = bits.bitcast_convert_type(x, _U8) if src != _U8 else x
        return ew.ne(y, np.asarray(0, _U8))
    return bits.bitcast_convert_type(x, dt)


def view(x: Any, dtype: Any = None, type: Any = None) -> Any:
    """``x`` with its bits read as ``dtype``: the last axis shrinks or grows by the ratio
    of the widths (``x.view(dtype)`` of ``jax.Array``)."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return x
    dt = user_dtype(dtype, "view")
    a = aval(x)
    if a.dtype.kind == "c" and dt != a.dtype:  # as its (real, imag) parts, interleaved
        pair = sh.concatenate(
            *[sh.expand_dims(p, (a.ndim,)) for p in (ew.real(x), ew.imag(x))], dimension=a.ndim
        )
        return view(sh.reshape(pair, (*a.shape[:-1], a.shape[-1] * 2)) if a.shape else pair, dt)
    if dt.kind == "c" and dt != a.dtype:
        part = np.dtype(f"float{dt.itemsize * 4}")
        f = view(x, part)
        *lead, last = aval(f).shape
        pair = sh.reshape(f, (*lead, last // 2, 2))
        re = sh.reshape(
            sh.slice(pair, (0,) * len(lead) + (0, 0), (*lead, last // 2, 1)), (*lead, last // 2)
        )
        im = sh.reshape(
            sh.slice(pair, (0,) * len(lead) + (0, 1), (*lead, last // 2, 2)), (*lead, last // 2)
        )
        return ew.make_complex(re, im)
    old, new = _bits(a.dtype), _bits(dt)
    if old == new:
        return _same_width(x, dt)
    if not a.shape:
        raise ValueError(
            f"view: a 0-d array cannot be viewed as a dtype of another width, got {fmt(x)} "
            f"viewed as {dt.name}{here()}"
        )
    *lead, last = a.shape
    if old > new:  # each element becomes old // new narrower ones
        k = old // new
        wide_int = np.dtype(f"uint{new}") if new >= 8 else dt
        y = _same_width(x, np.dtype(f"uint{old}")) if a.dtype == np.bool_ else x
        parts = bits.bitcast_convert_type(y, wide_int if dt == np.bool_ else dt)
        parts = sh.reshape(parts, (*lead, last * k))
        return ew.ne(parts, np.asarray(0, wide_int)) if dt == np.bool_ else parts
    k = new // old
    if last % k:
        raise ValueError(
            f"view: the last axis of {fmt(x)} ({last}) is not a multiple of {k}, the number "
            f"of {a.dtype.name} elements in one {dt.name}{here()}"
        )
    y = ew.convert_element_type(x, _U8) if a.dtype == np.bool_ else x
    y = sh.reshape(y, (*lead, last // k, k))
    return bits.bitcast_convert_type(y, dt)


def byteswap(x: Any, inplace: bool = False) -> Any:
    """``x`` with the bytes of each element reversed (``x.byteswap()``)."""
    if inplace:
        raise ValueError("Inplace byteswapping is not supported: funcgrad's arrays are immutable.")
    a = aval(x)
    if a.dtype == np.bool_ or a.dtype.itemsize == 1:
        return x
    b = bits.bitcast_convert_type(x, _U8)  # a new trailing axis of itemsize bytes
    b = sh.rev(b, (b.ndim - 1,))
    return bits.bitcast_convert_type(b, a.dtype)
