"""``funcgrad.scipy.fft``: ``jax.scipy.fft``'s discrete cosine transforms.

Each transform is a composite of the ``fft`` primitive (through :mod:`funcgrad.numpy.fft`),
a static permutation and elementwise twiddles, so it differentiates, batches and jits like
any other funcgrad function. As in JAX, only DCT type 2 (and its inverse) is provided, with
``norm`` ``None``/``"backward"`` or ``"ortho"``.

    >>> from funcgrad.scipy.fft import dct, idct
    >>> [round(float(v), 6) for v in idct(dct([1.0, 2.0, 3.0]))]
    [1.0, 2.0, 3.0]
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax as _lax
from funcgrad.core import dtypes
from funcgrad.numpy._core import ArrayLike, as_array, aval, convert, normalize_axis
from funcgrad.primitives import elementwise as ew

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, type: int, norm: str | None) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _resize(x: Any, axis: int, n: int | None) -> Any:
    """Zero-pad or crop ``x`` along ``axis`` to ``n`` (``None``: unchanged)."""
    if n is None:
        return x
    n = operator.index(n)
    have = aval(x).shape[axis]
    if n < have:
        return fnp.take(x, np.arange(n), axis=axis)
    if n > have:
        widths = [(0, n - have if d == axis else 0) for d in range(aval(x).ndim)]
        return fnp.pad(x, widths)
    return x


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D host vector shaped to broadcast along ``axis`` of an ``ndim``-array."""
    return v.reshape([-1 if d == axis else 1 for d in range(ndim)])


def _ortho_factor(n: int, dtype: np.dtype) -> np.ndarray:
    """Per-frequency scale from the "backward" DCT-II to the orthonormal one."""
    f = np.full(n, 1.0 / np.sqrt(2.0 * n))
    f[0] = 1.0 / np.sqrt(4.0 * n)
    return f.astype(dtype)


def _even_odd_perm(n: int) -> np.ndarray:
    """Even samples in order, then odd samples reversed (Makhoul's reordering)."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _real_inexact(x: Any) -> Any:
    dt = aval(x).dtype
    if dtypes.kind(dt) != 2:
        x = convert(x, dtypes.default_dtype(2))
    return x


def _split_complex(fn: Any, x: Any, *args: Any) -> Any | None:
    """For complex ``x``: ``fn`` on the real and imaginary parts, recombined."""
    if dtypes.kind(aval(x).dtype) == 3:
        return _lax.complex(fn(fnp.real(x), *args), fn(fnp.imag(x), *args))
    return None


def _dct1(x: Any, n: int | None, axis: int, norm: str | None) -> Any:
    """DCT-II along one axis: one FFT of the reordered signal, rotated by a quarter-sample."""
    split = _split_complex(_dct1, x, n, axis, norm)
    if split is not None:
        return split
    x = _real_inexact(x)
    ndim = aval(x).ndim
    axis = normalize_axis(axis, ndim, "dct")
    x = _resize(x, axis, n)
    size = aval(x).shape[axis]
    dt = aval(x).dtype
    v = fnp.take(x, _even_odd_perm(size), axis=axis)
    spec = fnp.fft.fft(v, axis=axis)
    k = np.arange(size)
    twiddle = np.exp(-0.5j * np.pi * k / size).astype(ew.complex_dtype(dt))
    y = 2.0 * fnp.real(spec * _along(twiddle, axis, ndim))
    if norm == "ortho":
        y = y * _along(_ortho_factor(size, dt), axis, ndim)
    return y


def _idct1(x: Any, n: int | None, axis: int, norm: str | None) -> Any:
    """Inverse of :func:`_dct1`: rebuild the reordered signal's spectrum from the real DCT
    coefficients (``V_k = (y_k - i y_{N-k}) / 2 / W_k``), inverse FFT, undo the reordering."""
    split = _split_complex(_idct1, x, n, axis, norm)
    if split is not None:
        return split
    x = _real_inexact(x)
    ndim = aval(x).ndim
    axis = normalize_axis(axis, ndim, "idct")
    x = _resize(x, axis, n)
    size = aval(x).shape[axis]
    dt = aval(x).dtype
    if norm == "ortho":
        x = x / _along(_ortho_factor(size, dt), axis, ndim)
    # y_{N-k} for k = 1..N-1, and 0 for k = 0
    mirrored = fnp.take(x, (-np.arange(size)) % size, axis=axis) * _along(
        (np.arange(size) > 0).astype(dt), axis, ndim
    )
    k = np.arange(size)
    untwiddle = (0.5 * np.exp(0.5j * np.pi * k / size)).astype(ew.complex_dtype(dt))
    spec = _lax.complex(x, -mirrored) * _along(untwiddle, axis, ndim)
    v = fnp.real(fnp.fft.ifft(spec, axis=axis))
    return fnp.take(v, np.argsort(_even_odd_perm(size)), axis=axis)


def dct(
    x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Any:
    """Discrete cosine transform (type 2) of ``x`` along ``axis``, as ``scipy.fft.dct``.

    Args:
        x: input array (complex input transforms real and imaginary parts separately).
        type: DCT type; only ``2``.
        n: transform length; ``x`` is zero-padded or truncated to it.
        axis: axis to transform.
        norm: ``None``/``"backward"`` (unscaled) or ``"ortho"`` (orthonormal).
    """
    _check("dct", type, norm)
    return _dct1(as_array(x, "dct"), n, axis, norm)


def idct(
    x: ArrayLike, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None
) -> Any:
    """Inverse of :func:`dct` (a scaled DCT type 3) along ``axis``, as ``scipy.fft.idct``.

    Args:
        x: DCT coefficients.
        type: DCT type whose inverse is taken; only ``2``.
        n: transform length; ``x`` is zero-padded or truncated to it first.
        axis: axis to transform.
        norm: ``None``/``"backward"`` or ``"ortho"``, matching the forward transform.
    """
    _check("idct", type, norm)
    return _idct1(as_array(x, "idct"), n, axis, norm)


def _nd_axes(x: Any, s: Sequence[int] | int | None, axes: Sequence[int] | None, name: str):
    ndim = aval(x).ndim
    if s is not None:
        try:
            s = [operator.index(v) for v in s]  # type: ignore[union-attr]
        except TypeError:
            s = [operator.index(s)]  # type: ignore[arg-type]
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    else:
        if isinstance(axes, int):
            axes = (axes,)
        axes = tuple(normalize_axis(a, ndim, name) for a in axes)
    sizes: list[int | None] = list(s) if s is not None else [None] * len(axes)
    return list(zip(axes, sizes))


def dctn(
    x: ArrayLike,
    type: int = 2,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """Multidimensional DCT (type 2): :func:`dct` along each of ``axes`` (default: the last
    ``len(s)`` axes, or all), each padded/truncated to the matching entry of ``s``."""
    _check("dctn", type, norm)
    x = as_array(x, "dctn")
    for axis, n in _nd_axes(x, s, axes, "dctn"):
        x = _dct1(x, n, axis, norm)
    return x


def idctn(
    x: ArrayLike,
    type: int = 2,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """Multidimensional inverse DCT: :func:`idct` along each of ``axes`` (as :func:`dctn`)."""
    _check("idctn", type, norm)
    x = as_array(x, "idctn")
    for axis, n in _nd_axes(x, s, axes, "idctn"):
        x = _idct1(x, n, axis, norm)
    return x
