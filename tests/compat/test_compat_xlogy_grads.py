"""``xlogy``/``xlog1py``'s gradients where JAX's and PyTorch's differ: at ``x == 0``
PyTorch's derivative in ``x`` is 0 when ``log(y)`` (``log1p(y)``) is infinite or NaN
(``y <= 0``, ``y <= -1``), JAX's (compat's before) is that -inf or NaN. Values and both
gradients against PyTorch 2.13, first and second order."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

XS = [0.0, 0.0, 0.0, 0.0, -1.0, 1.0, 0.0, 2.0, 0.0, 1.5]
YS = [0.5, -2.0, np.nan, 0.0, -1.0, -1.0, np.inf, 0.0, 2.0, 3.0]


def _grads(lib, name, shift):
    fn = lib
    for part in name.split("."):
        fn = getattr(fn, part)
    x = lib.tensor(XS, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(np.array(YS) + shift, dtype=lib.float64, requires_grad=True)
    out = fn(x, y)
    gx, gy = lib.autograd.grad(out.sum(), (x, y), create_graph=True)
    # second order through the finite points only (PyTorch's masks are not differentiated)
    ggx = lib.autograd.grad((gx * lib.tensor([1.0] * 8 + [0.0] * 2)).sum() + gy[-1], x,
                            allow_unused=True)[0]  # fmt: skip
    return [t.detach().numpy() for t in (out, gx, gy)] + [
        None if ggx is None else ggx.detach().numpy()
    ]


@pytest.mark.parametrize(
    "name,shift", [("xlogy", 0.0), ("special.xlogy", 0.0), ("special.xlog1py", -1.0)]
)
def test_gradients_match_pytorch(real_torch, name, shift):
    for c, t in zip(_grads(ctorch, name, shift), _grads(real_torch, name, shift)):
        if t is None or c is None:
            assert c is None or not np.any(c), (c, t)
            continue
        np.testing.assert_allclose(c, t, rtol=1e-12, equal_nan=True)
