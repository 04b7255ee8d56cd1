"""F.dropout's draws made from the generator directly are PyTorch's seeded masks, and the
same as the three-op path a forward-AD level (or dispatch mode) takes."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_dropout_matches_pytorch_seeded(real_torch, dtype):
    outs = []
    for t in (ctorch, real_torch):
        t.manual_seed(7)
        x = t.ones(3, 50, dtype=getattr(t, dtype))
        outs.append([t.nn.functional.dropout(x, p).numpy() for p in (0.2, 0.6)])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_dropout_under_a_forward_ad_level_draws_the_same():
    x = ctorch.linspace(-1, 1, 40)
    ctorch.manual_seed(3)
    plain = ctorch.nn.functional.dropout(x, 0.5)
    ctorch.manual_seed(3)
    with ctorch.autograd.forward_ad.dual_level():
        dual = ctorch.autograd.forward_ad.make_dual(x, ctorch.ones(40))
        out = ctorch.nn.functional.dropout(dual, 0.5)
        tangent = ctorch.autograd.forward_ad.unpack_dual(out).tangent
    np.testing.assert_array_equal(ctorch.autograd.forward_ad.unpack_dual(out).primal, plain)
    np.testing.assert_array_equal(tangent.numpy(), (plain != 0).numpy() * 2.0)


@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (2, 1, 5)])
def test_size_numel(real_torch, shape):
    assert ctorch.Size(shape).numel() == real_torch.Size(shape).numel()
