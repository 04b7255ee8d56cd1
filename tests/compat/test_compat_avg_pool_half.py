"""Average pooling of float16/bfloat16 tensors as PyTorch's CPU kernels compute it: the
window summed in float32 and the average rounded once (a sum in the half type lost the
small values: ``adaptive_avg_pool2d`` to one cell was 2% off). Values bit for bit,
gradients to a half-type ulp, against real PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ct

CASES = {
    "adaptive_to_one": lambda L, t: L.nn.functional.adaptive_avg_pool2d(t, 1),
    "adaptive_4x5": lambda L, t: L.nn.functional.adaptive_avg_pool2d(t, (4, 5)),
    "avg_2": lambda L, t: L.nn.functional.avg_pool2d(t, 2),
    "avg_3_pad_excluded": lambda L, t: L.nn.functional.avg_pool2d(
        t, 3, 2, 1, count_include_pad=False
    ),
    "avg_1d": lambda L, t: L.nn.functional.avg_pool1d(t.flatten(2), 4),
    "module": lambda L, t: L.nn.AdaptiveAvgPool2d(1)(t),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", list(CASES))
def test_half_types_average_in_float32(real_torch, dtype, case):
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    got = []
    for lib in (ct, real_torch):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        y = CASES[case](lib, t)
        y.float().sum().backward()
        got.append((str(y.dtype), y.detach().float().numpy(), t.grad.float().numpy()))
    (cd, cy, cg), (td, ty, tg) = got
    assert cd == td
    np.testing.assert_array_equal(cy, ty)
    np.testing.assert_allclose(cg, tg, rtol=1e-2, atol=1e-3)
