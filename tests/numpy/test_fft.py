"""``funcgrad.numpy.fft`` against ``jax.numpy.fft``: values, dtypes, shapes, norms, errors,
gradients (vs ``jax.grad``), ``vmap`` (vs ``jax.vmap``) and ``jit``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5))
C = X + 1j * RNG.standard_normal((3, 4, 5))
X32, C32 = X.astype(np.float32), C.astype(np.complex64)


def assert_same(got, want, scale=1.0, what=""):
    """Shapes, dtypes, weak types and values (complex too)."""
    assert isinstance(got, jax.Array), what
    assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type), (
        what,
        got.shape,
        want.shape,
        got.dtype,
        want.dtype,
    )
    t = 1e-12 if got.dtype in (np.float64, np.complex128) else 2e-5
    np.testing.assert_allclose(got, want, rtol=t * scale, atol=t * scale, err_msg=what)


CASES = [
    ("fft", C, {}),
    ("fft", X, {"n": 7, "axis": 1, "norm": "ortho"}),
    ("fft", np.arange(4), {}),
    ("ifft", C, {"n": 3, "norm": "forward"}),
    ("ifft", C32, {"axis": 0}),
    ("rfft", X, {"n": 6}),
    ("rfft", X32, {"axis": 0, "norm": "ortho"}),
    ("irfft", C, {}),
    ("irfft", C, {"n": 9, "axis": 0, "norm": "ortho"}),
    ("fftn", C, {}),
    ("fftn", X32, {"s": (2, 6), "norm": "forward"}),
    ("ifftn", C, {"s": (2, 6)}),
    ("ifftn", C, {"axes": (2, 0), "norm": "ortho"}),
    ("rfftn", X, {"axes": (0, 2)}),
    ("irfftn", C, {"s": (3, 4, 6)}),
    ("irfftn", C32, {"axes": (1, 0), "norm": "forward"}),
    ("fft2", X, {}),
    ("ifft2", C, {"axes": (0, 1)}),
    ("rfft2", X, {"norm": "forward"}),
    ("irfft2", C, {"s": (5, 3)}),
    ("hfft", C, {"n": 8}),
    ("hfft", C32, {"norm": "ortho"}),
    ("ihfft", X, {}),
    ("ihfft", X32, {"n": 3, "norm": "forward"}),
    ("fftshift", X, {}),
    ("fftshift", X, {"axes": 0}),
    ("ifftshift", X, {"axes": (1, 2)}),
]


@pytest.mark.parametrize("name,arg,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_values_dtypes(name, arg, kw):
    got = getattr(fnp.fft, name)(arg, **kw)
    want = getattr(jnp.fft, name)(arg, **kw)
    assert_same(got, want, scale=1e2, what=name)


def test_more_than_three_axes():
    y = RNG.standard_normal((2, 2, 3, 2, 3))
    for name in ("fftn", "ifftn", "rfftn"):
        assert_same(fnp.fft.__dict__[name](y), jnp.fft.__dict__[name](y), scale=1e3)
    spec = jnp.fft.rfftn(y)
    assert_same(fnp.fft.irfftn(spec, s=y.shape), jnp.fft.irfftn(spec, s=y.shape), scale=1e3)


@pytest.mark.parametrize("n", [1, 4, 5])
def test_freqs(n):
    for name in ("fftfreq", "rfftfreq"):
        f = getattr(fnp.fft, name)
        g = getattr(jnp.fft, name)
        assert_same(f(n), g(n), what=name)
        assert_same(f(n, 0.25), g(n, 0.25), what=name)
        assert_same(f(n, dtype=np.float32), g(n, dtype=np.float32), what=name)


def test_errors():
    with pytest.raises(ValueError, match="Invalid norm"):
        fnp.fft.fft(X, norm="bad")
    with pytest.raises(ValueError, match="only real valued"):
        fnp.fft.rfft(C)
    with pytest.raises(ValueError, match="repeated axes"):
        fnp.fft.fftn(X, axes=(0, 0))
    with pytest.raises(ValueError, match="positive"):
        fnp.fft.fft(X, n=0)
    with pytest.raises(ValueError):
        fnp.fft.fft(1.0)
    with pytest.raises(ValueError, match=r"FFT input shape .* minor dimensions must be equal"):
        from funcgrad.primitives.fft import fft as lax_fft

        lax_fft(C, "fft", (3,))
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64"):
        from funcgrad.primitives.fft import fft as lax_fft

        lax_fft(C, "rfft", (5,))


GRAD_CASES = [
    ("fft", {"n": 6, "norm": "ortho"}),
    ("rfft", {}),
    ("rfft", {"n": 4, "axis": 1}),
    ("irfft", {"n": 7}),
    ("rfftn", {"norm": "forward"}),
    ("irfftn", {"s": (3, 4, 6)}),
    ("ifft2", {}),
    ("hfft", {}),
    ("ihfft", {}),
]


@pytest.mark.parametrize("name,kw", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_against_jax(name, kw):
    arg = X if name in ("rfft", "rfftn", "ihfft") else C
    w = RNG.standard_normal(getattr(jnp.fft, name)(arg, **kw).shape)

    def loss(mod):
        def f(a):
            y = getattr(mod.fft, name)(a, **kw)
            return mod.sum(mod.abs(y * w) ** 2) + mod.sum(mod.real(y) * w)

        return f

    got = fg.grad(loss(fnp))(arg)
    want = jo.grad(loss(jnp))(arg)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert got.dtype == want.dtype


def test_jvp_against_jax():
    t = RNG.standard_normal(X.shape)
    got = fg.jvp(lambda a: fnp.fft.rfft2(a), (X,), (t,))
    want = jo.jvp(lambda a: jnp.fft.rfft2(a), (X,), (t,))
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2"])
def test_vmap_against_jax(name):
    arg = X if name == "rfft" else C
    for axis in (0, 1, -1):
        got = fg.vmap(getattr(fnp.fft, name), in_axes=axis)(arg)
        want = jo.vmap(getattr(jnp.fft, name), in_axes=axis)(arg)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_jit_and_grad_of_vmap():
    f = fg.jit(lambda a: fnp.fft.irfft(fnp.fft.rfft(a) * 2.0, n=5))
    np.testing.assert_allclose(f(X), 2 * X, rtol=1e-10, atol=1e-10)

    def g(mod, v):
        return lambda a: mod.sum(v(lambda r: mod.abs(mod.fft.fft(r)) ** 2)(a))

    got = fg.grad(g(fnp, fg.vmap))(X)
    want = jo.grad(g(jnp, jax.vmap))(X)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


EMPTY_CASES = [
    (name, shape)
    for name in ("fft", "ifft", "irfft", "hfft", "fftn", "ifftn", "irfftn", "fft2", "irfft2")
    for shape in ((0,), (3, 0), (0, 3), (3, 1), (1,), (2, 0, 4))
    if not (name.endswith("2") and len(shape) < 2)
]


@pytest.mark.parametrize("name,shape", EMPTY_CASES)
def test_empty_axes_as_jax(name, shape):
    """A zero-length transformed axis (irfft: a length-1 last axis) gives an empty result
    of JAX's shape and dtype; it used to raise."""
    x = np.zeros(shape, np.complex64)
    got, want = getattr(fnp.fft, name)(x), getattr(jnp.fft, name)(x)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def _raises_as_jax(ours, theirs):
    """``ours()`` raises JAX's exception type, its message containing JAX's."""
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(type(want.value)) as got:
        ours()
    assert str(want.value) in str(got.value), (str(got.value), str(want.value))


BAD_NUMPY_CALLS = [
    ("fft", (np.ones((2, 3)),), {"axis": [1, 1]}),
    ("ihfft", (np.ones((2, 3)),), {"axis": (1, 1)}),
    ("irfft", (np.ones((2, 3)),), {"axis": [0]}),
    ("ifftn", (np.ones((2, 3)),), {"axes": [1, 1]}),
    ("rfft2", (np.ones((2, 3)),), {"axes": [0]}),
    ("ifft2", (np.ones((2, 3, 3)),), {"axes": (0, 1, 2)}),
    ("fftfreq", (), {"n": [0, 1, 2]}),
    ("rfftfreq", (), {"n": 10, "d": [0, 1, 2]}),
]


@pytest.mark.parametrize("name,args,kw", BAD_NUMPY_CALLS, ids=[c[0] for c in BAD_NUMPY_CALLS])
def test_numpy_fft_errors_as_jax(name, args, kw):
    _raises_as_jax(
        lambda: getattr(fnp.fft, name)(*args, **kw), lambda: getattr(jnp.fft, name)(*args, **kw)
    )


BAD_LAX_CALLS = [
    (np.ones((14, 15), np.complex64), "fft", (4, 5, 6)),
    (np.ones((14, 15), np.complex64), "fft", (17,)),
    (np.ones((2, 14, 15), np.float32), "rfft", (14, 12)),
    (np.ones((2, 14, 15), np.complex64), "irfft", (13, 15)),
    (np.ones((14, 15), jnp.bfloat16), "rfft", (5, 6)),
    (np.ones((14, 15), np.complex64), "rfft", (15,)),
]


def test_lax_irfft_last_length_checked_early():
    """JAX leaves a wrong half-spectrum length to XLA's verifier; funcgrad says which."""
    with pytest.raises(
        ValueError, match=r"last dimension must be fft_lengths\[-1\] // 2 \+ 1 = 16"
    ):
        fg.lax.fft(np.ones((14, 15), np.complex64), "irfft", (30,))


@pytest.mark.parametrize("x,fft_type,lengths", BAD_LAX_CALLS)
def test_lax_fft_errors_as_jax(x, fft_type, lengths):
    _raises_as_jax(
        lambda: fg.lax.fft(x, fft_type, lengths), lambda: jax.lax.fft(x, fft_type, lengths)
    )


LAX_CONVERSIONS = [
    (dt, t, lengths)
    for dt in (np.float32, np.int32, np.int8, np.bool_, np.float16)
    for t, lengths in (
        ("fft", (6,)),
        ("ifft", (3, 6)),
        ("rfft", (6,)),
        ("irfft", (10,)),
        ("fft", ()),
    )
    if not (t == "rfft" and dt == np.float16)
]


@pytest.mark.parametrize("dt,fft_type,lengths", LAX_CONVERSIONS)
def test_lax_fft_converts_operand_as_jax(dt, fft_type, lengths):
    """``lax.fft`` takes a real operand of fft/ifft/irfft as complex and an integer one of
    rfft as floating, as ``jax.lax.fft`` does (it used to refuse both)."""
    x = (RNG.standard_normal((3, 6)) * 3).astype(dt)
    got, want = fg.lax.fft(x, fft_type, lengths), jax.lax.fft(x, fft_type, lengths)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)
