"""Floating-point to integer conversion as PyTorch's CPU kernels do it (x86).

funcgrad's conversion follows XLA's (NaN becomes 0, out-of-range values saturate), on
purpose; PyTorch's CPU kernels convert with a C cast that compiles to x86's truncating
conversion, whose "indefinite" result for NaN and out-of-range values is the lowest value
of the 32- or 64-bit integer converted to. A target narrower than 32 bits goes through
int32 and keeps the low bits (so ``300.7`` becomes ``44`` as int8, NaN becomes ``0``),
except float64 to uint8, which goes through int64 (``2.0**32 + 5`` becomes ``5``);
float16 and bfloat16 are widened to float32 first (exactly); a complex value converts its
real part. Measured against PyTorch 2.13's CPU build (tests/compat/test_compat_float_to_int.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from funcgrad import numpy as fnp

__all__ = ["to_integer", "wants_torch_cast"]

_I64 = np.dtype(np.int64)
_I32 = np.dtype(np.int32)
_U8 = np.dtype(np.uint8)
_F64 = np.dtype(np.float64)
_WIDE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def wants_torch_cast(src: Any, dt: np.dtype) -> bool:
    """Whether converting a value of dtype ``src`` to ``dt`` is a float-to-integer one."""
    return dt.kind in "iu" and src is not None and _dt.kind(np.dtype(src)) in "fc"


def to_integer(x: Any, dt: np.dtype, xp: Any = fnp) -> Any:
    """``x`` (a floating or complex array) converted to the integer dtype ``dt`` as
    PyTorch's CPU kernels convert it; ``xp``: the array namespace (``numpy`` for a host
    array, as ``torch.tensor(t, dtype=)`` converts)."""
    if _dt.kind(x.dtype) == "c":
        x = xp.real(x)
    if x.dtype not in _WIDE_FLOATS:
        x = xp.asarray(x, np.float32)
    wide = _I64 if dt.itemsize == 8 or (dt == _U8 and x.dtype == _F64) else _I32
    half = 2.0 ** (8 * wide.itemsize - 1)
    fits = (x >= -half) & (x < half)  # (false for NaN)
    # values that do not fit are not converted at all (no backend's out-of-range cast)
    i = xp.where(fits, xp.asarray(xp.where(fits, x, 0), wide), np.iinfo(wide).min)
    return i if dt == wide else xp.asarray(i, dt)
