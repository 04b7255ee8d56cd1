"""The graph of a leaf's gradient under ``create_graph``: PyTorch's AccumulateGrad copies
the first gradient (a ``CopyBackwards`` node with no edge for the destination) and adds
later ones out of place; ``once_differentiable``'s ``Error`` node has an edge per output
of the backward, ``None`` for a ``None`` output. Each scenario runs on compat and on
real PyTorch (the ``lib`` fixture)."""

from __future__ import annotations

import warnings

import pytest


def _desc(fn, by_type=False, depth=9):
    """PyTorch's ``graph_desc`` (its test's helper), ``depth`` levels deep."""
    if fn is None:
        return "None"
    name = type(fn).__name__ if by_type else fn.name().rsplit("::", 1)[-1]
    if depth == 0:
        return name
    inner = ", ".join(_desc(n, by_type, depth - 1) for n, _ in fn.next_functions)
    return f"{name}({inner})"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Using backward\\(\\) with create_graph=True")
        yield


def test_first_gradient_is_copied(lib):
    z = lib.randn(3, requires_grad=True)
    (z * z).sum().backward(create_graph=True)
    assert _desc(z.grad.grad_fn, depth=1) == "CopyBackwards(None, AddBackward0)"
    assert lib.allclose(z.grad, 2 * z.detach())
    (z * z).sum().backward(create_graph=True)
    assert _desc(z.grad.grad_fn, depth=1) == "AddBackward0(CopyBackwards, AddBackward0)"
    (g,) = lib.autograd.grad(z.grad.sum(), z)
    assert lib.allclose(g, lib.full((3,), 4.0))


def test_grad_is_not_copied(lib):
    w = lib.randn(3, requires_grad=True)
    (g,) = lib.autograd.grad((w * w).sum(), w, create_graph=True)
    assert _desc(g.grad_fn).startswith("AddBackward0(")


def test_once_differentiable_graph(lib):
    class MyFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, tensor1, pyscalar, tensor2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, grad_output):
            t1, t2 = ctx.saved_tensors
            return (
                grad_output + grad_output * t2,
                None,
                grad_output * ctx.pyscalar + grad_output * t1,
            )

    x = lib.randn(5, 5, requires_grad=True)
    y = lib.randn(5, 5, requires_grad=True)
    MyFunction.apply(x, 2, y).sum().backward(lib.ones((), requires_grad=True), create_graph=True)
    want = "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"
    assert _desc(x.grad.grad_fn, by_type=True) == want
    assert _desc(y.grad.grad_fn, by_type=True) == want
    assert lib.allclose(x.grad, y.detach() + 1) and lib.allclose(y.grad, x.detach() + 2)
    with pytest.raises(RuntimeError, match="trying to differentiate twice"):
        x.grad.sum().backward()
