"""torch.norm and torch.linalg.vector_norm against PyTorch 2.13 for every kind of order
(inf, -inf, 1, 2, fractional, negative), over all elements and one dim, on tensors with
zero entries and zero rows: values and gradients (PyTorch's are 0 at zeros, where the
plain power formula gives NaN), complex inputs (a real norm) and dtype=."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ct

ORDERS = [float("-inf"), 1, 2, 3, 0.5, -1, float("inf")]
VALUES = [[[1.0, -2.0, 0.0], [0.0, 3.0, 4.0]], [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]]


def _run(lib, fn, values, p, dim):
    x = lib.tensor(values, requires_grad=True)
    y = lib.norm(x, p=p, dim=dim) if fn == "norm" else lib.linalg.vector_norm(x, ord=p, dim=dim)
    y.sum().backward()
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("fn", ["norm", "vector_norm"])
@pytest.mark.parametrize("p", ORDERS)
def test_values_and_gradients_match_pytorch(fn, p, real_torch):
    for values in VALUES:
        for dim in (None, 1):
            got, want = _run(ct, fn, values, p, dim), _run(real_torch, fn, values, p, dim)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{values} {dim}")


def test_complex_zero_vector_and_dtype(real_torch):
    z = [1 + 1j, 2 - 1j]
    assert ct.norm(ct.tensor(z)).dtype == ct.float32
    want = float(real_torch.norm(real_torch.tensor(z)))
    np.testing.assert_allclose(float(ct.norm(ct.tensor(z))), want, rtol=1e-6)
    x = ct.zeros(3, requires_grad=True)
    ct.norm(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
    h = ct.tensor([1.0, 2.0], dtype=ct.float16)
    assert ct.norm(h).dtype == ct.float16 and ct.norm(h, dtype=ct.float32).dtype == ct.float32
