"""``funcgrad.numpy.fft``: NumPy's discrete Fourier transforms, as ``jax.numpy.fft``.

Every transform is one ``fft`` primitive (:mod:`funcgrad.primitives.fft`) over the trailing
axes, so it is differentiable, batchable and jittable; ``n``/``s`` crop or zero-pad the input
first, ``norm`` scales the result (``"backward"``: the inverse divides by ``N``; ``"ortho"``:
both by ``sqrt(N)``; ``"forward"``: the forward transform divides by ``N``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.rfft(fnp.ones(4)).tolist()
    [(4+0j), 0j, 0j]
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    check_arraylike,
    convert,
    here,
    normalize_axis,
    out,
    user_dtype,
)
from funcgrad.numpy._shape import roll
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import fft as _fftp
from funcgrad.primitives import shape as sh

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = (None, "backward", "ortho", "forward")


def _check_norm(norm: str | None) -> None:
    if norm not in _NORMS:
        raise ValueError(
            f'Invalid norm value {norm}; should be "backward","ortho" or "forward".{here()}'
        )


def _resize(x: Any, axis: int, n: int) -> Any:
    """Crop or zero-pad ``x`` along ``axis`` to length ``n``."""
    shape = aval(x).shape
    have = shape[axis]
    if n < have:
        return sh.slice(
            x, (0,) * len(shape), tuple(n if d == axis else k for d, k in enumerate(shape))
        )
    if n > have:
        config = [(0, n - have, 0) if d == axis else (0, 0, 0) for d in range(len(shape))]
        return sh.pad(x, np.zeros((), aval(x).dtype), config)
    return x


def _prepare(name: str, a: ArrayLike, kind: str) -> Any:
    """``a`` as a complex (``fft``/``ifft``/``irfft``) or real floating (``rfft``) array."""
    x = as_array(a, name)
    dt = aval(x).dtype
    k = dtypes.kind(dt)
    if kind == "rfft":
        if k == 3:
            raise ValueError(f"only real valued inputs supported for rfft{here()}")
        target = dt if k == 2 else dtypes.default_dtype(2)
    else:
        base = dt if k >= 2 else dtypes.default_dtype(2)
        target = ew.complex_dtype(base)
    return convert(x, target)


def _fft_core(
    name: str, fft_type: str, a: ArrayLike, s: Sequence[int] | None, axes: Any, norm: str | None
) -> Any:
    _check_norm(norm)
    x = _prepare(name, a, fft_type)
    nd = aval(x).ndim
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    if len(set(axes)) != len(axes):  # the user's spelling in the message, as jax.numpy
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes {axes}.")
    axes = tuple(normalize_axis(ax, nd, name) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes {axes}.")
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if len(s) != len(axes):
            raise ValueError(f"{name}: shape s={s} and axes={axes} must have the same length")
        if any(n < 1 for n in s):
            raise ValueError("Shape should be positive.")
    if not axes:
        return out(x)
    # crop/pad to the requested lengths (irfft: the last axis holds n // 2 + 1 values)
    if s is None:
        lengths = [aval(x).shape[ax] for ax in axes]
        if fft_type == "irfft":
            lengths[-1] = 2 * (lengths[-1] - 1)
    else:
        lengths = list(s)
    for ax, n in zip(axes, lengths):
        want = n // 2 + 1 if (fft_type == "irfft" and ax == axes[-1]) else n
        x = _resize(x, ax, want)
    if any(n < 1 for n in lengths):
        if s is None and fft_type != "rfft":
            # an empty axis transforms to an empty axis (irfft: a length-1 axis too)
            return out(_empty_result(x, fft_type, nd, axes, lengths))
        raise ValueError(f"{name}: invalid number of data points {lengths} specified{here()}")
    # the transformed axes go last, in ``axes`` order
    rest = [d for d in range(nd) if d not in axes]
    perm = (*rest, *axes)
    x = sh.transpose(x, perm) if perm != tuple(range(nd)) else x
    x = _transform(x, fft_type, tuple(lengths))
    inv = tuple(int(i) for i in np.argsort(perm))
    x = sh.transpose(x, inv) if inv != tuple(range(nd)) else x
    total = float(np.prod(lengths, dtype=np.float64))
    inverse = fft_type in ("ifft", "irfft")
    scale = None
    if norm == "ortho":
        scale = np.sqrt(total) if inverse else 1 / np.sqrt(total)
    elif norm == "forward":
        scale = total if inverse else 1 / total
    if scale is not None:
        x = ew.mul(x, np.asarray(scale, aval(x).dtype))
    return out(x)


def _empty_result(x: Any, fft_type: str, nd: int, axes: tuple, lengths: list) -> Any:
    """The (empty) transform of ``x`` when some transformed length is 0: zeros of the
    result's shape and dtype (``x`` is already cropped/padded to ``lengths``)."""
    shape = list(aval(x).shape)
    dt = aval(x).dtype
    if fft_type == "irfft":
        shape[axes[-1]] = max(lengths[-1], 0)
        dt = ew.real_dtype(dt)
    return sh.full(tuple(shape), 0, dt)


def _transform(x: Any, fft_type: str, lengths: tuple[int, ...]) -> Any:
    """The ``fft`` primitive over the trailing axes, in chunks of at most 3 axes."""
    if len(lengths) <= 3:
        return _fftp.fft(x, fft_type, lengths)
    k = len(lengths) - 3
    nl = len(lengths)
    if fft_type == "irfft":  # complex transforms of the leading axes first, then irfft
        x = _rotate(_transform(_rotate(x, nl, k), "ifft", lengths[:k]), nl, k, back=True)
        return _fftp.fft(x, "irfft", lengths[k:])
    x = _fftp.fft(x, fft_type, lengths[k:])
    head = "fft" if fft_type == "rfft" else fft_type
    return _rotate(_transform(_rotate(x, nl, k), head, lengths[:k]), nl, k, back=True)


def _rotate(x: Any, nl: int, k: int, back: bool = False) -> Any:
    """Move the first ``k`` of the trailing ``nl`` axes to the end (``back``: undo that)."""
    nd = aval(x).ndim
    perm = (*range(nd - nl), *range(nd - nl + k, nd), *range(nd - nl, nd - nl + k))
    if back:
        perm = tuple(int(i) for i in np.argsort(perm))
    return sh.transpose(x, perm)


def _one(name: str, fft_type: str, a: ArrayLike, n: int | None, axis: int, norm: str | None) -> Any:
    if isinstance(axis, (list, tuple)):
        raise ValueError(
            f"jax.numpy.fft.{name} does not support multiple axes. Please use "
            f"jax.numpy.fft.{name}n. Got axis = {axis!r}."
        )
    return _fft_core(name, fft_type, a, None if n is None else (n,), (axis,), norm)


def fft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """One-dimensional discrete Fourier transform along ``axis`` (``n`` crops or pads)."""
    check_arraylike("jax.numpy.fft.fft", a)
    return _one("fft", "fft", a, n, axis, norm)


def ifft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """One-dimensional inverse discrete Fourier transform along ``axis``."""
    check_arraylike("jax.numpy.fft.ifft", a)
    return _one("ifft", "ifft", a, n, axis, norm)


def rfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Discrete Fourier transform of a real array: the ``n // 2 + 1`` non-negative
    frequencies."""
    check_arraylike("jax.numpy.fft.rfft", a)
    return _one("rfft", "rfft", a, n, axis, norm)


def irfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``)."""
    check_arraylike("jax.numpy.fft.irfft", a)
    return _one("irfft", "irfft", a, n, axis, norm)


def fftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """N-dimensional discrete Fourier transform over ``axes`` (all axes by default)."""
    check_arraylike("jax.numpy.fft.fftn", a)
    return _fft_core("fftn", "fft", a, s, axes, norm)


def ifftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """N-dimensional inverse discrete Fourier transform."""
    check_arraylike("jax.numpy.fft.ifftn", a)
    return _fft_core("ifftn", "ifft", a, s, axes, norm)


def rfftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """N-dimensional transform of a real array (the last axis halved)."""
    check_arraylike("jax.numpy.fft.rfftn", a)
    return _fft_core("rfftn", "rfft", a, s, axes, norm)


def irfftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """Inverse of :func:`rfftn`."""
    check_arraylike("jax.numpy.fft.irfftn", a)
    return _fft_core("irfftn", "irfft", a, s, axes, norm)


def fft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Any:
    """Two-dimensional discrete Fourier transform."""
    check_arraylike("jax.numpy.fft.fft2", a)
    return _fft_core("fft2", "fft", a, s, _two_axes("fft2", axes), norm)


def ifft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Any:
    """Two-dimensional inverse discrete Fourier transform."""
    check_arraylike("jax.numpy.fft.ifft2", a)
    return _fft_core("ifft2", "ifft", a, s, _two_axes("ifft2", axes), norm)


def rfft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Any:
    """Two-dimensional transform of a real array."""
    check_arraylike("jax.numpy.fft.rfft2", a)
    return _fft_core("rfft2", "rfft", a, s, _two_axes("rfft2", axes), norm)


def irfft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Any:
    """Inverse of :func:`rfft2`."""
    check_arraylike("jax.numpy.fft.irfft2", a)
    return _fft_core("irfft2", "irfft", a, s, _two_axes("irfft2", axes), norm)


def _two_axes(name: str, axes: Sequence[int]) -> Sequence[int]:
    """``axes`` of a two-dimensional transform: exactly two."""
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return axes


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Transform of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    check_arraylike("conjugate", a)
    _check_norm(norm)
    x = _prepare("hfft", a, "fft")
    return _one("hfft", "irfft", ew.conj(x), n, axis, _SWAP[norm])


def ihfft(a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Inverse of :func:`hfft`: the half spectrum of a real signal, conjugated."""
    _check_norm(norm)
    a = as_array(a, "ihfft", sequences=True)  # as in jax.numpy, a list is taken here
    return out(ew.conj(_one("ihfft", "rfft", a, n, axis, _SWAP[norm])))


def _freq_args(name: str, n: Any, d: Any) -> int:
    """``n`` as an int; a list for ``n`` or ``d`` is refused as ``jax.numpy.fft`` does."""
    if isinstance(n, (list, tuple)):
        raise ValueError(
            f"The n argument of jax.numpy.fft.{name} only takes an int. Got n = {list(n)}."
        )
    if isinstance(d, (list, tuple)):
        raise ValueError(
            f"The d argument of jax.numpy.fft.{name} only takes a single value. Got d = {list(d)}."
        )
    return operator.index(n)


def _freq_dtype(name: str, d: Any, dtype: Any) -> Any:
    if dtype is not None:
        return user_dtype(dtype, name)
    return dtypes.default_dtype(2)


def fftfreq(n: int, d: ArrayLike = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """Sample frequencies ``[0, 1, ..., -1] / (d * n)`` of an ``n``-point transform."""
    n = _freq_args("fftfreq", n, d)
    dt = _freq_dtype("fftfreq", d, dtype)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _scale_freq(k, n, d, dt)


def rfftfreq(n: int, d: ArrayLike = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """Sample frequencies ``[0, 1, ..., n // 2] / (d * n)`` of an ``n``-point :func:`rfft`."""
    n = _freq_args("rfftfreq", n, d)
    dt = _freq_dtype("rfftfreq", d, dtype)
    return _scale_freq(np.arange(0, n // 2 + 1), n, d, dt)


def _scale_freq(k: np.ndarray, n: int, d: Any, dt: Any) -> Any:
    base = sh.full(k.shape, 0, dt) if k.size == 0 else convert(np.asarray(k, dt), dt)
    dd = convert(as_array(d, "fftfreq"), dt)
    return out(ew.div(base, ew.mul(dd, np.asarray(n, dt))))


def _shift(name: str, x: ArrayLike, axes: Any, sign: int) -> Any:

    x = as_array(x, name)
    nd = aval(x).ndim
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis(ax, nd, name) for ax in axes)
    shifts = tuple(sign * (aval(x).shape[ax] // 2) for ax in axes)
    return roll(x, shifts, axes) if axes else out(x)


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Any:
    """Move the zero frequency to the centre (``roll`` by ``n // 2`` along ``axes``)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Any:
    """Inverse of :func:`fftshift`."""
    return _shift("ifftshift", x, axes, -1)
