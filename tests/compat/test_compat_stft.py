"""``torch.stft``/``torch.istft`` against PyTorch 2.13: spectra of real and complex
signals over the options real code sets (hop, window and its length, centring and its
padding mode, normalisation, one- or two-sided, the deprecated real output), their
gradients, the round trip, and the errors' types and messages."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(0)
SIG = RNG.standard_normal((2, 64))

STFT = [
    ({"n_fft": 16, "return_complex": True}, SIG),
    (
        {
            "n_fft": 16,
            "hop_length": 4,
            "win_length": 12,
            "window": "hann12",
            "center": False,
            "return_complex": True,
        },
        SIG[0],
    ),
    (
        {
            "n_fft": 16,
            "window": "hann16",
            "normalized": True,
            "onesided": False,
            "pad_mode": "constant",
            "return_complex": True,
        },
        SIG,
    ),
    ({"n_fft": 8, "hop_length": 3, "window": "hann8", "return_complex": False}, SIG),
    ({"n_fft": 16, "window": "hann16"}, SIG + 0.5j * SIG[::-1]),
    (
        {
            "n_fft": 32,
            "hop_length": 8,
            "window": "hann32",
            "pad_mode": "replicate",
            "return_complex": True,
        },
        SIG,
    ),
]


def _args(lib, kw, sig):
    kw = dict(kw)
    w = kw.get("window")
    if isinstance(w, str):
        kw["window"] = lib.hann_window(int(w[4:]), dtype=lib.float64)
    x = lib.tensor(sig)
    x.requires_grad_(True)
    return x, kw


@pytest.mark.parametrize("kw,sig", STFT, ids=[str(i) for i in range(len(STFT))])
def test_stft_matches_pytorch(real_torch, kw, sig):
    res = {}
    for lib in (ctorch, real_torch):
        x, k = _args(lib, kw, sig)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.stft(x, **k)
        r = s if not s.is_complex() else lib.view_as_real(s)
        (r * r).sum().backward()
        res[lib] = (s.detach().numpy(), x.grad.numpy(), s.dtype)
    (c, cg, cd), (t, tg, td) = res[ctorch], res[real_torch]
    assert str(cd) == str(td) and c.shape == t.shape
    np.testing.assert_allclose(c, t, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(cg, tg, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("center,length", [(True, None), (True, 60), (True, 70)])
def test_istft_matches_pytorch(real_torch, center, length):
    res = {}
    for lib in (ctorch, real_torch):
        w = lib.hann_window(16, dtype=lib.float64)
        s = lib.stft(
            lib.tensor(SIG), 16, hop_length=4, window=w, center=center, return_complex=True
        )
        s.requires_grad_(True)
        y = lib.istft(s, 16, hop_length=4, window=w, center=center, length=length)
        (y * y).sum().backward()
        res[lib] = (y.detach().numpy(), lib.view_as_real(s.grad).numpy())
    (c, cg), (t, tg) = res[ctorch], res[real_torch]
    assert c.shape == t.shape
    np.testing.assert_allclose(c, t, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(cg, tg, rtol=1e-7, atol=1e-9)
    if center and length is None:  # the round trip
        np.testing.assert_allclose(c, SIG, atol=1e-12)


def _error(lib, f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f(lib)
    except Exception as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize(
    "f",
    [
        lambda t: t.stft(t.zeros(2, 64), 16),  # return_complex missing for real input
        lambda t: t.stft(t.zeros(2, 64), 16, window=t.ones(8), return_complex=True),
        lambda t: t.stft(t.zeros(2, 64), 200, return_complex=True, center=False),
        lambda t: t.istft(t.zeros(9, 5), 16),  # a real input
        # a Hann window's envelope vanishes at an uncentred signal's ends
        lambda t: t.istft(
            t.stft(
                t.zeros(64, dtype=t.float64),
                16,
                4,
                window=t.hann_window(16, dtype=t.float64),
                center=False,
                return_complex=True,
            ),
            16,
            4,
            window=t.hann_window(16, dtype=t.float64),
            center=False,
        ),
    ],
    ids=["return_complex", "window size", "n_fft", "istft real", "istft envelope"],
)
def test_errors_match_pytorch(real_torch, f):
    assert _error(ctorch, f) == _error(real_torch, f)


def test_real_output_warns_as_pytorch():
    # (PyTorch warns once per process: its text is checked here, not its count)
    with pytest.warns(UserWarning, match=r"stft with return_complex=False is deprecated"):
        out = ctorch.stft(ctorch.zeros(64), 16, window=ctorch.ones(16), return_complex=False)
    assert out.shape == (9, 17, 2)
    with pytest.warns(UserWarning, match=r"A window was not provided"):
        ctorch.stft(ctorch.zeros(64), 16, return_complex=True)
