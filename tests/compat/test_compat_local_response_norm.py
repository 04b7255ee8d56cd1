"""``nn.LocalResponseNorm`` / ``F.local_response_norm`` against PyTorch 2.13 (the
``real_torch`` fixture): values, gradients and ``repr`` on 3- to 5-d inputs and an empty
batch, and the refusal of a 2-d input."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch


@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 7, 3, 4), (1, 4, 2, 2, 3), (0, 3, 2)])
@pytest.mark.parametrize("size,kw", [(2, {}), (5, {"alpha": 0.1, "beta": 0.5, "k": 2.0}), (1, {})])
def test_local_response_norm(real_torch, shape: tuple, size: int, kw: dict) -> None:
    rng = np.random.default_rng(4)
    x, g = rng.standard_normal(shape), rng.standard_normal(shape)
    results = []
    for lib in (ctorch, real_torch):
        t = lib.tensor(x, requires_grad=True)
        module = lib.nn.LocalResponseNorm(size, **kw)
        out = module(t)
        if out.numel():
            out.backward(lib.tensor(g))
        results.append(
            (out.detach().numpy(), t.grad.numpy() if out.numel() else None, repr(module))
        )
    assert results[0][2] == results[1][2]
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    if results[1][1] is not None:
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-12)
    msgs = []
    for lib in (ctorch, real_torch):
        with pytest.raises(ValueError) as info:
            lib.nn.functional.local_response_norm(lib.ones(3, 4), 2)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
