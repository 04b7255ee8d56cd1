"""Primitives of the ``fft`` family: ``fft``, the discrete Fourier transforms of ``jax.lax.fft``.

``fft(x, fft_type, fft_lengths)`` transforms the trailing ``len(fft_lengths)`` axes of ``x``:

* ``"fft"``/``"ifft"``: complex to complex, the shape unchanged;
* ``"rfft"``: real to complex, the last axis ``n`` becomes ``n // 2 + 1``;
* ``"irfft"``: complex to real, the last axis ``n // 2 + 1`` becomes ``n = fft_lengths[-1]``.

Every transform is (R-)linear, so its JVP is the same transform of the tangent. Its VJP is
the transpose under funcgrad's pairing ``<a, b> = Re(sum(a * b))`` (no conjugation, JAX's
convention): the DFT matrix is symmetric, so ``fft``/``ifft`` are their own transposes. The
transpose of ``rfft`` zero-pads the half spectrum back to ``n`` and takes the real part of a
full ``fft``; the transpose of ``irfft`` is ``conj(rfft(ct) * w / N)`` where ``w`` counts how
often each kept frequency appears in the Hermitian spectrum (1 for the zero frequency and an
even length's Nyquist frequency, 2 for the others). Batching moves the batch axis to the
front, outside the transformed axes.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import rand

FAMILY = "fft"

FFT_TYPES = ("fft", "ifft", "rfft", "irfft")

fft_p = Primitive("fft", family=FAMILY)


def _type_name(fft_type: Any) -> str:
    """``"fft"``/``"ifft"``/``"rfft"``/``"irfft"`` from a string or ``jax.lax.FftType``."""
    name = getattr(fft_type, "name", fft_type)
    if not isinstance(name, str) or name.lower() not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    return name.lower()


@fft_p.def_abstract_eval
def _fft_abstract_eval(x: Aval, *, fft_type: str, fft_lengths: tuple[int, ...]) -> Aval:
    # the messages begin as jax.lax.fft's (ValueError throughout, as JAX's)
    k = len(fft_lengths)
    desc = f" (operand {x.str_short()}, fft_type={fft_type!r}, fft_lengths={fft_lengths})"
    if not 1 <= k <= 3:
        raise ValueError(f"fft: only 1 to 3 transformed axes are supported{desc}")
    if x.ndim < k:
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input dimensions as "
            f"fft_lengths {fft_lengths}.{desc}"
        )
    if any(n < 0 for n in fft_lengths):
        raise ValueError(f"fft: fft_lengths must be non-negative{desc}")
    kind = dtypes.kind(x.dtype)
    lead, tail = x.shape[: x.ndim - k], x.shape[x.ndim - k :]
    if fft_type in ("fft", "ifft", "irfft"):
        if kind != 3:
            what = "IRFFT" if fft_type == "irfft" else "FFT"
            raise ValueError(f"{what} input must be complex64 or complex128, got {x.dtype}{desc}")
    elif x.dtype not in (np.float32, np.float64):
        raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}{desc}")
    if fft_type == "irfft":
        if tail[:-1] != tuple(fft_lengths[:-1]):
            raise ValueError(
                f"IRFFT input shape {x.shape} minor dimensions must be equal to all except "
                f"the last fft_length, got fft_lengths={fft_lengths}{desc}"
            )
        if tail[-1] != fft_lengths[-1] // 2 + 1:
            raise ValueError(
                f"IRFFT input shape {x.shape}: the last dimension must be "
                f"fft_lengths[-1] // 2 + 1 = {fft_lengths[-1] // 2 + 1}{desc}"
            )
        return Aval((*lead, *fft_lengths), ew.real_dtype(x.dtype), x.weak_type)
    if tail != tuple(fft_lengths):
        what = "RFFT" if fft_type == "rfft" else "FFT"
        raise ValueError(
            f"{what} input shape {x.shape} minor dimensions must be equal to "
            f"fft_lengths {fft_lengths}{desc}"
        )
    if fft_type == "rfft":
        shape = (*lead, *fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        return Aval(shape, ew.complex_dtype(x.dtype), x.weak_type)
    return Aval(x.shape, x.dtype, x.weak_type)


def _fft_lower(x: Any, *, fft_type: str, fft_lengths: tuple[int, ...]) -> Any:
    return lax.fft(x, fft_type.upper(), fft_lengths)


fft_p.lower = _fft_lower


rules.def_linear(fft_p)


def _weights(m: int, n: int, dtype: np.dtype) -> np.ndarray:
    """How often each of the ``m = n // 2 + 1`` kept frequencies occurs in a length-``n``
    Hermitian spectrum."""
    w = np.full((m,), 2.0)
    w[0] = 1.0
    if n % 2 == 0 and m > 1:
        w[-1] = 1.0
    return w.astype(dtype)


@fft_p.def_vjp
def _fft_vjp(ct: Any, x: Any, *, out: Any, fft_type: str, fft_lengths: tuple) -> tuple:
    if is_zero(ct):
        return (None,)
    xa = to_aval(x)
    if fft_type in ("fft", "ifft"):
        return (fft(ct, fft_type, fft_lengths),)
    if fft_type == "rfft":
        n, m = fft_lengths[-1], to_aval(ct).shape[-1]
        nd = to_aval(ct).ndim
        config = [(0, 0, 0)] * (nd - 1) + [(0, n - m, 0)]
        full = sh.pad(ct, np.zeros((), to_aval(ct).dtype), config)
        g = ew.real(fft(full, "fft", fft_lengths))
        return (ew.convert_element_type(g, xa.dtype),)
    # irfft: ct is real, the operand complex
    spec = fft(ew.convert_element_type(ct, ew.real_dtype(xa.dtype)), "rfft", fft_lengths)
    total = int(np.prod(fft_lengths, dtype=np.int64))
    w = _weights(xa.shape[-1], fft_lengths[-1], ew.real_dtype(xa.dtype)) / max(total, 1)
    sa = to_aval(spec)
    w = sh.broadcast_in_dim(ew.convert_element_type(w, xa.dtype), sa.shape, (sa.ndim - 1,))
    scaled = ew.mul(spec, w)
    return (ew.conj(scaled),)


@fft_p.def_batch
def _fft_batch(args: list, dims: list, *, fft_type: str, fft_lengths: tuple) -> tuple:
    (x,), (d,) = args, dims
    return fft(rules.moveaxis(x, d, 0), fft_type, fft_lengths), 0


def _fft_host(x: Any, *, fft_type: str, fft_lengths: tuple[int, ...]) -> np.ndarray:
    """``fft`` on host arrays: NumPy's FFTs (pocketfft: single precision stays single, as
    in XLA) over the trailing ``len(fft_lengths)`` axes."""
    x = np.asarray(x)
    if x.dtype.kind == "V" or (x.dtype.kind == "f" and x.itemsize < 4):
        x = x.astype(np.float32)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if 0 in fft_lengths or x.size == 0:  # (an empty transform: zeros of the result's shape)
        return _fft_host_empty(x, fft_type, fft_lengths, axes)
    if fft_type == "fft":
        return np.fft.fftn(x, axes=axes)
    if fft_type == "ifft":
        return np.fft.ifftn(x, axes=axes)
    if fft_type == "rfft":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=fft_lengths, axes=axes)


def _fft_host_empty(x: np.ndarray, fft_type: str, fft_lengths: tuple, axes: tuple) -> np.ndarray:
    lead = x.shape[: x.ndim - len(axes)]
    if fft_type == "irfft":
        return np.zeros((*lead, *fft_lengths), np.finfo(x.dtype).dtype)
    if fft_type == "rfft":
        shape = (*lead, *fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        return np.zeros(shape, np.result_type(x.dtype, np.complex64))
    return np.zeros(x.shape, x.dtype)


fft_p.host = _fft_host


@fft_p.def_examples
def _fft_examples(rng: np.random.Generator) -> list[Example]:
    c = "complex128"
    return [
        Example([rand(rng, (5,), c)], {"fft_type": "fft", "fft_lengths": (5,)}),
        Example([rand(rng, (2, 4), c)], {"fft_type": "ifft", "fft_lengths": (4,)}),
        Example([rand(rng, (3, 4), c)], {"fft_type": "fft", "fft_lengths": (3, 4)}),
        Example([rand(rng, (2, 6))], {"fft_type": "rfft", "fft_lengths": (6,)}),
        Example([rand(rng, (3, 5))], {"fft_type": "rfft", "fft_lengths": (3, 5)}),
        Example([rand(rng, (2, 4), c)], {"fft_type": "irfft", "fft_lengths": (6,)}),
        Example([rand(rng, (3, 3), c)], {"fft_type": "irfft", "fft_lengths": (3, 5)}),
    ]


def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int]) -> Any:
    """Discrete Fourier transform of ``x``'s trailing axes, as ``jax.lax.fft``.

    Example:
        >>> fft(np.ones(4, np.complex64), "fft", (4,)).tolist()
        [(4+0j), 0j, 0j, 0j]
    """
    lengths = tuple(operator.index(n) for n in fft_lengths)
    return bind(fft_p, x, fft_type=_type_name(fft_type), fft_lengths=lengths)
