"""Window functions: ``bartlett``, ``blackman``, ``hamming`` and ``hanning`` (computed on
the host for a static length) and ``kaiser`` (traced in its shape parameter ``beta``)."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy import _creation
from funcgrad.numpy._core import ArrayLike, aval, out, promote_broadcast
from funcgrad.numpy._ufuncs import DECLARED


def _window(name: str, m: int, f: Callable[[np.ndarray], np.ndarray]) -> Any:
    m = operator.index(m)
    dt = dtypes.default_dtype(2)
    if m <= 1:
        return out(np.ones((builtins.max(m, 0),), dt))
    return out(np.asarray(f(np.arange(m)), dt))


def bartlett(M: int) -> Any:
    """Bartlett (triangular) window of length ``M``."""
    return _window("bartlett", M, lambda n: 1 - np.abs(2 * n / (M - 1) - 1))


def blackman(M: int) -> Any:
    """Blackman window of length ``M``."""
    return _window(
        "blackman",
        M,
        lambda n: (
            0.42 - 0.5 * np.cos(2 * np.pi * n / (M - 1)) + 0.08 * np.cos(4 * np.pi * n / (M - 1))
        ),
    )


def hamming(M: int) -> Any:
    """Hamming window of length ``M``."""
    return _window("hamming", M, lambda n: 0.54 - 0.46 * np.cos(2 * np.pi * n / (M - 1)))


def hanning(M: int) -> Any:
    """Hann window of length ``M``."""
    return _window("hanning", M, lambda n: 0.5 - 0.5 * np.cos(2 * np.pi * n / (M - 1)))


def kaiser(M: int, beta: ArrayLike) -> Any:
    """The Kaiser window of ``M`` points and shape parameter ``beta``."""
    M = operator.index(M)
    (beta,) = promote_broadcast("kaiser", beta, to="inexact")
    dt = aval(beta).dtype
    if M <= 1:
        return _creation.ones((max(M, 0),), dt)
    alpha = (M - 1) / 2.0
    n = np.arange(M, dtype=np.float64)
    r = np.sqrt(np.maximum(1.0 - ((n - alpha) / alpha) ** 2, 0.0)).astype(dt)
    i0 = DECLARED["i0"]
    return i0(beta * r) / i0(beta)
