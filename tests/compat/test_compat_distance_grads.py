"""``cdist`` and ``dist`` gradients at zero differences and ties, compared with real
PyTorch: PyTorch's gradient is 0 where a difference (or the whole distance) is 0, where
the power rule gives NaN for ``p < 1`` and at a zero ``p = 2`` distance; ``cdist``'s
``p = inf`` gradient reaches every tied maximum in full (``dist``'s is shared)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import compat.torch as ctorch
from tests.compat.torch_oracle import npv

_A = [[0.0, 1.0, 2.0], [1.0, 1.0, 3.0], [1.0, -1.0, 2.0]]
_B = [[0.0, 1.0, 2.0], [1.0, 0.5, 2.0], [1.0, -1.0, -2.0]]
_PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf]


def _run(lib, f, a0, b0):
    a = lib.tensor(a0, dtype=lib.float64, requires_grad=True)
    b = lib.tensor(b0, dtype=lib.float64, requires_grad=True)
    y = f(lib, a, b)
    w = lib.arange(1, y.numel() + 1, dtype=lib.float64).reshape(y.shape)
    (y * w).sum().backward()
    return npv(y), npv(a.grad), npv(b.grad)


def _compare(real_torch, f, a0, b0):
    got = _run(ctorch, f, a0, b0)
    want = _run(real_torch, f, a0, b0)
    for g, w in zip(got, want):
        assert not np.isnan(g).any()
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", _PS)
def test_cdist_zero_differences(real_torch, p):
    """Rows 0 match exactly (zero distance); the others share some coordinates and tie."""
    _compare(real_torch, lambda lib, a, b: lib.cdist(a, b, p=p), _A, _B)


@pytest.mark.parametrize("p", _PS)
def test_cdist_batched_zero_distance(real_torch, p):
    a = [[[1.0, 2.0], [3.0, 3.0]], [[0.0, 0.0], [2.0, -1.0]]]
    _compare(real_torch, lambda lib, x, y: lib.cdist(x, y, p=p), a, a)


# (p = 0 left out: PyTorch 2.13's backward of dist(a, b, 0) fails with an undefined
# tensor error)
@pytest.mark.parametrize("p", [*_PS[1:], -0.5, -1.0, -math.inf])
@pytest.mark.parametrize("b0", [[0.0, 1.0, 2.0], [1.0, 1.0, 3.0], [0.5, 2.0, 2.5]])
def test_dist_zero_differences(real_torch, p, b0):
    _compare(real_torch, lambda lib, a, b: lib.dist(a, b, p), [1.0, 1.0, 3.0], b0)
