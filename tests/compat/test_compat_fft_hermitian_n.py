"""``torch.fft.hfft2``/``hfftn``/``ihfft2``/``ihfftn`` against PyTorch 2.13: values and
dtypes over sizes, dimensions and normalisations, gradients, the refusal of a complex
input to the inverse transforms."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(0)
XR = RNG.normal(size=(3, 4, 5))
XC = XR + 1j * RNG.normal(size=(3, 4, 5))
KWARGS = [
    {},
    {"norm": "ortho"},
    {"norm": "forward"},
    {"s": (4, 6)},
    {"dim": (0, 2)},
    {"s": (3, 8), "dim": (0, 1), "norm": "backward"},
]


@pytest.mark.parametrize("op", ["hfft2", "hfftn", "ihfft2", "ihfftn"])
@pytest.mark.parametrize("kwargs", KWARGS)
def test_values(op, kwargs, real_torch):
    inputs = [XR, XR.astype(np.float32)] + ([] if op.startswith("i") else [XC])
    for x in inputs:
        a = getattr(ctorch.fft, op)(ctorch.tensor(x), **kwargs)
        b = getattr(real_torch.fft, op)(real_torch.tensor(x), **kwargs)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        tol = 1e-10 if x.dtype != np.float32 else 1e-4
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["hfft2", "hfftn", "ihfft2", "ihfftn"])
def test_gradients(op, real_torch):
    x = XR if op.startswith("i") else XC
    results = []
    for lib in (real_torch, ctorch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.fft, op)(t, norm="ortho")
        w = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        loss = (y.real * w).sum() + ((y.imag * w).sum() if y.is_complex() else 0)
        (g,) = lib.autograd.grad(loss, t)
        results.append(g.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)


def test_errors(real_torch):
    for lib in (real_torch, ctorch):
        with pytest.raises(
            RuntimeError, match="Only supports floating-point dtypes, but found: ComplexDouble"
        ):
            lib.fft.ihfftn(lib.tensor(XC))
        with pytest.raises(RuntimeError, match='Invalid normalization mode: "sideways"'):
            lib.fft.hfft2(lib.tensor(XC), norm="sideways")


@pytest.mark.parametrize("op", ["fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "hfft", "ihfft"])
def test_a_bad_norm_is_pytorchs_error_for_every_transform(real_torch, op):
    def message(lib):
        x = lib.ones(4, 4) if op not in ("irfft", "hfft") else lib.ones(4, 4, dtype=lib.complex64)
        with pytest.raises(RuntimeError) as e:
            getattr(lib.fft, op)(x, norm="sideways")
        return str(e.value)

    assert message(ctorch) == message(real_torch)
