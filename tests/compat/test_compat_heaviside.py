"""``torch.heaviside`` against PyTorch: values (NaN gives 0, unlike ``numpy.heaviside``,
so compat writes it rather than generating it from funcgrad's ``heaviside`` row), dtypes
kept, and PyTorch's refusals (operands of two dtypes, complex tensors, a number for
``values``)."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch


@pytest.mark.parametrize(
    "x, v",
    [
        ([np.nan, -0.0, 0.0, -2.0, 3.0], [0.5]),
        ([-1, 0, 2], [5]),
        ([True, False], [False]),
    ],
)
def test_heaviside_matches_pytorch(real_torch, x, v):
    want = real_torch.heaviside(real_torch.tensor(x), real_torch.tensor(v))
    got = ctorch.heaviside(ctorch.tensor(x), ctorch.tensor(v))
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(npv(got), want.numpy())
    np.testing.assert_array_equal(npv(ctorch.tensor(x).heaviside(ctorch.tensor(v))), want.numpy())


@pytest.mark.parametrize(
    "x, v",
    [
        ([1, 0], [0.5]),
        ([1j], [1j]),
        ([1.0], 0.5),
    ],
)
def test_heaviside_refuses_as_pytorch(real_torch, x, v):
    def call(lib):
        return lib.heaviside(lib.tensor(x), lib.tensor(v) if isinstance(v, list) else v)

    with pytest.raises(Exception) as want:
        call(real_torch)
    with pytest.raises(type(want.value)) as got:
        call(ctorch)
    assert str(got.value) == str(want.value)
