"""``torch.grid_sampler``, ``grid_sampler_2d``, ``grid_sampler_3d`` and the float32-only
``_grid_sampler_2d_cpu_fallback`` (ATen's integer interpolation and padding modes) against
PyTorch 2.13: the values of ``nn.functional.grid_sample``, and PyTorch's checks in its order
(the batch size before the grid's last dimension, which ``grid_sample`` had the other way
round)."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_FORMS = ("grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "_grid_sampler_2d_cpu_fallback")
_RNG = np.random.default_rng(0)
_CASES = {
    "5-d, grid batch 1": (
        _RNG.standard_normal((5, 5, 5, 5, 5)),
        _RNG.uniform(-1, 1, (1, 1, 1, 4, 4)),
    ),
    "4-d float64": (_RNG.standard_normal((2, 3, 4, 5)), _RNG.uniform(-1.2, 1.2, (2, 3, 2, 2))),
    "5-d float64": (_RNG.standard_normal((1, 2, 3, 4, 5)), _RNG.uniform(-1, 1, (1, 2, 2, 2, 3))),
    "4-d, grid last 3": (_RNG.standard_normal((2, 3, 4, 5)), _RNG.uniform(-1, 1, (2, 3, 2, 3))),
    "4-d float32": (
        _RNG.standard_normal((2, 3, 4, 5)).astype(np.float32),
        _RNG.uniform(-1.1, 1.1, (2, 3, 2, 2)).astype(np.float32),
    ),
}


def _outcome(lib, form, x, g, modes, align):
    try:
        return getattr(lib, form)(lib.tensor(x), lib.tensor(g), *modes, align)
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("form", _FORMS)
@pytest.mark.parametrize("case", sorted(_CASES))
@pytest.mark.parametrize("modes", [(0, 0), (1, 1), (2, 2), (0, 2), (2, 1), (1, 0)])
@pytest.mark.parametrize("align", [True, False])
def test_as_pytorch(form, case, modes, align):
    x, g = _CASES[case]
    got = _outcome(ctorch, form, x, g, modes, align)
    want = _outcome(torch, form, x, g, modes, align)
    if isinstance(want, str):
        assert got == want
        return
    assert not isinstance(got, str), got
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bad", [3, -1, True, 1.0])
def test_modes_out_of_range_refused(bad):
    """PyTorch reads any integer (out of range is undefined behaviour); compat refuses."""
    x, g = ctorch.zeros(1, 1, 2, 2), ctorch.zeros(1, 1, 1, 2)
    with pytest.raises(RuntimeError, match="interpolation_mode"):
        ctorch.grid_sampler(x, g, bad, 0, True)
    with pytest.raises(RuntimeError, match="padding_mode"):
        ctorch.grid_sampler(x, g, 0, bad, True)


def test_gradients_as_grid_sample():
    x = _RNG.standard_normal((1, 2, 3, 4))
    g = _RNG.uniform(-1, 1, (1, 2, 2, 2))
    grads = []
    for lib in (ctorch, torch):
        xt = lib.tensor(x, requires_grad=True)
        gt = lib.tensor(g, requires_grad=True)
        lib.grid_sampler(xt, gt, 0, 1, False).sum().backward()
        grads.append((xt.grad.numpy(), gt.grad.numpy()))
    for a, b in zip(grads[0], grads[1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
