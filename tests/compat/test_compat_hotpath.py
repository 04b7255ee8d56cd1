"""The per-op hot path (issue 33): Python numbers passed to the host tier as they are,
the generated host plan's scalar conversion, the tier modes; values against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import compat.lazy as lazy
import compat.torch as ct
from funcgrad._compat_contract import LazyArray
from funcgrad.core import tiers

CASES = [
    ("float32", 1.0001),
    ("float32", 1e300),  # overflows float32: inf, silently (XLA's conversion)
    ("float16", 70000.0),
    ("bfloat16", 1.0001),
    ("float64", 0.1),
    ("float32", 3),  # an int scalar converted to float32
    ("int32", 2.5),  # promotes to the default float
    ("int64", 7),
]


@pytest.mark.parametrize("mode", ["tiered", "host", "compiled"])
@pytest.mark.parametrize(("dtype", "scalar"), CASES)
def test_scalar_binary_matches_torch(mode: str, dtype: str, scalar: float) -> None:
    ref = torch.tensor(1.5, dtype=getattr(torch, dtype)) * scalar
    with tiers.eager_tier(mode), warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ct.tensor(1.5, dtype=getattr(ct, dtype))
        for _ in range(6):  # past the host plan's generated form
            y = x * scalar
            z = scalar * x
    for out in (y, z):
        assert str(out.dtype) == str(ref.dtype)
        np.testing.assert_array_equal(
            np.asarray(out.float().numpy(), np.float64), ref.float().numpy().astype(np.float64)
        )


@pytest.mark.parametrize("mode", ["tiered", "host", "compiled"])
def test_recorded_scalar_chain_grad(mode: str) -> None:
    with tiers.eager_tier(mode):
        x = ct.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(20):
            y = y * 1.0001
            y = y + 0.5
        y.backward()
    tx = torch.tensor(1.0, requires_grad=True)
    ty = tx
    for _ in range(20):
        ty = ty * 1.0001
        ty = ty + 0.5
    ty.backward()
    np.testing.assert_allclose(y.item(), ty.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.item(), tx.grad.item(), rtol=1e-6)
    assert y.grad_fn.name() == ty.grad_fn.name()


def test_scalar_under_lazy_and_func() -> None:
    x = ct.tensor([1.0, 2.0])
    with lazy.enabled(True):
        y = x * 2.0 + 1.0
        assert type(y._st.a) is LazyArray  # deferred: its scalars are device scalars
    np.testing.assert_array_equal(y.numpy(), [3.0, 5.0])
    g = ct.func.grad(lambda t: (t * 3.0).sum())(x)
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])
