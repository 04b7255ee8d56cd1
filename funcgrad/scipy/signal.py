"""``funcgrad.scipy.signal``: ``jax.scipy.signal``'s convolutions, detrending and
windowed-FFT spectral estimates.

Everything here is a composite of existing funcgrad operations — direct convolutions are one
``conv_general_dilated``, FFT convolutions and spectra go through :mod:`funcgrad.numpy.fft`,
framing and overlap-add are gathers and scatter-adds with static indices — so every function
differentiates, batches and compiles under ``jit``.

    >>> from funcgrad.scipy.signal import convolve
    >>> convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5]).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax as _lax
from funcgrad.core import dtypes
from funcgrad.numpy._core import ArrayLike, normalize_axis, promote
from funcgrad.primitives import conv as _conv
from funcgrad.primitives import elementwise as ew

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]

ModeString = Literal["full", "same", "valid"]
_MODES = ("full", "same", "valid")


def _inexact(name: str, *xs: ArrayLike) -> list[Any]:
    """``xs`` as arrays promoted to one inexact dtype (as ``promote_dtypes_inexact``)."""
    for x in xs:
        if isinstance(x, str) or x is None:
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)}")
    return [fnp.asarray(x) for x in promote(name, *xs, to="inexact")]


# ----------------------------------------------------------------------------- convolution


def _convolve_nd(in1: Any, in2: Any, mode: str, precision: Any = None) -> Any:
    """Direct N-d convolution: one ``conv_general_dilated`` with a flipped kernel."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = _inexact("convolve", in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{in1.shape} and {in2.shape}."
        )
    no_swap = all(a >= b for a, b in zip(in1.shape, in2.shape))
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    kernel_shape_orig = in2.shape
    if swap:
        in1, in2 = in2, in1
    kshape = in2.shape
    if mode == "valid":
        padding = [(0, 0)] * len(kshape)
    elif mode == "same":
        padding = [
            (k - 1 - (o - 1) // 2, k - o + (o - 1) // 2) for k, o in zip(kshape, kernel_shape_orig)
        ]
    else:
        padding = [(k - 1, k - 1) for k in kshape]
    if in1.ndim == 0:
        return in1 * in2
    kernel = fnp.flip(in2)
    nd = in1.ndim
    spec = tuple(range(nd + 2))  # NC... / OI... / NC...: the default layout
    result = _conv.conv_general_dilated(
        in1[None, None],
        kernel[None, None],
        window_strides=(1,) * nd,
        padding=padding,
        lhs_dilation=(1,) * nd,
        rhs_dilation=(1,) * nd,
        dimension_numbers=(spec, spec, spec),
    )
    return result[0, 0]


def convolve(
    in1: ArrayLike,
    in2: ArrayLike,
    mode: ModeString = "full",
    method: str = "auto",
    precision: Any = None,
) -> Any:
    """N-dimensional convolution of ``in1`` and ``in2``, as ``scipy.signal.convolve``.

    Args:
        in1: an array.
        in2: an array of the same rank; one of the two must be at least as large as the
            other along every axis.
        mode: ``"full"`` (every overlap), ``"same"`` (centred, shaped like ``in1``) or
            ``"valid"`` (full overlaps only).
        method: ``"auto"``/``"direct"`` (a direct convolution) or ``"fft"``.
        precision: accepted for JAX compatibility (funcgrad's convolution has one
            precision).
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd(in1, in2, mode, precision)
    raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def correlate(
    in1: ArrayLike,
    in2: ArrayLike,
    mode: ModeString = "full",
    method: str = "auto",
    precision: Any = None,
) -> Any:
    """N-dimensional cross-correlation: :func:`convolve` with ``in2`` conjugated and
    flipped, as ``scipy.signal.correlate``."""
    in2 = fnp.asarray(in2)
    return convolve(in1, fnp.flip(fnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: float) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(
    in1: ArrayLike,
    in2: ArrayLike,
    mode: ModeString = "full",
    boundary: str = "fill",
    fillvalue: float = 0,
    precision: Any = None,
) -> Any:
    """2-D convolution, as ``scipy.signal.convolve2d`` (only ``boundary="fill"`` with
    ``fillvalue=0``, as in JAX)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(
    in1: ArrayLike,
    in2: ArrayLike,
    mode: ModeString = "full",
    boundary: str = "fill",
    fillvalue: float = 0,
    precision: Any = None,
) -> Any:
    """2-D cross-correlation, as ``scipy.signal.correlate2d`` (only ``boundary="fill"``
    with ``fillvalue=0``). When ``in2`` is the larger input, the result is scipy's: the
    inputs swap and the output is conjugated and flipped accordingly."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = _inexact("correlate2d", in1, in2)
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same = in1.shape == in2.shape
    if mode == "valid" and swap and not same:
        return _convolve_nd(fnp.flip(in2), fnp.conj(in1), mode, precision)
    if mode == "full" and swap:
        return fnp.conj(_convolve_nd(fnp.flip(in2), fnp.conj(in1), mode, precision))
    return fnp.flip(_convolve_nd(fnp.flip(in1), fnp.conj(in2), mode, precision))


def fftconvolve(
    in1: ArrayLike, in2: ArrayLike, mode: ModeString = "full", axes: Sequence[int] | None = None
) -> Any:
    """Convolution by FFT along ``axes`` (default: all), as ``scipy.signal.fftconvolve``.

    Axes not in ``axes`` are batch axes and must have equal sizes in both inputs.
    """
    in1, in2 = _inexact("fftconvolve", in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        ax = tuple(range(in1.ndim))
    else:
        if isinstance(axes, int) or np.ndim(axes) == 0:
            axes = (operator.index(axes),)  # type: ignore[arg-type]
        ax = tuple(normalize_axis(a, in1.ndim, "fftconvolve") for a in axes)
        mapped = sorted(set(range(in1.ndim)) - set(ax))
        if any(in1.shape[i] != in2.shape[i] for i in mapped):
            raise ValueError(
                f"mapped axes must have same shape; got in1.shape={in1.shape} "
                f"in2.shape={in2.shape} axes={tuple(axes)}"
            )
    ax = tuple(sorted(set(ax)))
    s1 = [in1.shape[a] for a in ax]
    s2 = [in2.shape[a] for a in ax]
    if mode == "valid":
        no_swap = all(a >= b for a, b in zip(s1, s2))
        swap = all(a <= b for a, b in zip(s1, s2))
        if not (no_swap or swap):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the other in "
                "every dimension."
            )
        if swap:
            in1, in2 = in2, in1
            s1, s2 = s2, s1
    full = [a + b - 1 for a, b in zip(s1, s2)]
    if all(a == 1 or b == 1 for a, b in zip(s1, s2)):
        conv = in1 * in2
    elif fnp.iscomplexobj(in1):
        conv = fnp.fft.ifftn(fnp.fft.fftn(in1, full, ax) * fnp.fft.fftn(in2, full, ax), full, ax)
    else:
        conv = fnp.fft.irfftn(fnp.fft.rfftn(in1, full, ax) * fnp.fft.rfftn(in2, full, ax), full, ax)
    if mode == "full":
        keep = full
    elif mode == "same":
        keep = s1
    else:
        keep = [a - b + 1 for a, b in zip(s1, s2)]
    index = [slice(None)] * conv.ndim
    for a, f, k in zip(ax, full, keep):
        start = (f - k) // 2
        index[a] = slice(start, start + k)
    return conv[tuple(index)]


# ------------------------------------------------------------------------------- detrend


def detrend(
    data: ArrayLike,
    axis: int = -1,
    type: str = "linear",
    bp: int | Sequence[int] | np.ndarray = 0,
    overwrite_data: None = None,
) -> Any:
    """Remove the mean (``type="constant"``) or a least-squares line (``"linear"``, one per
    piece between the breakpoints ``bp``) along ``axis``, as ``scipy.signal.detrend``."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = _inexact("detrend", data)
    if type == "constant":
        return x - fnp.mean(x, axis, keepdims=True)
    axis = normalize_axis(axis, x.ndim, "detrend")
    n = x.shape[axis]
    bps = np.sort(np.unique(np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along given axis."
        )
    # the fit is linear in the data: residual = (I - A pinv(A)) x per piece; the projector
    # onto each piece's span{1, t} is a constant, built on the host
    proj = np.zeros((n, n))
    for lo, hi in itertools.pairwise(bps):
        m = int(hi - lo)
        a = np.stack([np.ones(m), np.arange(1, m + 1) / m], axis=1)
        proj[lo:hi, lo:hi] = a @ np.linalg.pinv(a)
    resid = (np.eye(n) - proj).astype(ew.real_dtype(x.dtype))
    moved = fnp.moveaxis(x, axis, -1)
    out = fnp.matmul(moved, resid.T, precision=_lax.Precision.HIGHEST)
    return fnp.moveaxis(out, -1, axis)


# ------------------------------------------------------------------------ spectral analysis


def _hann(n: int) -> np.ndarray:
    """The periodic Hann window (scipy's ``get_window("hann", n)``)."""
    if n == 1:
        return np.ones(1)
    return np.sin(np.linspace(0, np.pi, n, endpoint=False)) ** 2


def _named_window(window: str | tuple, n: int) -> np.ndarray:
    if isinstance(window, str) and window == "hann":
        return _hann(n)
    try:
        from scipy.signal import get_window
    except ImportError as err:  # pragma: no cover - scipy is a test dependency
        raise ImportError(f"scipy must be available to use {window=}") from err
    return np.asarray(get_window(window, n))


def _triage_window(
    window: Any, nperseg: int | None, input_length: int, dtype: np.dtype
) -> tuple[Any, int]:
    """The window as an array of ``dtype`` and the segment length it implies."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(
                f"nperseg={n} is greater than input_length={input_length}, "
                f"using nperseg={input_length}",
                stacklevel=4,
            )
            n = input_length
        return fnp.asarray(_named_window(window, n), dtype=dtype), n
    win = fnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _pad_last(x: Any, before: int, after: int, mode: str = "constant") -> Any:
    widths = [(0, 0)] * (x.ndim - 1) + [(before, after)]
    return fnp.pad(x, widths, mode=mode)


def _odd_ext(x: Any, n: int) -> Any:
    """Odd extension at both ends of the last axis (point reflection about the end values)."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. It must not exceed "
            f"x.shape[axis]-1, which is {x.shape[-1] - 1}."
        )
    left = 2 * x[..., :1] - fnp.flip(x[..., 1 : n + 1], axis=-1)
    right = 2 * x[..., -1:] - fnp.flip(x[..., -(n + 1) : -1], axis=-1)
    return fnp.concatenate([left, x, right], axis=-1)


_BOUNDARIES: dict[Any, Callable[[Any, int], Any]] = {
    "even": lambda x, n: _pad_last(x, n, n, "reflect"),
    "odd": _odd_ext,
    "constant": lambda x, n: _pad_last(x, n, n, "edge"),
    "zeros": lambda x, n: _pad_last(x, n, n),
    None: lambda x, n: x,
}


def _frames(x: Any, nperseg: int, noverlap: int) -> Any:
    """``(..., nseg, nperseg)`` overlapping segments of the last axis (one static gather)."""
    length = x.shape[-1]
    starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
    return fnp.take(x, starts[:, None] + np.arange(nperseg), axis=-1)


def _spectral(
    x: ArrayLike,
    y: ArrayLike | None,
    fs: Any,
    window: Any,
    nperseg: int | None,
    noverlap: int | None,
    nfft: int | None,
    detrend_type: Any,
    return_onesided: bool,
    scaling: str,
    axis: int,
    mode: str,
    boundary: str | None = None,
    padded: bool = False,
) -> tuple[Any, Any, Any]:
    """Frequencies, segment times and the (cross) spectrum or STFT of ``x`` (and ``y``)."""
    if boundary not in _BOUNDARIES:
        raise ValueError(
            f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}"
        )
    axis = operator.index(axis)
    if y is None:
        (xa,) = _inexact("spectral_helper", x)
        ya = xa
        axis = normalize_axis(axis, xa.ndim, "spectral_helper")
        outer = tuple(d for i, d in enumerate(xa.shape) if i != axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        xa, ya = _inexact("spectral_helper", x, y)
        if xa.ndim != ya.ndim:
            raise ValueError(f"two-arguments must have the same rank ({xa.ndim} vs {ya.ndim}).")
        axis = normalize_axis(axis, xa.ndim, "spectral_helper")
        try:
            outer = np.broadcast_shapes(
                tuple(d for i, d in enumerate(xa.shape) if i != axis),
                tuple(d for i, d in enumerate(ya.shape) if i != axis),
            )
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = ew.complex_dtype(xa.dtype)
    freq_dtype = ew.real_dtype(result_dtype)
    if nperseg is not None:
        nperseg = operator.index(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nps = _triage_window(window, nperseg, xa.shape[axis], xa.dtype)
    nov = nps // 2 if noverlap is None else operator.index(noverlap)
    nff = nps if nfft is None else operator.index(nfft)
    if xa.size == 0 or (y is not None and ya.size == 0):
        if y is None:
            shape = xa.shape
        else:
            shape = outer[:axis] + (min(xa.shape[axis], ya.shape[axis]),) + outer[axis:]
        return (fnp.zeros(shape, freq_dtype), fnp.zeros(shape, freq_dtype),
                fnp.zeros(shape, result_dtype))  # fmt: skip
    xa = fnp.moveaxis(xa, axis, -1)
    if y is not None:
        if ya.ndim > 1:
            ya = fnp.moveaxis(ya, axis, -1)
        gap = ya.shape[-1] - xa.shape[-1]
        if gap > 0:
            xa = _pad_last(xa, 0, gap)
        elif gap < 0:
            ya = _pad_last(ya, 0, -gap)
    if nff < nps:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if nov >= nps:
        raise ValueError("noverlap must be less than nperseg.")
    step = nps - nov
    if boundary is not None:
        xa = _BOUNDARIES[boundary](xa, nps // 2)
        if y is not None:
            ya = _BOUNDARIES[boundary](ya, nps // 2)
    if padded:
        nadd = (-(xa.shape[-1] - nps) % step) % nps
        xa = _pad_last(xa, 0, nadd)
        if y is not None:
            ya = _pad_last(ya, 0, nadd)

    if isinstance(detrend_type, str):

        def detrend_fn(d: Any) -> Any:
            return detrend(d, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        detrend_fn = detrend_type
    elif not detrend_type:

        def detrend_fn(d: Any) -> Any:
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * fnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / fnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = fnp.sqrt(scale)

    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and (fnp.iscomplexobj(xa) or fnp.iscomplexobj(ya)):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=3)
    if sides == "twosided":
        freqs = fnp.fft.fftfreq(nff, 1 / fs, dtype=freq_dtype)
    else:
        freqs = fnp.fft.rfftfreq(nff, 1 / fs, dtype=freq_dtype)

    def spectrum(sig: Any) -> Any:
        seg = detrend_fn(_frames(sig, nps, nov))
        seg = fnp.multiply(win, seg)  # (fnp: eager jax.Arrays would obey rank promotion)
        if sides == "twosided":
            return fnp.fft.fft(seg, n=nff)
        return fnp.fft.rfft(fnp.real(seg), n=nff)

    res = spectrum(xa)
    if y is not None:
        res = fnp.conj(res) * spectrum(ya)
    elif mode == "psd":
        res = fnp.conj(res) * res
    res = fnp.multiply(res, fnp.asarray(scale).astype(res.dtype))  # (explicit: strict promotion)
    if sides == "onesided" and mode == "psd":
        nf = res.shape[-1]
        double = np.ones(nf)
        double[1 : nf if nff % 2 else nf - 1] = 2.0
        res = fnp.multiply(res, double.astype(res.dtype))
    time = fnp.arange(nps / 2, xa.shape[-1] - nps / 2 + 1, step, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (nps / 2) / fs
    res = res.astype(result_dtype)
    if y is None and mode != "stft":
        res = fnp.real(res)
    return freqs, time, fnp.moveaxis(res, -1, axis)


def stft(
    x: ArrayLike,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: bool = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
) -> tuple[Any, Any, Any]:
    """Short-time Fourier transform, as ``scipy.signal.stft``: ``(freqs, times, Zxx)``
    with frequencies at ``axis`` and segment times last.

    Args:
        x: signal. fs: sampling frequency.
        window: ``"hann"``, another name ``scipy.signal.get_window`` knows, or a 1-D array.
        nperseg: segment length. noverlap: overlap (default ``nperseg // 2``).
        nfft: FFT length (default ``nperseg``). detrend: ``False``, a type name or callable.
        return_onesided: one-sided spectrum for real input.
        boundary: extension at both ends (``"zeros"``, ``"even"``, ``"odd"``,
            ``"constant"`` or ``None``). padded: zero-pad to a whole number of segments.
        axis: time axis of ``x``.
    """
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded)  # fmt: skip


def csd(
    x: ArrayLike,
    y: ArrayLike | None,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """Cross power spectral density by Welch's method, as ``scipy.signal.csd``: segments'
    cross spectra averaged (``average="mean"`` or ``"median"``)."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")  # fmt: skip
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                k = pxy.shape[-1]
                bias = 1 + np.sum(1.0 / (np.arange(2.0, k, 2) + 1) - 1.0 / np.arange(2.0, k, 2))
                if fnp.iscomplexobj(pxy):
                    pxy = _lax.complex(
                        fnp.median(fnp.real(pxy), axis=-1), fnp.median(fnp.imag(pxy), axis=-1)
                    )
                else:
                    pxy = fnp.median(pxy, axis=-1)
                pxy = pxy / np.asarray(bias).astype(pxy.dtype)
            elif average == "mean":
                pxy = fnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = fnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(
    x: ArrayLike,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """Power spectral density by Welch's method, as ``scipy.signal.welch``: the real part
    of :func:`csd` of ``x`` with itself."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)  # fmt: skip
    return freqs, fnp.real(pxx)


def _overlap_add(frames: Any, step: int) -> Any:
    """Sum ``(..., nframes, seglen)`` frames placed ``step`` apart (one static scatter-add)."""
    *batch, nframes, seglen = frames.shape
    length = step * (nframes - 1) + seglen
    index = np.arange(nframes)[:, None] * step + np.arange(seglen)
    return fnp.zeros((*batch, length), frames.dtype).at[..., index].add(frames)


def istft(
    Zxx: ArrayLike,
    fs: ArrayLike = 1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
) -> tuple[Any, Any]:
    """Inverse short-time Fourier transform by weighted overlap-add, as
    ``scipy.signal.istft``: ``(times, x)``."""
    z = fnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = normalize_axis(freq_axis, z.ndim, "istft")
    time_axis = normalize_axis(time_axis, z.ndim, "istft")
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = z.astype(ew.complex_dtype(dtypes.to_inexact(z.dtype)))
    n_default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nps = operator.index(nperseg or n_default)
    if nps < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nff = n_default + (1 if input_onesided and nps == n_default + 1 else 0)
    else:
        nff = operator.index(nfft)
    if nff < nps:
        raise ValueError(f"FFT length ({nff}) must be longer than nperseg ({nps}).")
    nov = operator.index(noverlap or nps // 2)
    if nov >= nps:
        raise ValueError("noverlap must be less than nperseg.")
    step = nps - nov
    if time_axis != z.ndim - 1 or freq_axis != z.ndim - 2:
        outer = tuple(i for i in range(z.ndim) if i not in (time_axis, freq_axis))
        z = fnp.transpose(z, (*outer, freq_axis, time_axis))
    inverse = fnp.fft.irfft if input_onesided else fnp.fft.ifft
    segs = inverse(z, n=nff, axis=-2)[..., :nps, :]
    real_dt = ew.real_dtype(z.dtype)
    if isinstance(window, (str, tuple)):
        win = fnp.asarray(_named_window(window, nps), dtype=segs.dtype)
    else:
        win = fnp.asarray(window).astype(segs.dtype)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nps:
            raise ValueError(f"window must have length of {nps}")
    segs = segs * fnp.sum(win)  # undoes the "spectrum" scaling of stft
    col = fnp.reshape(win, (nps, 1))
    x = _overlap_add(fnp.swapaxes(fnp.multiply(segs, col), -2, -1), step)
    wsq = fnp.broadcast_to(col * col, (nps, segs.shape[-1]))
    norm = _overlap_add(fnp.swapaxes(wsq, -2, -1), step)
    if boundary:
        half = nps // 2
        x = x[..., half : x.shape[-1] - half]
        norm = norm[..., half : norm.shape[-1] - half]
    x = fnp.divide(x, fnp.where(fnp.real(norm) > 1e-10, norm, 1.0))
    if x.ndim > 1 and time_axis != z.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = fnp.moveaxis(x, -1, time_axis)
    # as scipy (and JAX): the length of the result's first axis
    time = fnp.arange(x.shape[0], dtype=np.finfo(real_dt).dtype) / fs
    return time, x
