"""A custom ``autograd.Function`` modifying a view in place (``mark_dirty``): the view's
root takes the write and its gradient goes through the Function, against real PyTorch."""

from __future__ import annotations

import numpy as np
from torch_oracle import check, error_of


def _inplace_mul(lib):
    class InplaceFunc(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, other):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None

    return InplaceFunc


def test_dirty_view_output_reaches_the_root():
    def scenario(lib, rec):
        a = lib.tensor([1.0, 3.0], requires_grad=True)
        c = a.clone()
        v = c[:1]
        b = lib.tensor(1.0, requires_grad=True)
        out = _inplace_mul(lib).apply(v, b)
        rec(out.grad_fn.name(), c.grad_fn.name(), c, out)
        (c * lib.tensor([5.0, 7.0])).sum().backward()
        rec(a.grad, b.grad)

    check(scenario)


def test_dirty_views_of_one_root_gradients():
    def scenario(lib, rec):
        a = lib.tensor(np.arange(16.0).reshape(4, 4), dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)

        class PyAdd(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                x.add_(y)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad, grad * 3

        x = a.clone()
        PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        (x * lib.tensor(np.arange(16.0).reshape(4, 4), dtype=lib.float64)).sum().backward()
        rec(x, a.grad, b.grad)

    check(scenario)


def test_dirty_view_with_several_outputs_is_refused():
    def scenario(lib, rec):
        class MyBadAdder(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gab):
                return ga + gab, ga + gab

        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        rec(error_of(lambda: MyBadAdder.apply(a.clone().view_as(a), b)))
        c, d = MyBadAdder.apply(a.clone(), b)
        (c * d).sum().backward()
        rec(a.grad, b.grad)

    check(scenario)
