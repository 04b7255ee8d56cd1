"""3-D pooling and normalisation (``max_pool3d``/``avg_pool3d``, ``MaxPool3d``,
``AvgPool3d``, ``BatchNorm3d``, ``InstanceNorm3d``) against real PyTorch: values,
gradients, indices, buffers, node names, ``repr`` and input-rank errors."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

X = np.random.default_rng(1).standard_normal((2, 3, 4, 5, 6))

MODULES = {
    "max": lambda L: L.nn.MaxPool3d(2, stride=1, padding=1),
    "max_dilated_ceil": lambda L: L.nn.MaxPool3d(
        (2, 3, 2), stride=2, dilation=(1, 1, 2), ceil_mode=True
    ),
    "avg": lambda L: L.nn.AvgPool3d((2, 2, 3), ceil_mode=True),
    "avg_pad_excl": lambda L: L.nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False),
    "avg_divisor": lambda L: L.nn.AvgPool3d(2, divisor_override=3),
    "batchnorm": lambda L: L.nn.BatchNorm3d(3),
    "instancenorm": lambda L: L.nn.InstanceNorm3d(3, affine=True, track_running_stats=True),
}


@pytest.mark.parametrize("kind", list(MODULES))
def test_3d_modules_match_pytorch(real_torch, kind):
    results = []
    for lib in (real_torch, ctorch):
        m = MODULES[kind](lib).double()
        t = lib.tensor(X, requires_grad=True)
        y = m(t)
        weights = lib.tensor(np.arange(y.numel()).reshape(y.shape) % 5, dtype=y.dtype)
        (y * weights).sum().backward()
        buffers = [b.numpy().copy() for b in m.buffers()]
        results.append((repr(m), y.grad_fn.name(), y.detach().numpy(), t.grad.numpy(), buffers))
    (rr, rn, ry, rg, rb), (cr, cn, cy, cg, cb) = results
    assert (cr, cn) == (rr, rn)
    np.testing.assert_allclose(cy, ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cg, rg, rtol=1e-12, atol=1e-12)
    for a, b in zip(cb, rb, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_max_pool3d_indices_and_unbatched_input(real_torch):
    for x in (X, X[0]):
        ry, ri = real_torch.nn.functional.max_pool3d(real_torch.tensor(x), 2, return_indices=True)
        cy, ci = ctorch.nn.functional.max_pool3d(ctorch.tensor(x), 2, return_indices=True)
        np.testing.assert_array_equal(cy.numpy(), ry.numpy())
        np.testing.assert_array_equal(ci.numpy(), ri.numpy())
        assert ci.dtype == ctorch.int64


@pytest.mark.parametrize(
    "make, shape, match",
    [
        (lambda L: L.nn.BatchNorm3d(3), (2, 3, 4), "expected 5D input"),
        (lambda L: L.nn.InstanceNorm3d(3), (3, 4), "expected 4D or 5D input"),
    ],
)
def test_3d_norm_rank_errors(real_torch, make, shape, match):
    for lib in (real_torch, ctorch):
        with pytest.raises(ValueError, match=match):
            make(lib)(lib.ones(*shape))
