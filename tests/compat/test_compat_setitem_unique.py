"""Advanced-index assignment and writes through a view's integer index over many places (``a[perm] = v`` on a 100x100 tensor, a
column permutation, integers mixed with index arrays, repeated indices) gives PyTorch
2.13's values, and the gradient of the assigned values too. (compat searched each
place's last write in O(k^2): the 10,000-place assignment took seconds, past the
conformance runner's limit under load; index arrays known to be distinct now skip it.)"""

from __future__ import annotations

import time

import numpy as np
import pytest

import compat.torch as ctorch

PERM = np.random.default_rng(0).permutation(100)


def _rows(t):
    a = t.zeros((100, 100))
    a[t.tensor(PERM)] = t.arange(0.0, 100)[:, None]
    return a


def _cols(t):
    a = t.ones((3, 100, 100))
    a[:, :, t.tensor(PERM)] = t.arange(100.0)
    return a


def _mixed(t):
    a = t.zeros((4, 100, 100))
    a[1, t.tensor(PERM), 2:] = t.arange(98.0)
    return a


def _repeated(t):
    a = t.zeros((6, 3))
    a[t.tensor([1, 4, 1, 0])] = t.arange(12.0).reshape(4, 3)
    return a


def _grad(t):
    v = t.arange(100.0, requires_grad=True)
    a = t.zeros((100, 100))
    a[t.tensor(PERM), 7] = v * 2
    (a * t.arange(10000.0).reshape(100, 100)).sum().backward()
    return v.grad


def _strided_view_copy(t):
    # (a write through a view's integer index: 200,000 places, which compat's search for
    # each place's last write could not hold in memory)
    src = t.arange(200000.0).reshape(5, 40000)
    v = t.zeros((5, 40000, 2, 2))[..., 0].select(-1, -1)
    v.copy_(src)
    return v._base if hasattr(v, "_base") and v._base is not None else v


@pytest.mark.parametrize(
    "case", [_rows, _cols, _mixed, _repeated, _grad, _strided_view_copy], ids=lambda f: f.__name__
)
def test_setitem_like_torch(real_torch, case):
    ours, theirs = case(ctorch), case(real_torch)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_many_places_are_not_quadratic():
    _rows(ctorch)  # (compiles)
    start = time.perf_counter()
    _rows(ctorch).sum().item()
    assert time.perf_counter() - start < 2.0  # was 20-60 s on two shared cores
