"""``funcgrad.dtypes``: the names of ``jax.dtypes`` (dtype canonicalisation and queries).

    >>> import ml_dtypes
import numpy as np
    >>> from funcgrad import dtypes
    >>> dtypes.canonicalize_dtype(np.float64)  # float32 unless jax_enable_x64
    dtype('float32')
    >>> dtypes.issubdtype(dtypes.bfloat16, np.floating)
    True

``prng_key`` and ``extended`` (JAX's typed keys and extended dtypes) are not here:
funcgrad's keys are plain ``uint32`` arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as _fnp
from funcgrad.core import dtypes as _core
from funcgrad.toplevel import float0

__all__ = [
    "TypePromotionError",
    "bfloat16",
    "canonicalize_dtype",
    "finfo",
    "float0",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "result_type",
    "scalar_type_of",
]

bfloat16 = _core.bfloat16.type
finfo = _fnp.finfo
iinfo = _fnp.iinfo
issubdtype = _fnp.issubdtype
result_type = _fnp.result_type


class TypePromotionError(ValueError):
    """Raised where strict dtype promotion refuses to combine two dtypes."""


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype arrays of ``dtype`` get: 64-bit types become 32-bit without x64."""
    return _core.canonicalize(np.dtype(dtype))


def itemsize_bits(dtype: Any) -> int:
    """The number of bits of one element of ``dtype``: the format's width for the
    sub-byte types (``int4``: 4, ``float6_e2m3fn``: 6; NumPy's itemsize says 8), 8 for
    ``bool``; ``None`` is refused, as in JAX (NumPy would read it as ``float64``)."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    return _core.bit_width(np.dtype(dtype))


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (``bool``, ``int``, ``float``, ``complex``) of ``x``'s dtype."""
    dt = np.dtype(x.dtype if hasattr(x, "dtype") else np.result_type(x))
    if dt == np.dtype(bool):
        return bool
    if dt.kind in "iu":
        return int
    if dt.kind == "c":
        return complex
    if dt.kind == "f" or dt == _core.bfloat16:
        return float
    raise TypeError(f"Invalid scalar value {x}")
