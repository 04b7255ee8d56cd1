"""In-place view ops, ``as_strided``, ``set_`` and ``resize_`` against real PyTorch: values,
layout (shape, strides, offset), aliasing with views made before and after, version
counters, graph node names, gradients and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import check, error_of


def _layout(t):
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.is_contiguous())


def _node(t):
    return None if t.grad_fn is None else t.grad_fn.name()


X = np.arange(24, dtype=np.float32).reshape(2, 1, 3, 4) / 7


@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.transpose_(0, 2),
        lambda t: t.swapdims_(1, -1),
        lambda t: t.swapaxes_(0, 3),
        lambda t: t.squeeze_(),
        lambda t: t.squeeze_(1),
        lambda t: t.squeeze_((0, 1)),
        lambda t: t.unsqueeze_(-1),
        lambda t: t.unsqueeze_(2).transpose_(0, 4),
        lambda t: t.view(-1, 4).t_(),
        lambda t: (
            t.as_strided_((4, 6), (1, 4)) if t._base is None else t.as_strided_((2, 3), (1, 4))
        ),
    ],
)
@pytest.mark.parametrize("through_view", [False, True])
def test_inplace_view_ops_values_layout_nodes_and_grads(op, through_view):
    def scenario(torch, rec):
        x = torch.tensor(X, requires_grad=True)
        b = x.clone()
        old = b.view(-1)  # a view made before: keeps showing b's memory
        t = b[1:] if through_view else b
        v0 = t._version
        r = op(t)
        rec(r is t or through_view, _layout(t), t._version - v0, t._base is None)
        rec(t, _node(t) if not through_view else None)
        after = t.reshape(-1) if t.is_contiguous() else t[..., :1]
        old.mul_(2)  # writes through to b, and so to t and to views made after
        rec(t, after, b)
        w = torch.tensor(np.linspace(-1, 1, t.numel(), dtype=np.float32)).reshape(t.shape)
        ((t * w).sum() + b.sum()).backward()
        rec(x.grad)

    check(scenario)


def test_inplace_view_op_on_a_tensor_kept_by_an_old_view():
    def scenario(torch, rec):
        x = torch.tensor(X[0, 0], requires_grad=True)
        b = x * 1
        v = b[0]
        b.t_()
        v.add_(10)  # v still shows row 0 of b's memory: column 0 of b now
        rec(b, v, _layout(b), _layout(v), v._base is b)
        c = b[1]  # a view made after: of b as it is laid out now
        c.mul_(3)
        rec(b, c, _layout(c), c._base is b)
        (b * torch.arange(12.0).reshape(4, 3)).sum().backward()
        rec(x.grad)

    check(scenario)


@pytest.mark.parametrize(
    "fn",
    [
        lambda torch: torch.randn(2, 3, requires_grad=True).t_(),
        lambda torch: torch.randn(2, 3, requires_grad=True)[0].unsqueeze_(0),
        lambda torch: torch.randn(2, 3, requires_grad=True).clone().transpose_(2, 0),
        lambda torch: torch.randn(2, 3, 4).t_(),
        lambda torch: torch.randn(2, 3, requires_grad=True).clone().unbind(0)[0].unsqueeze_(0),
        lambda torch: torch.arange(6.0).as_strided_((3, 3), (2, 1), 1),
        lambda torch: torch.arange(6.0).as_strided((2,), (1, 1)),
    ],
)
def test_inplace_view_op_errors(fn):
    def scenario(torch, rec):
        rec(error_of(lambda: fn(torch)))

    check(scenario)


def test_inplace_view_ops_on_inference_and_no_grad_views():
    def scenario(torch, rec):
        with torch.inference_mode():
            a = torch.ones(2, 3)
        rec(error_of(lambda: a.t_()))
        x = torch.ones(2, 3, requires_grad=True)
        with torch.no_grad():
            v = x[0]
            x.t_()  # a leaf may change in place under no_grad
        rec(error_of(lambda: v.unsqueeze_(0)), _layout(x), x.is_leaf, x.requires_grad)

    check(scenario)


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    st.lists(st.integers(0, 4), min_size=3, max_size=3),
    st.integers(2, 5),
)
def test_as_strided_values_and_gradient(size, strides, offset):
    size = tuple(size)
    stride = tuple(strides[: len(size)])

    def scenario(torch, rec):
        x = torch.tensor(np.arange(40, dtype=np.float64) / 3, requires_grad=True)
        b = x * 1
        base = b[2:].view(2, 19)  # (PyTorch's gradient drops memory outside base's)
        r = base.as_strided(size, stride, offset)
        rec(r, _layout(r), _node(r))
        (r * r).sum().backward()
        rec(x.grad)

    check(scenario)


def test_set_semantics():
    def scenario(torch, rec):
        y = torch.arange(6.0)
        a = torch.zeros(3)
        old = a[1:]
        rec(a.set_(y) is a, a, _layout(a), a._base is None, a._version, y._version)
        rec(a.is_set_to(y), y.is_set_to(a), a.is_set_to(y[:]), old.is_set_to(y))
        a.add_(1)  # a shares y's memory; old keeps a's old memory
        rec(y, old, a._version, y._version)
        a.set_(y, 1, (2, 2), (1, 2))
        rec(a, _layout(a))
        a.set_(y.untyped_storage())
        rec(a, _layout(a))
        a.set_(y[1:])
        rec(a, _layout(a), a._base is None)
        a.set_()
        rec(a, tuple(a.shape))
        rec(error_of(lambda: torch.zeros(2, dtype=torch.int64).set_(y)))
        rec(error_of(lambda: torch.zeros(2, requires_grad=True).set_(y)))
        g = torch.zeros(2, requires_grad=True).clone().set_(y)
        rec(g.requires_grad, _node(g))
        rec(error_of(lambda: g.sum().backward())[0])

    check(scenario)


def test_resize_semantics():
    def scenario(torch, rec):
        a = torch.arange(6.0)
        v = a[:3]
        a.resize_(2)
        a.add_(10)
        # (clones: PyTorch's storage stops being resizable once shared with NumPy)
        rec(a.clone(), v.clone(), _layout(a), a._base is None)
        a.resize_(2, 2)
        rec(a.clone(), _layout(a), v.clone())
        a.resize_(4, 3)  # grows: the first 6 elements kept
        rec(a[:2], tuple(a.shape), _layout(a))
        b = torch.arange(6.0)[1:]
        b.resize_(2)
        rec(b, _layout(b), b._base is not None)
        t = torch.randn(2, 3).t()
        t.resize_(3, 2)  # same shape: layout unchanged
        rec(_layout(t))
        c = torch.arange(6.0)
        c.resize_as_(torch.zeros(3, 2, dtype=torch.int32))
        rec(c, str(c.dtype))
        x = torch.ones(3, requires_grad=True)
        rec(error_of(lambda: x.resize_(2)), error_of(lambda: x.clone().resize_(3)))
        rec(x.detach().resize_(2, 2).shape)
        rec(error_of(lambda: torch.arange(4.0).resize_(2, 2, memory_format=torch.channels_last)))
        with torch.inference_mode():
            i = torch.arange(6.0)
        rec(error_of(lambda: i.resize_(2, 3)))

    check(scenario)


@settings(max_examples=15, deadline=None)
@given(st.permutations([0, 1, 2]), st.sampled_from([(2, 3, 4), (1, 3, 2), (2, 1, 1)]))
def test_grad_of_a_strided_leaf_has_the_leafs_layout(perm, shape):
    def scenario(torch, rec):
        base = torch.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
        for leaf in (base.permute(*perm), base.permute(*perm)[:, ::2], base.expand(2, *shape)):
            leaf.requires_grad_()
            w = torch.tensor(np.linspace(-1, 2, leaf.numel(), dtype=np.float32))
            for _ in range(2):  # stored, then accumulated in place
                (leaf * w.reshape(leaf.shape)).sum().backward()
                g = leaf.grad
                rec(g, tuple(g.stride()), g._base is None, g.is_contiguous())
            g.mul_(2)
            rec(leaf.grad)

    check(scenario)
