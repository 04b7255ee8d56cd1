"""SciPy's special-matrix constructors for ``funcgrad.scipy.linalg`` (``toeplitz``,
``hankel``, ``circulant``, ``companion``, ``hilbert``, ``pascal``, ``dft``, ...).

Matrices built from array arguments are gathers with fixed index tables, so they are
differentiable and leading axes are batch axes; constant matrices are computed exactly
on the host in JAX's dtypes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.core.dtypes import canonicalize
from funcgrad.numpy._core import ArrayLike, as_array, aval, fmt, here, promote, user_dtype


def _inexact(name: str, *xs: Any) -> list[Any]:
    """The operands promoted to one inexact dtype, as arrays (``scipy.linalg`` uses it
    too)."""
    return [as_array(x, name) for x in promote(name, *xs, to="inexact")]


def _vec_args(name: str, *xs: Any) -> list[Any]:
    """Arrays of at least one dimension with one dtype and one batch shape."""

    xs = [fnp.atleast_1d(as_array(x, name)) for x in promote(name, *xs)]
    batch = np.broadcast_shapes(*(aval(x).shape[:-1] for x in xs))
    return [fnp.broadcast_to(x, batch + aval(x).shape[-1:]) for x in xs]


def _gather_last(v: Any, idx: np.ndarray) -> Any:
    """``v[..., idx]`` for an integer index array ``idx`` of any shape."""
    return fnp.take(v, idx, axis=-1)


def toeplitz(c: ArrayLike, r: ArrayLike | None = None) -> Any:
    """Toeplitz matrix with first column ``c`` and first row ``r`` (``conj(c)`` by
    default); ``r[0]`` is ignored. Leading axes are batch axes."""
    if r is None:
        (c,) = _vec_args("toeplitz", c)
        r = fnp.conj(c)
    c, r = _vec_args("toeplitz", c, r)
    m, n = aval(c).shape[-1], aval(r).shape[-1]
    elems = fnp.concatenate([fnp.flip(c, axis=-1), r[..., 1:]], axis=-1)
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    if m == 0 or n == 0:
        return fnp.zeros(aval(c).shape[:-1] + (m, n), dtype=aval(c).dtype)
    return _gather_last(elems, idx)


def hankel(c: ArrayLike, r: ArrayLike | None = None) -> Any:
    """Hankel matrix with first column ``c`` and last row ``r`` (zeros by default);
    ``r[0]`` is ignored. Leading axes are batch axes."""
    for name, x in (("c", c), ("r", r)):
        if x is not None and np.ndim(x) == 0 and aval(fnp.asarray(x)).ndim == 0:
            raise ValueError(f"hankel: {name} must be at least 1-dimensional, got a scalar{here()}")
    if r is None:
        (c,) = _vec_args("hankel", c)
        r = fnp.zeros_like(c)
    c, r = _vec_args("hankel", c, r)
    m, n = aval(c).shape[-1], aval(r).shape[-1]
    if m == 0 or n == 0:
        return fnp.zeros(aval(c).shape[:-1] + (m, n), dtype=aval(c).dtype)
    elems = fnp.concatenate([c, r[..., 1:]], axis=-1)
    return _gather_last(elems, np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c: ArrayLike) -> Any:
    """Circulant matrix whose first column is ``c`` (leading axes are batch axes)."""
    (c,) = _vec_args("circulant", c)
    n = aval(c).shape[-1]
    return _gather_last(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def leslie(f: ArrayLike, s: ArrayLike) -> Any:
    """Leslie matrix: fecundity ``f`` (length ``n``) in the first row, survival ``s``
    (length ``n - 1``) on the subdiagonal."""
    f, s = _vec_args("leslie", f, s)
    n = aval(f).shape[-1]
    if n < 2:
        raise ValueError(
            f"leslie: the length of f along the last axis must be at least 2, got {fmt(f)}{here()}"
        )
    if aval(s).shape[-1] != n - 1:
        raise ValueError(
            f"leslie: Incorrect lengths for f and s: s must be one shorter than f, got "
            f"{fmt(f)} and {fmt(s)}{here()}"
        )
    rows = np.arange(n)[:, None]
    s_row = fnp.concatenate([s, fnp.zeros_like(s[..., :1])], axis=-1)[..., None, :]
    sub = fnp.where(np.eye(n, k=-1, dtype=bool), s_row, 0)
    return fnp.where(rows == 0, f[..., None, :], sub).astype(aval(f).dtype)


def companion(a: ArrayLike) -> Any:
    """Companion matrix of the polynomial with coefficients ``a`` (highest first)."""
    (a,) = _inexact("companion", a)
    a = fnp.atleast_1d(a)
    if aval(a).shape[-1] < 2:
        raise ValueError(
            f"companion: the length of `a` along the last axis must be at least 2, got {fmt(a)}{here()}"
        )
    m = aval(a).shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    rows = np.arange(m)[:, None]
    eye = np.eye(m, k=-1, dtype=aval(a).dtype)
    return fnp.where(rows == 0, first[..., None, :], eye)


def fiedler(a: ArrayLike) -> Any:
    """Fiedler matrix ``abs(a[i] - a[j])``."""
    (a,) = promote("fiedler", a)
    a = fnp.atleast_1d(a)
    return fnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a: ArrayLike) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest
    coefficient first): same eigenvalues as ``companion(a)``."""
    (a,) = _inexact("fiedler_companion", a)
    a = fnp.atleast_1d(a)
    if aval(a).shape[-1] == 0:
        raise ValueError(
            f"fiedler_companion: a must have a nonzero length along its last axis, got {fmt(a)}{here()}"
        )
    n = aval(a).shape[-1] - 1
    dt = aval(a).dtype
    if n == 0:
        return fnp.zeros(aval(a).shape[:-1] + (0, 0), dtype=dt)
    a = a / a[..., :1]
    if n == 1:
        return -a[..., 1:, None]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    # (mask, index of -a, or -1 for a one) for each nonzero pattern of the matrix
    parts = [
        ((i == 0) & (j == 0), np.ones_like(i)),
        ((i == 1) & (j == 0), None),
        ((j == i + 1) & even, np.minimum(i + 2, n)),
        ((j == i + 2) & even, None),
        ((j == i - 1) & even & (i >= 2), np.minimum(i + 1, n)),
        ((j == i - 2) & odd & (i >= 3), None),
    ]
    out = fnp.zeros(aval(a).shape[:-1] + (n, n), dtype=dt)
    for mask, k in parts:
        val = 1.0 if k is None else -_gather_last(a, np.broadcast_to(k, (n, n)))
        out = fnp.where(mask, val, out)
    return out.astype(dt)


def convolution_matrix(a: ArrayLike, n: int, mode: str = "full") -> Any:
    """Matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for vectors ``v`` of length
    ``n`` (leading axes of ``a`` are batch axes)."""
    n = operator_index(n, "convolution_matrix")
    if n <= 0:
        raise ValueError(f"convolution_matrix: n must be a positive integer, got {n}{here()}")
    if mode not in ("full", "valid", "same"):
        raise ValueError(
            f"convolution_matrix: mode must be one of 'full', 'valid' or 'same', got {mode!r}{here()}"
        )
    (a,) = promote("convolution_matrix", a)
    if aval(a).ndim == 0:
        raise ValueError(f"convolution_matrix: a must be at least 1-dimensional{here()}")
    m = aval(a).shape[-1]
    if m < 1:
        raise ValueError(f"convolution_matrix: len(a) must be at least 1, got {fmt(a)}{here()}")
    pads = [(0, 0)] * (aval(a).ndim - 1) + [(0, n - 1)]
    az, raz = fnp.pad(a, pads), fnp.pad(fnp.flip(a, axis=-1), pads)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[..., tb : length - te], raz[..., length - n - tb : length - tb])


def operator_index(n: Any, name: str) -> int:
    import operator

    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: n must be an integer, got {n!r}{here()}") from None


def _default_float() -> np.dtype:

    return canonicalize(np.float64)


def _const(x: np.ndarray, dtype: Any) -> Any:
    return fnp.asarray(np.asarray(x).astype(dtype))


def _binom_table(n: int) -> np.ndarray:
    """Exact binomial coefficients ``C(i, j)`` for ``0 <= i, j < n`` as float64."""
    from math import comb

    return np.array([[comb(i, j) for j in range(n)] for i in range(n)], dtype=np.float64)


def hilbert(n: int) -> Any:
    """Hilbert matrix ``1 / (i + j + 1)``."""
    n = operator_index(n, "hilbert")
    a = np.arange(n, dtype=np.float64)
    return _const(1.0 / (a[:, None] + a[None, :] + 1), _default_float())


def invhilbert(n: int) -> Any:
    """Inverse of the ``n x n`` Hilbert matrix (exact integers, rounded to floats)."""
    from math import comb

    n = operator_index(n, "invhilbert")
    out = np.array(
        [
            [
                (-1) ** (i + j)
                * (i + j + 1)
                * comb(n + i, n - j - 1)
                * comb(n + j, n - i - 1)
                * comb(i + j, i) ** 2
                for j in range(n)
            ]
            for i in range(n)
        ],
        dtype=np.float64,
    ).reshape(n, n)
    return _const(out, _default_float())


def _kind(name: str, kind: str | None) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(
            f"{name}: Expected kind to be one of 'symmetric', 'lower' or 'upper', got {kind!r}{here()}"
        )
    return kind


def pascal(n: int, kind: str | None = None) -> Any:
    """Pascal matrix (``float32``, as in JAX): binomial coefficients, lower/upper
    triangular or their symmetric product."""
    kind = _kind("pascal", kind)
    low = _binom_table(operator_index(n, "pascal"))
    out = {"lower": low, "upper": low.T, "symmetric": low @ low.T}[kind]
    return _const(out, np.float32)


def invpascal(n: int, kind: str | None = None) -> Any:
    """Inverse of ``pascal(n, kind)``."""
    kind = _kind("invpascal", kind)
    n = operator_index(n, "invpascal")
    i = np.arange(n)
    low = _binom_table(n) * (-1.0) ** (i[:, None] - i[None, :])
    out = {"lower": low, "upper": low.T, "symmetric": low.T @ low}[kind]
    return _const(out, _default_float())


def helmert(n: int, full: bool = False) -> Any:
    """Helmert matrix: ``n - 1`` orthonormal contrasts (with the row ``1/sqrt(n)`` first
    when ``full``)."""
    n = operator_index(n, "helmert")
    if n < 1:
        raise ValueError(f"helmert: n must be a positive integer, got {n}{here()}")
    i, j = np.arange(n - 1)[:, None], np.arange(n)[None, :]
    k = (i + 1).astype(np.float64)
    denom = np.sqrt(k * (k + 1))
    out = np.where(j <= i, 1.0 / denom, np.where(j == i + 1, -k / denom, 0.0))
    if full:
        out = np.concatenate([np.full((1, n), 1.0 / np.sqrt(n)), out], axis=0)
    return _const(out, _default_float())


def hadamard(n: int, dtype: Any = int) -> Any:
    """Sylvester's Hadamard matrix of order ``n`` (a power of two)."""

    n = operator_index(n, "hadamard")
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: n must be a positive power of 2, got {n}{here()}")
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return _const(h, user_dtype(dtype, "hadamard"))


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """Discrete Fourier transform matrix ``exp(-2j pi i k / n)``, scaled by
    ``1/sqrt(n)`` (``'sqrtn'``) or ``1/n`` (``'n'``); complex ``dtype`` only."""

    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}{here()}")
    dt = canonicalize(np.complex128) if dtype is None else user_dtype(dtype, "dft")
    if not np.issubdtype(dt, np.complexfloating):
        raise ValueError(f"dft: dtype must be a complex floating-point type, got {dt}{here()}")
    n = operator_index(n, "dft")
    a = np.arange(n)
    out = np.exp(-2j * np.pi * ((a[:, None] * a[None, :]) % max(n, 1)) / max(n, 1))
    if scale == "sqrtn":
        out = out / np.sqrt(n)
    elif scale == "n":
        out = out / n
    return _const(out, dt)
