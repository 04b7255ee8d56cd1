"""compat's ``embedding_bag(include_last_offset=True)`` ends the last bag where PyTorch's
kernel in use ends it (at the last offset for sum/mean of float32/float16/bfloat16 rows
without ``padding_idx``, at the end of the input otherwise), and ``embedding(max_norm=)``
leaves a dual weight's tangent alone (the rescaling is not differentiated), against real
PyTorch 2.13: values and gradients compared."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch


def _bag(lib, dtype, mode, offsets, padding_idx):
    lib.manual_seed(0)
    w = lib.randn(10, 3, dtype=getattr(lib, dtype)).requires_grad_()
    out = lib.nn.functional.embedding_bag(
        lib.tensor([0, 1, 2, 3]), w, lib.tensor(offsets), mode=mode,
        include_last_offset=True, padding_idx=padding_idx,
    )  # fmt: skip
    out.sum().backward()
    return npv(out.detach()), npv(w.grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets", [[0, 3, 3], [0, 1, 2], [0, 3, 4], [0, 2, 2, 2], [0, 0, 4]])
@pytest.mark.parametrize("padding_idx", [None, 2, 8])
def test_include_last_offset(real_torch, dtype, mode, offsets, padding_idx):
    ours = _bag(torch, dtype, mode, offsets, padding_idx)
    ref = _bag(real_torch, dtype, mode, offsets, padding_idx)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-5, atol=1e-6)
    fast = dtype == "float32" and mode != "max" and padding_idx is None
    if not fast:
        # (PyTorch's index-select kernel's backward runs the last bag to the end of the
        # input although its forward stopped at the last offset: not followed by compat)
        np.testing.assert_allclose(ours[1], ref[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_include_last_offset_half_forward(real_torch, dtype):
    outs = []
    for lib in (torch, real_torch):
        w = lib.arange(30, dtype=getattr(lib, dtype)).reshape(10, 3)
        out = lib.nn.functional.embedding_bag(
            lib.tensor([0, 1, 2, 3]), w, lib.tensor([0, 3, 3]), mode="sum",
            include_last_offset=True,
        )  # fmt: skip
        outs.append(npv(out.float()))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_embedding_max_norm_forward_ad_keeps_tangent(real_torch):
    res = []
    for lib in (torch, real_torch):
        lib.manual_seed(0)
        weight = lib.randn(4, 4) * 2
        tangent = lib.arange(16.0).reshape(4, 4)
        inp = lib.tensor([[0, 1], [2, 2]])
        fwd = lib.autograd.forward_ad
        # (PyTorch's first forward-AD use warns that ``torch.jit.script`` is deprecated)
        with warnings.catch_warnings(), fwd.dual_level():
            warnings.simplefilter("ignore", DeprecationWarning)
            dual = fwd.make_dual(weight, tangent)
            out = lib.nn.functional.embedding(inp, dual, max_norm=1.0)
            primal, tan = fwd.unpack_dual(out)
        res.append((npv(primal), npv(tan), npv(weight)))
    for a, b in zip(res[0], res[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
