"""Adaptive pooling to an empty output (an ``output_size`` holding 0) as PyTorch 2.13's: the
empty result (max pooling's indices too), and a backward through it raising PyTorch's
backward-kernel error (1-D pooling in its 2-D kernel's words); an ``output_size`` of the
wrong length refused in PyTorch's words."""

from __future__ import annotations

import pytest

import compat.torch as torch

_CASES = [
    ((1, 64, 10, 9), name, size)
    for name in ("adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d",
                 "adaptive_max_pool3d")
    for size in (0, (0, 2), (2, 0, 1))
] + [
    (shape, name, size)
    for shape in ((1, 64), (2, 3, 5))
    for name in ("adaptive_avg_pool1d", "adaptive_max_pool1d")
    for size in (0, (0,), (0, 2))
] + [
    ((2, 3, 4, 5), name, size)
    for name in ("adaptive_avg_pool2d", "adaptive_max_pool2d")
    for size in ((0, 3), (3, 0), (2, 0, 1))
]  # fmt: skip


def _outcome(lib, shape, name, size):
    x = lib.ones(*shape, requires_grad=True)
    try:
        out = getattr(lib.nn.functional, name)(x, size)
    except RuntimeError as e:
        return "forward", type(e).__name__, str(e)
    out = out[0] if isinstance(out, tuple) else out
    try:
        out.sum().backward()
    except RuntimeError as e:
        return "backward", tuple(out.shape), str(e)
    return "no error", tuple(out.shape), x.grad.sum().item()


@pytest.mark.parametrize(("shape", "name", "size"), _CASES)
def test_empty_output_as_torch(real_torch, shape, name, size):
    assert _outcome(torch, shape, name, size) == _outcome(real_torch, shape, name, size)


def test_empty_output_indices(real_torch):
    res = []
    for lib in (torch, real_torch):
        out, idx = lib.nn.functional.adaptive_max_pool2d(
            lib.ones(2, 3, 4, 5), (0, 3), return_indices=True
        )
        res.append((tuple(out.shape), tuple(idx.shape), str(idx.dtype), str(out.dtype)))
    assert res[0] == res[1]
