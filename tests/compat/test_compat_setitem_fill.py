"""``x[static slices] = value`` with a 0-d value (compat/_core/shape_ops.py's
``_fill_slices``: a ``where`` over per-dimension slice masks instead of a scatter):
values, dtypes, gradients of both operands and node names against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import compat.torch as ct

CASES = [
    ((5,), np.s_[:2], -1),
    ((5,), np.s_[1:4:2], 2.5),
    ((3, 4), np.s_[:, 1:3], 0.0),
    ((3, 4), np.s_[1:], 7),
    ((3, 4), np.s_[...], 1.5),
    ((3, 4), np.s_[:], -2),
    ((2, 3, 4), np.s_[..., ::3], 3.0),
    ((2, 3, 4), np.s_[1:, :, 2:], -0.5),
    ((4,), np.s_[3:1], 9),
    ((3, 4), np.s_[-2:, :-1], 4),
    ((0, 3), np.s_[:, 1:], 1),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize(("shape", "idx", "value"), CASES)
def test_values_match_torch(shape, idx, value, dtype):
    data = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)
    a, b = torch.tensor(data), ct.tensor(data)
    v = bool(value) if dtype == "bool" else value
    a[idx] = v
    b[idx] = v
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("value_grad", [True, False])
@pytest.mark.parametrize(("shape", "idx", "value"), CASES)
def test_grads_and_names_match_torch(shape, idx, value, value_grad):
    data = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    w = np.linspace(1, 2, data.size).reshape(shape)
    res = []
    for lib in (torch, ct):
        x = lib.tensor(data, dtype=lib.float32, requires_grad=True)
        v = lib.tensor(float(value), dtype=lib.float32, requires_grad=value_grad)
        y = x * 2
        y[idx] = v
        (y * lib.tensor(w, dtype=lib.float32)).sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy(), v.grad, y.grad_fn.name()))
    (ty, tx, tv, tname), (cy, cx, cv, cname) = res
    np.testing.assert_allclose(cy, ty, rtol=1e-6)
    np.testing.assert_allclose(cx, tx, rtol=1e-6)
    if value_grad:
        np.testing.assert_allclose(cv.numpy(), tv.numpy(), rtol=1e-5)
    else:
        assert cv is None and tv is None
    assert cname == tname


@pytest.mark.parametrize(
    "write",
    [
        lambda L, y: y.fill_(2.0),
        lambda L, y: y.fill_(L.tensor(2.0)),
        lambda L, y: y.copy_(L.ones(3)),
        lambda L, y: y.__setitem__(Ellipsis, L.ones(3)),
        lambda L, y: y.__setitem__(np.s_[0:2], -1.0),
        lambda L, y: y.__setitem__((), L.tensor(3.0)),
        lambda L, y: y.__setitem__(np.s_[:, 1:], 0.5),
    ],
)
def test_whole_tensor_writes_name_pytorchs_nodes(write):
    """``fill_`` of a number / 0-d tensor (``FillBackward2``/``3``), and an index that is
    every element: ``fill_`` of a 0-d value, ``copy_`` of a tensor, as PyTorch."""
    names = []
    for lib in (torch, ct):
        y = lib.ones(2, 3, requires_grad=True) * 1.0
        write(lib, y)
        names.append(y.grad_fn.name())
    assert names[1] == names[0]


def test_a_python_number_into_an_integer_tensor_truncates_as_torch():
    a, b = torch.zeros(4, dtype=torch.int32), ct.zeros(4, dtype=ct.int32)
    a[1:3] = 2.7
    b[1:3] = 2.7
    np.testing.assert_array_equal(b.numpy(), a.numpy())
