"""``div(rounding_mode='trunc')`` of float16/bfloat16 bit for bit against real PyTorch
(PyTorch's ``test_div_rounding_modes``): its vectorised CPU kernel rounds the float32
quotient to the dtype before truncating, its scalar-divisor kernel (a Python number or a
one-element divisor) truncates first."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize(("n_a", "n_b"), [(500, 500), (1, 500), (500, 1), (1, 1), (7, 7), (33, 33)])
def test_div_trunc_matches_pytorch(dtype, n_a, n_b, real_torch):
    rng = np.random.default_rng(n_a + n_b)
    a = rng.uniform(-3000, 3000, n_a).astype(np.float32)
    b = rng.uniform(-10, 10, n_b).astype(np.float32)
    b[np.abs(b) < 0.1] = 0.1
    got = []
    for lib in (real_torch, ctorch):
        x, y = (lib.tensor(v).to(getattr(lib, dtype)) for v in (a, b))
        got.append(lib.divide(x, y, rounding_mode="trunc").view(lib.int16).numpy())
    np.testing.assert_array_equal(got[1], got[0])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_div_trunc_by_a_number_matches_pytorch(dtype, real_torch):
    a = np.random.default_rng(3).uniform(-3000, 3000, 300).astype(np.float32)
    got = []
    for lib in (real_torch, ctorch):
        x = lib.tensor(a).to(getattr(lib, dtype))
        got.append(lib.divide(x, 0.37, rounding_mode="trunc").view(lib.int16).numpy())
    np.testing.assert_array_equal(got[1], got[0])
