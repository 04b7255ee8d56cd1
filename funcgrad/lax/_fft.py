"""``jax.lax.fft`` and its ``FftType``: discrete Fourier transforms over trailing axes,
a thin wrapper over funcgrad's ``fft`` primitive (so ``grad``, ``vmap`` and ``jit``
apply)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from funcgrad.numpy._core import prep
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

    ``fft_type`` is a :class:`FftType` (or ``jax.lax.FftType``) or its name; the input
    must be complex except for ``RFFT`` (real), as in ``jax.lax.fft``.
    """
    return _fft.fft(prep(x, "fft"), fft_type, fft_lengths)
