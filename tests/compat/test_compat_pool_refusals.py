"""Pooling inputs PyTorch refuses, refused alike, against real PyTorch 2.13: max pooling
of an input with an empty non-batch dimension or the wrong rank (each kernel's own
message, 1-D with indices reported as the 2-D kernel sees it), adaptive pooling of
integer and bool inputs (an average to one cell is ``mean``'s message), and an adaptive
output too large to count (compat tried to build its windows and ran out of memory)."""

from __future__ import annotations

import pytest

import compat.torch as torch

SHAPES = [(0, 4, 4), (1, 0, 4, 4), (2, 3, 0, 4), (0, 3, 4), (2, 0, 4), (0, 4, 4, 4),
          (1, 0, 4, 4, 4), (0, 1, 4, 4), (0, 2, 0, 4), (3, 0), (0, 3)]  # fmt: skip


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return "ok", tuple((r[0] if isinstance(r, tuple) else r).shape)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("indices", [False, True])
def test_max_pool_empty_or_wrong_rank_as_pytorch(real_torch, shape, nd, indices):
    def run(lib):
        fn = getattr(lib.nn.functional, f"max_pool{nd}d")
        return _outcome(lambda: fn(lib.ones(shape), 2, return_indices=indices))

    assert run(torch) == run(real_torch)


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("size", [1, 2])
def test_adaptive_pool_of_integers_as_pytorch(real_torch, dtype, kind, nd, size):
    def run(lib):
        fn = getattr(lib.nn.functional, f"adaptive_{kind}_pool{nd}d")
        x = lib.ones((2,) * (nd + 2)).to(getattr(lib, dtype))
        return _outcome(lambda: fn(x, size))

    mine, theirs = run(torch), run(real_torch)
    assert mine == theirs
    assert mine[0] in ("RuntimeError", "NotImplementedError")


@pytest.mark.parametrize(("kind", "nd"), [("max", 1), ("max", 3), ("avg", 1), ("avg", 3)])
def test_adaptive_output_too_large_refused(real_torch, kind, nd):
    def run(lib):
        fn = getattr(lib.nn.functional, f"adaptive_{kind}_pool{nd}d")
        return _outcome(lambda: fn(lib.ones((2,) * (nd + 1)), 0x3FFFFFFFFFFFFFFF))

    mine = run(torch)
    assert mine == run(real_torch)
    assert mine[0] == "RuntimeError"
