"""``jax.lax.fft`` and its ``FftType``: discrete Fourier transforms over trailing axes,
a thin wrapper over funcgrad's ``fft`` primitive (so ``grad``, ``vmap`` and ``jit``
apply)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.interp import to_aval
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import fft as _fft

__all__ = ["FftType", "fft"]


class FftType(enum.IntEnum):
    """Which transform :func:`fft` computes (``jax.lax.FftType``)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """Discrete Fourier transform over ``x``'s trailing ``len(fft_lengths)`` axes.

    ``fft_type`` is a :class:`FftType` (or ``jax.lax.FftType``) or its name. As in
    ``jax.lax.fft``, a real operand of ``FFT``/``IFFT``/``IRFFT`` is taken as complex and an
    integer operand of ``RFFT`` as floating (a complex one is refused); no lengths: the
    converted operand.
    """
    x = prep(x, "fft")
    kind_name = _fft._type_name(fft_type)
    dt = to_aval(x).dtype
    k = dtypes.kind(dt)
    if kind_name == "rfft":
        if k == 3:
            raise ValueError(f"only real valued inputs supported for rfft{here()}")
        target = dt if k == 2 else _wide_float(dt)
    else:
        target = ew.complex_dtype(dt if k >= 2 else _wide_float(dt))
    if target != dt:
        x = ew.convert_element_type(x, target)
    if len(fft_lengths) == 0:
        return x
    return _fft.fft(x, fft_type, fft_lengths)


def _wide_float(dt: np.dtype) -> np.dtype:
    """The floating dtype an integer or boolean operand becomes (``jax.lax.fft``'s rule:
    ``float64`` for 64-bit integers when enabled, else ``float32``)."""
    wide = np.dtype(dt).itemsize == 8
    return dtypes.canonicalize("float64") if wide else np.dtype(np.float32)
