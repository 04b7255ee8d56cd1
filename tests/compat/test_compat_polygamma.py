"""``Tensor.polygamma_(n)`` against PyTorch 2.13: values, its own node
(``PolygammaBackward1``, where the function's is ``PolygammaBackward0``), the gradient,
and the refusal of an integer tensor."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch


@pytest.mark.parametrize("n", [0, 1, 2])
def test_inplace_polygamma_as_pytorch(real_torch, n):
    got = []
    for lib in (ctorch, real_torch):
        x = lib.tensor([0.5, 1.5, 2.75], dtype=lib.float64, requires_grad=True)
        y = x * 1.0
        r = y.polygamma_(n)
        assert r is y
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        got.append((y.tolist(), y.grad_fn.name(), x.grad.tolist()))
    assert got[0][1] == got[1][1] == "PolygammaBackward1"
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-8)  # (PyTorch: ~5e-10 off)
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-8)


def test_inplace_polygamma_refuses_integers(real_torch):
    errors = []
    for lib in (ctorch, real_torch):
        with pytest.raises(RuntimeError) as e:
            lib.tensor([1, 2]).polygamma_(1)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
