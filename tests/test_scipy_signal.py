"""``funcgrad.scipy.signal`` against ``jax.scipy.signal``: convolutions (direct and FFT,
N-d, every mode), detrending, STFT/ISTFT, Welch and cross spectral densities — values,
dtypes, shapes, errors, gradients and transforms."""

from __future__ import annotations

import jax
import jax.scipy.signal as jsig
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.scipy.signal as fsig
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
SIG = RNG.normal(size=(2, 48))


def close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def both(name, *args, **kw):
    """``name(*args, **kw)`` under funcgrad's ``jit`` and JAX's (one compilation each)."""
    f, j = getattr(fsig, name), getattr(jsig, name)
    return fg.jit(lambda *a: f(*a, **kw))(*args), jax.jit(lambda *a: j(*a, **kw))(*args)


def close_tree(got, want, tol=1e-10):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(g, w, tol)


# ------------------------------------------------------------------------ convolutions

SHAPES = {
    "1d": ((9,), (4,)),
    "1d_swap": ((3,), (8,)),
    "2d": ((5, 6), (3, 2)),
    "3d": ((3, 4, 5), (2, 2, 3)),
}


MODES = ("full", "same", "valid")


def many(name, cases, **kw):
    """Every ``(args, kwargs)`` case of ``name`` in ONE jitted program per library (one
    compilation each), compared result by result."""
    f, j = getattr(fsig, name), getattr(jsig, name)
    flat = [a for args, _ in cases for a in args]

    def run(fn):
        def prog(*arrays):
            it = iter(arrays)
            return tuple(fn(*[next(it) for _ in args], **ckw, **kw) for args, ckw in cases)

        return prog

    got, want = fg.jit(run(f))(*flat), jax.jit(run(j))(*flat)
    for g, w in zip(got, want):
        close_tree(g, w)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_convolve_correlate_match_jax(name, method):
    cases = [
        ((RNG.normal(size=s1), RNG.normal(size=s2)), {"mode": mode})
        for s1, s2 in SHAPES.values()
        for mode in MODES
    ]
    many(name, cases, method=method)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_2d_match_jax(name):
    cases = []
    for cplx in (False, True):
        for swap in (False, True):
            a, b = RNG.normal(size=(5, 6)), RNG.normal(size=(3, 2))
            if cplx:
                a = a + 1j * RNG.normal(size=a.shape)
            if swap:
                a, b = b, a
            cases += [((a, b), {"mode": mode}) for mode in MODES]
    many(name, cases)


def test_fftconvolve_axes_match_jax():
    a, b = RNG.normal(size=(4, 7)), RNG.normal(size=(4, 3))
    cases = [
        ((a, b), {"mode": mode, "axes": axes}) for mode in MODES for axes in (None, 1, [-1], (0, 1))
    ]
    cases += [((b, a), {"mode": mode, "axes": 1}) for mode in MODES]
    many("fftconvolve", cases)


def test_convolve_dtypes_eager():
    i1, i2 = np.arange(5), np.arange(3)
    close(fsig.convolve(i1, i2), jsig.convolve(i1, i2))
    f1, f2 = RNG.normal(size=6).astype(np.float32), RNG.normal(size=3).astype(np.float32)
    close(fsig.convolve(f1, f2, "same"), jsig.convolve(f1, f2, "same"), 1e-5)
    close(fsig.fftconvolve(f1, f2), jsig.fftconvolve(f1, f2), 1e-5)
    c = f1 + 1j * f1[::-1]
    close(fsig.correlate(c, f2, method="fft"), jsig.correlate(c, f2, method="fft"), 1e-5)
    close(
        fsig.convolve(np.array([1.0, 2.0]), np.array([3.0])),
        jsig.convolve(np.array([1.0, 2.0]), np.array([3.0])),
    )
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        fsig.convolve([1.0, 2.0], [3.0])  # JAX fails on lists too (AttributeError)


def test_convolution_errors_like_jax():
    a, b = np.ones((3, 4)), np.ones((4, 3))
    with pytest.raises(ValueError, match="smaller than the other"):
        fsig.convolve(a, b)
    with pytest.raises(ValueError, match="same number of dimensions"):
        fsig.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="mode must be one of"):
        fsig.convolve(np.ones(3), np.ones(2), mode="wrap")
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        fsig.convolve(np.ones(3), np.ones(2), method="overlap")
    with pytest.raises(ValueError, match="zero-size"):
        fsig.convolve(np.ones(3), np.ones(0))
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        fsig.convolve2d(a, a, boundary="wrap")
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        fsig.correlate2d(a, a, fillvalue=1.0)
    with pytest.raises(ValueError, match="2-dimensional"):
        fsig.convolve2d(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="same dimensionality"):
        fsig.fftconvolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="mapped axes must have same shape"):
        fsig.fftconvolve(np.ones((3, 4)), np.ones((2, 2)), axes=1)
    with pytest.raises(ValueError, match="at least as large"):
        fsig.fftconvolve(a, b, mode="valid")


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_convolve_grad_matches_jax(method):
    a, b = RNG.normal(size=(7,)), RNG.normal(size=(3,))

    def loss(mod):
        return lambda x, k: (mod.convolve(x, k, "same", method=method) ** 2).sum()

    got = fg.jit(fg.grad(loss(fsig), argnums=(0, 1)))(a, b)
    want = jax.jit(jo.grad(loss(jsig), argnums=(0, 1)))(a, b)
    close_tree(got, want, 1e-9)


def test_convolution_check_grads_and_vmap():
    a, b = RNG.normal(size=(5, 4)), RNG.normal(size=(2, 3))
    check_grads(lambda x, k: fsig.correlate2d(x, k, "valid"), (a, b), order=1)
    batch = RNG.normal(size=(3, 6))
    got = fg.vmap(lambda x: fsig.convolve(x, b[0]))(batch)
    close(got, jo.vmap(lambda x: jsig.convolve(x, b[0]))(batch))


_BOTH_METHODS = fg.jit(
    lambda x, k: (fsig.convolve(x, k, method="direct"), fsig.convolve(x, k, method="fft"))
)


@given(st.lists(st.floats(-10, 10), min_size=6, max_size=6))
def test_direct_and_fft_agree(values):
    x, k = np.array(values), np.array([0.5, -1.0, 2.0])
    direct, fft = _BOTH_METHODS(x, k)
    np.testing.assert_allclose(np.asarray(direct), np.convolve(x, k), atol=1e-9)
    np.testing.assert_allclose(np.asarray(fft), np.asarray(direct), atol=1e-9)


# ----------------------------------------------------------------------------- detrend


def test_detrend_matches_jax():
    d = RNG.normal(size=(14, 14)) + np.arange(14.0)
    cases = [
        ((d,), {"axis": axis, "type": kind, "bp": bp})
        for kind in ("constant", "linear")
        for axis, bp in ((-1, 0), (0, [4, 9]), (1, 5))
    ]
    many("detrend", cases)


def test_detrend_dtypes_errors_grad():
    x = np.arange(8)
    close(fsig.detrend(x), jsig.detrend(x), 1e-9)
    xf = RNG.normal(size=8).astype(np.float32)
    close(fsig.detrend(xf, type="constant"), jsig.detrend(xf, type="constant"), 1e-5)
    with pytest.raises(ValueError, match="Trend type"):
        fsig.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="Breakpoints"):
        fsig.detrend(x, bp=20)
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        fsig.detrend(x, overwrite_data=True)
    y = RNG.normal(size=(8,))
    close(fg.grad(lambda v: (fsig.detrend(v) ** 3).sum())(y),
          jo.grad(lambda v: (jsig.detrend(v) ** 3).sum())(y), 1e-9)  # fmt: skip


# ------------------------------------------------------------------- spectral analysis

STFT_CASES = [
    {"nperseg": 16},
    {"nperseg": 16, "noverlap": 4, "nfft": 20},
    {"nperseg": 15, "boundary": "even", "padded": False},
    {"nperseg": 16, "boundary": "odd", "detrend": "linear"},
    {"nperseg": 8, "boundary": None, "return_onesided": False},
    {"nperseg": 16, "window": "hamming", "boundary": "constant", "fs": 3.0},
    {"nperseg": 12, "window": np.hanning(12)},
]


def test_stft_matches_jax():
    many("stft", [((SIG,), kw) for kw in STFT_CASES])


WELCH_CASES = [
    {"nperseg": 16},
    {"nperseg": 16, "noverlap": 4, "nfft": 21},
    {"nperseg": 16, "scaling": "spectrum", "average": "median"},
    {"nperseg": 16, "detrend": "linear", "return_onesided": False},
    {"nperseg": 16, "detrend": False, "window": "blackman"},
    {},
]


def test_welch_csd_match_jax():
    many("welch", [((SIG,), kw) for kw in WELCH_CASES])
    many("csd", [((SIG, 2.0 * SIG[::-1]), kw) for kw in WELCH_CASES])


def test_spectral_axis_dtypes_and_broadcast():
    close_tree(*both("welch", SIG.T, nperseg=16, axis=0))
    s32 = SIG[0].astype(np.float32)
    close_tree(fsig.stft(s32, nperseg=16), jsig.stft(s32, nperseg=16), 1e-5)  # eager
    close_tree(*both("csd", SIG, SIG[:1, :40], nperseg=8))


def test_callable_detrend_follows_scipy():
    # JAX moves the (canonicalised) signal axis of the segments before calling a callable
    # detrend; scipy, and funcgrad, call it on the segments with time last
    import scipy.signal as ssig

    def detr(d):
        return d - d.mean(axis=-1, keepdims=True)

    got = fsig.welch(SIG, nperseg=16, detrend=detr)
    want = ssig.welch(SIG, nperseg=16, detrend=detr)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, atol=1e-12)


def test_spectral_warnings_and_errors():
    with pytest.warns(UserWarning, match="nperseg"):
        fsig.welch(SIG[0, :8], nperseg=16)
    c = SIG[0] + 1j * SIG[1]
    with pytest.warns(UserWarning, match="complex"):
        got = fg.jit(lambda v: fsig.welch(v, nperseg=16))(c)
    with pytest.warns(UserWarning, match="complex"):
        close_tree(got, jax.jit(lambda v: jsig.welch(v, nperseg=16))(c))
    with pytest.raises(ValueError, match="noverlap must be less"):
        fsig.stft(SIG, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft must be greater"):
        fsig.stft(SIG, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="Unknown scaling"):
        fsig.welch(SIG, scaling="power")
    with pytest.raises(ValueError, match="Unknown boundary"):
        fsig.stft(SIG, boundary="wrap")
    with pytest.raises(ValueError, match="average must be"):
        fsig.welch(SIG, nperseg=8, average="mode")
    with pytest.raises(ValueError, match="positive integer"):
        fsig.welch(SIG, nperseg=0)
    with pytest.raises(ValueError, match="window must be 1-D"):
        fsig.welch(SIG, window=np.ones((2, 2)))
    with pytest.raises(ValueError, match="different from length of window"):
        fsig.welch(SIG, window=np.ones(8), nperseg=4)
    with pytest.raises(ValueError, match="same rank"):
        fsig.csd(SIG, SIG[0])


ISTFT_CASES = [
    {"nperseg": 16},
    {"nperseg": 16, "noverlap": 12},
    {"nperseg": 16, "window": "hamming"},
    {"nperseg": 16, "nfft": 20},
]


def test_istft_matches_jax_and_inverts():
    zs = [np.asarray(jax.jit(lambda v, kw=kw: jsig.stft(v, **kw)[2])(SIG)) for kw in ISTFT_CASES]
    many("istft", [((z,), kw) for z, kw in zip(zs, ISTFT_CASES)])
    for z, kw in zip(zs, ISTFT_CASES[:1]):
        back = fsig.istft(z, **kw)[1]  # eager
        np.testing.assert_allclose(np.asarray(back)[:, : SIG.shape[1]], SIG, atol=1e-9)


def test_istft_axes_twosided_and_errors():
    _, _, z = jsig.stft(SIG, nperseg=8, return_onesided=False)
    z = np.asarray(z)
    zt = np.moveaxis(z, -1, 0)  # (time, batch, freq)
    kw = {"nperseg": 8, "input_onesided": False, "time_axis": 0, "freq_axis": -1}
    close_tree(*both("istft", zt, **kw), 1e-9)
    with pytest.raises(ValueError, match="at least 2d"):
        fsig.istft(np.ones(4))
    with pytest.raises(ValueError, match="differing time and frequency"):
        fsig.istft(z, time_axis=1, freq_axis=1)
    with pytest.raises(ValueError, match="noverlap must be less"):
        fsig.istft(z, nperseg=8, noverlap=9)
    with pytest.raises(ValueError, match="must be longer than nperseg"):
        fsig.istft(z, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="window must have length"):
        fsig.istft(z, nperseg=8, window=np.ones(5))


def test_spectral_grads_match_jax():
    x = SIG[0, :32]

    def loss(mod):
        def f(v):
            _, p = mod.welch(v, nperseg=8)
            _, _, z = mod.stft(v, nperseg=8)
            _, back = mod.istft(z, nperseg=8)
            return p.sum() + (abs(z) ** 2).sum() + (back[:32] * v).sum()

        return f

    close(fg.jit(fg.grad(loss(fsig)))(x), jax.jit(jo.grad(loss(jsig)))(x), 1e-8)


def test_istft_odd_nperseg_follows_scipy():
    # JAX's istft fails to broadcast for an odd one-sided nperseg; funcgrad inverts as scipy
    import scipy.signal as ssig

    x = SIG[0, :30]
    _, _, z = ssig.stft(x, nperseg=7)
    t, back = fsig.istft(z, nperseg=7)
    want_t, want = ssig.istft(z, nperseg=7)
    np.testing.assert_allclose(np.asarray(back), want, atol=1e-12)
    np.testing.assert_allclose(np.asarray(t), want_t)
    np.testing.assert_allclose(np.asarray(back)[:30], x, atol=1e-12)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("stft", {"nperseg": 9}),
        ("welch", {"nperseg": 9}),
        ("welch", {}),
        ("csd", {"nperseg": 9, "average": "median"}),
        ("istft", {"nperseg": 8}),
    ],
)
def test_spectral_functions_under_rank_promotion_raise(name, kw):
    """Batched signals under ``jax_numpy_rank_promotion="raise"``: funcgrad's own
    arithmetic broadcasts a window against the frames, which the user's option must not
    refuse (it did: funcgrad's eager values are jax.Arrays, whose operators obey it)."""
    x = np.random.default_rng(0).normal(size=(3, 2, 2, 20)).astype(np.float32)
    if name == "istft":
        x = np.asarray(jsig.stft(x, nperseg=8)[2])
    args = (x, x) if name == "csd" else (x,)
    old = fg.config.read("jax_numpy_rank_promotion")
    fg.config.update("jax_numpy_rank_promotion", "raise")
    try:
        ours = getattr(fsig, name)(*args, **kw)
        theirs = getattr(jsig, name)(*args, **kw)
    finally:
        fg.config.update("jax_numpy_rank_promotion", old)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["stft", "welch", "csd"])
def test_spectral_functions_under_strict_promotion(name):
    """The spectra's scaling multiplies complex frames by real factors: funcgrad casts
    them explicitly, so ``jax_numpy_dtype_promotion="strict"`` accepts it, as JAX does."""
    x = np.random.default_rng(1).normal(size=(2, 20)).astype(np.float32)
    args = (x, x) if name == "csd" else (x,)
    old = fg.config.read("jax_numpy_dtype_promotion")
    fg.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        ours = getattr(fsig, name)(*args, nperseg=9)
        theirs = getattr(jsig, name)(*args, nperseg=9)
    finally:
        fg.config.update("jax_numpy_dtype_promotion", old)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-4, atol=1e-5)
