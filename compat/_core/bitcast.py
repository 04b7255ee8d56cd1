"""The bytes of an array read as another dtype: the value of ``Tensor.view(dtype)``
(:mod:`compat._core.views` makes it share memory with its input)."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import lax as flax
from funcgrad import numpy as fnp


def bitcast_f(x: Any, *, dtype: np.dtype) -> Any:
    """``x``'s bytes read as ``dtype`` (``view(dtype)``): a wider source element becomes
    several along the last dim, several narrower ones one (bool goes as ``uint8``)."""
    if x.dtype == np.bool_:
        x = fnp.asarray(x, np.uint8)
    to_bool = dtype == np.bool_
    if to_bool:
        dtype = np.dtype(np.uint8)
    a, b = x.dtype.itemsize, dtype.itemsize
    if a == b:
        y = flax.bitcast_convert_type(x, dtype)
    elif a > b:  # each element becomes a // b narrower ones along the last dim
        y = flax.bitcast_convert_type(x, dtype)
        y = fnp.reshape(y, (*x.shape[:-1], x.shape[-1] * (a // b)))
    else:
        y = fnp.reshape(x, (*x.shape[:-1], x.shape[-1] // (b // a), b // a))
        y = flax.bitcast_convert_type(y, dtype)
    return y != 0 if to_bool else y
