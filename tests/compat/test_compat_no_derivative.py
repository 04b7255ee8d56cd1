"""Ops whose derivative PyTorch does not implement: the in-place inverse hyperbolic
functions (``acosh_``/``asinh_``/``atanh_``: a ``...Backward1`` node whose backward
raises) and the internal ``unique`` functions (``torch._unique``, ``torch._unique2``,
``torch._VF.unique_dim``: only the values require grad). Each scenario runs on compat
and on real PyTorch (the ``lib`` fixture)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(("op", "shift"), [("acosh", 1.5), ("asinh", 0.0), ("atanh", 0.0)])
def test_inplace_inverse_hyperbolic_has_no_derivative(lib, op, shift):
    a = lib.tensor([0.2, 0.4], requires_grad=True)
    b = a.clone() * 0.5 + shift
    getattr(b, op + "_")()
    assert b.grad_fn.name() == op.capitalize() + "Backward1"
    assert b.requires_grad and not b.is_leaf
    expected = getattr(lib, op)(a.detach() * 0.5 + shift)
    assert lib.allclose(b.detach(), expected)
    with pytest.raises(NotImplementedError, match=f"inplace version of {op}' is not implemented"):
        b.sum().backward()
    y = getattr(lib, op + "_")(a.clone() * 0.5 + shift).sum()
    with pytest.raises(NotImplementedError, match=r"the derivative for .* is not implemented"):
        y.backward()


def test_inplace_inverse_hyperbolic_without_grad(lib):
    b = lib.tensor([2.0, 3.0])
    b.acosh_()
    assert b.grad_fn is None and lib.allclose(b, lib.acosh(lib.tensor([2.0, 3.0])))
    a = lib.tensor([2.0], requires_grad=True)
    with lib.no_grad():
        c = a.clone()
        c.acosh_()
    assert not c.requires_grad
    (a.clone() * 2).acos().sum().backward()  # the out-of-place forms differentiate
    assert a.grad is not None


def _as_lists(res):
    return [r.tolist() for r in res]


def test_internal_unique_functions(lib):
    x = lib.tensor([[3.0, 1.0], [3.0, 2.0]], requires_grad=True)
    vals, inv = lib._unique(x, sorted=True, return_inverse=True)
    assert _as_lists((vals, inv)) == [[1.0, 2.0, 3.0], [[2, 0], [2, 1]]]
    assert vals.requires_grad and not inv.requires_grad
    assert vals.grad_fn.name() == "UniqueBackward0"
    vals, inv = lib._unique(x)
    assert inv.tolist() == [] and inv.dtype == lib.int64
    res = lib._unique2(x, sorted=True, return_inverse=False, return_counts=True)
    assert _as_lists(res) == [[1.0, 2.0, 3.0], [], [1, 1, 2]]
    assert res[0].grad_fn.name() == "Unique2Backward0"
    assert not res[1].requires_grad and not res[2].requires_grad
    rows = lib._VF.unique_dim(x, dim=0, sorted=True, return_inverse=False, return_counts=False)
    assert _as_lists(rows) == [[[3.0, 1.0], [3.0, 2.0]], [0, 1], [1, 1]]
    assert rows[0].grad_fn.name() == "UniqueDimBackward0" and not rows[2].requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for '_unique' is not"):
        lib._unique(x)[0].sum().backward()


def test_remainder_of_a_number_first_has_no_derivative(lib):
    """``torch.remainder(2, x)``: PyTorch's node is ``NotImplemented`` and its backward
    raises (``remainder``'s row: ``scalar_input``); ``remainder(x, 2)`` differentiates."""
    x = lib.tensor([1.5, 2.5], requires_grad=True)
    y = lib.remainder(2, x)
    assert y.grad_fn.name() == "torch::autograd::NotImplemented" and y.tolist() == [0.5, 2.0]
    with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
        y.sum().backward()
    lib.remainder(x, 2).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    assert lib.remainder(2, x.detach()).grad_fn is None
