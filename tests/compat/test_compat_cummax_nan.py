"""``cummax``/``cummin`` carry NaN as PyTorch's: from the first NaN on the running value is
NaN and its index the latest NaN (compat skipped NaN, as JAX's cumulative max does), and
``logcumsumexp``'s ``out=`` of another dtype is PyTorch's error (compat cast into it)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_SPECIAL = st.sampled_from([0.0, 1.0, -1.0, 1.5, np.inf, -np.inf, np.nan])


@settings(max_examples=60, deadline=None)
@given(
    vals=st.lists(_SPECIAL, min_size=1, max_size=24),
    rows=st.sampled_from([1, 2, 3]),
    op=st.sampled_from(["cummax", "cummin"]),
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16"]),
    dim=st.integers(0, 1),
)
def test_nan_and_infinities_as_pytorch(vals, rows, op, dtype, dim):
    x = np.array(vals * rows, np.float64).reshape(rows, len(vals))
    got = getattr(ctorch, op)(ctorch.tensor(x, dtype=getattr(ctorch, dtype)), dim)
    want = getattr(torch, op)(torch.tensor(x, dtype=getattr(torch, dtype)), dim)
    np.testing.assert_array_equal(got.values.float().numpy(), want.values.float().numpy())
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_gradient_goes_to_the_nan(op):
    grads = []
    for lib in (ctorch, torch):
        x = lib.tensor([4.0, float("nan"), 1.0, float("nan"), 5.0], requires_grad=True)
        getattr(lib, op)(x, 0).values.sum().backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize(
    ("src", "out"), [("float64", "float32"), ("float32", "float64"), ("float32", "int64")]
)
def test_logcumsumexp_out_dtype_refused(src, out):
    msgs = []
    for lib in (ctorch, torch):
        b = lib.ones(5, 2, dtype=getattr(lib, src))
        with pytest.raises(RuntimeError) as info:
            lib.logcumsumexp(b, 0, out=lib.zeros(5, 2, dtype=getattr(lib, out)))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_logcumsumexp_out_same_dtype_written():
    x = np.random.default_rng(0).standard_normal((5, 2))
    out = ctorch.zeros(5, 2, dtype=ctorch.float64)
    ctorch.logcumsumexp(ctorch.tensor(x), 0, out=out)
    want = torch.logcumsumexp(torch.tensor(x), 0)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [100, 1, -2])
def test_dim_of_a_0d_tensor_refused(op, dim):
    msgs = []
    for lib in (ctorch, torch):
        with pytest.raises(IndexError) as info:
            getattr(lib, op)(lib.tensor(1.0), dim)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
