"""``torch.stft`` and ``torch.istft``: short-time Fourier transforms built from compat's
differentiable ops (``Tensor.unfold``, ``torch.fft``, ``nn.functional.fold`` for the
overlap-add), with PyTorch's defaults, warnings and errors.

Loaded on first access (``compat.torch.__getattr__``), as ``torch._aten_forms``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import compat.torch as torch
import compat.torch.nn.functional as F
from compat._core.tensor import Tensor


def _stft_window(name: str, window: Any, win_length: int, n_fft: int, like: Tensor) -> Tensor:
    """The window padded to ``n_fft`` (centred, as PyTorch's); a missing one is
    rectangular, with PyTorch's warning."""
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied"
            + (
                ",which is known to cause spectral leakage. Other windows such as "
                "torch.hann_window or torch.hamming_window are recommended to reduce spectral "
                "leakage."
                if name == "stft"
                else ".Please provide the same window used by stft to make the inversion lossless."
            )
            + "To suppress this warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=3,
        )
        window = torch.ones(win_length, dtype=like.real.dtype if like.is_complex() else like.dtype)
    left = (n_fft - win_length) // 2
    return F.pad(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


def _legacy_name(t: Tensor) -> str:
    kind = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}  # fmt: skip
    return f"torch.{kind.get(t.dtype.name, t.dtype.name)}Tensor{list(t.shape)}"


def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """``torch.stft``: the short-time Fourier transform of a 1-d signal or a batch of them,
    ``(freq, frames)`` per signal: frames ``hop_length`` apart (``n_fft // 4``), each times
    the window (``win_length``, centred in ``n_fft``), through the FFT (one-sided for real
    input and window); ``center`` pads ``n_fft // 2`` on both sides first (``pad_mode``);
    differentiable. ``return_complex`` must be given for real input, as PyTorch's."""
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and "
                "will further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if align_to_window is not None:
        raise NotImplementedError("compat.torch.stft: align_to_window=")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D tensor")
    x = input if input.dim() == 2 else input[None]
    if center:
        pad = n_fft // 2
        x = F.pad(x[:, None], (pad, pad), mode=pad_mode)[:, 0]
    desc = (
        f"stft({_legacy_name(x if input.dim() == 2 else x[0])}, n_fft={n_fft}, "
        f"hop_length={hop}, win_length={win}, window="
        + ("None" if window is None else f"torch.{_legacy_name(window)[6:].replace('[', '{[')}}}")
        + f", normalized={int(normalized)}, onesided="
        + ("None" if onesided is None else str(int(onesided)))
        + f", return_complex={int(return_complex)}, align_to_window=None) : "
    )
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(desc + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(desc + f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(desc + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(
            desc + f"expected a 1D window tensor of size equal to win_length={win}, but got "
            f"window with size {list(window.shape)}"
        )
    if not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft "
            "will return complex tensors for all inputs, and return_complex=False will raise "
            "an error.\nNote: you can still call torch.view_as_real on the complex output to "
            "recover the old return format.",
            UserWarning,
            stacklevel=2,
        )
    w = _stft_window("stft", window, win, n_fft, input)
    frames = x.unfold(-1, n_fft, hop) * w  # (batch, frames, n_fft)
    sided = not complex_in if onesided is None else onesided
    spec = torch.fft.rfft(frames) if sided else torch.fft.fft(frames)
    if normalized:
        spec = spec / math.sqrt(n_fft)
    spec = spec.transpose(-1, -2)
    if input.dim() == 1:
        spec = spec[0]
    return spec if return_complex else torch.view_as_real(spec)


def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """``torch.istft``: the inverse of :func:`stft` by overlap-add (``nn.functional.fold``)
    divided by the window's squared envelope; ``length`` trims or zero-pads the signal;
    differentiable. The envelope must not vanish inside the signal (PyTorch's error)."""
    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    spec = input if input.dim() == 3 else input[None]
    if normalized:
        spec = spec * math.sqrt(n_fft)
    sided = spec.shape[-2] != n_fft if onesided is None else onesided
    frames_f = spec.transpose(-1, -2)  # (batch, frames, freq)
    if sided:
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = torch.fft.irfft(frames_f, n=n_fft)
    else:
        frames = torch.fft.ifft(frames_f, n=n_fft)
        if not return_complex:
            frames = frames.real
    w = _stft_window("istft", window, win, n_fft, frames)
    n_frames = frames.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    fold = {"output_size": (1, total), "kernel_size": (1, n_fft), "stride": (1, hop)}
    y = F.fold((frames * w).transpose(-1, -2), **fold).reshape(frames.shape[0], total)
    env = F.fold((w * w).reshape(1, n_fft, 1).expand(1, n_fft, n_frames), **fold).reshape(total)
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    env_kept = env[start:end]
    if env_kept.numel() and float(env_kept.abs().min()) < 1e-11:
        kind = _legacy_name(input)[6:].split("Tensor")[0]
        win_desc = "None" if window is None else f"torch.{_legacy_name(window)[6:]}"
        raise RuntimeError(
            f"istft(CPU{kind}Type{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={win_desc.replace('[', '{[')}"
            + ("}" if window is not None else "")
            + f", center={int(center)}, normalized={int(normalized)}, onesided="
            + ("None" if onesided is None else str(int(onesided)))
            + f", length={length}, return_complex={int(return_complex)}) window overlap "
            "add min: 1\n[ CPUBoolType{} ]"
        )
    y = y[:, start:end] / env_kept
    if length is not None and y.shape[-1] < length:
        y = F.pad(y, (0, length - y.shape[-1]))
    return y if input.dim() == 3 else y[0]


#: the names ``compat.torch`` loads from here on first access
NAMES = ("stft", "istft")
