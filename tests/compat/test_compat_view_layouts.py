"""Layouts and aliasing of view ops against PyTorch 2.13: ``expand``'s strides (PyTorch's
``inferExpandGeometry``), ``unfold`` as a view of its input, ``ravel`` of a
non-contiguous input, ``swapaxes``'s NumPy keyword names."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import check, error_of


@st.composite
def _expansions(draw):
    """A shape, whether to transpose it (first and last dims), and an expand target for
    the result (new leading dims of any size, size-1 dims grown or kept, ``-1``)."""
    shape = draw(st.lists(st.integers(0, 3), min_size=0, max_size=3))
    transposed = draw(st.booleans()) and len(shape) >= 2
    seen = list(shape)
    if transposed:
        seen[0], seen[-1] = seen[-1], seen[0]
    target = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]
    for n in seen:
        target.append(draw(st.sampled_from([n, -1] + ([2, 3] if n == 1 else []))))
    return shape, transposed, target


@settings(max_examples=60, deadline=None)
@given(_expansions())
def test_expand_strides_match_pytorch(case):
    shape, transposed, target = case

    def scenario(torch, rec):
        x = torch.arange(float(math.prod(shape))).reshape(shape)
        if transposed:
            x = x.transpose(0, -1)
        e = x.expand(target)
        rec(list(e.shape), list(e.stride()), e.is_contiguous(), e)

    check(scenario)


def test_expand_strides_of_new_unit_dims():
    # the case test_view_ops.test_expand checks: expand(1, 1, 5) of a 1-D tensor has the
    # strides unsqueeze(0).unsqueeze(1) gives (PyTorch: (5, 5, 1), compat gave (0, 0, 1))
    def scenario(torch, rec):
        t = torch.rand(5)
        rec(t.expand(1, 1, 5).stride(), t.unsqueeze(0).unsqueeze(1).stride())
        rec(torch.tensor(1.0).expand(1, 1).stride(), torch.zeros(2, 1).expand(1, 1, 2, 5).stride())
        rec(torch.zeros(0, 3).expand(1, 0, 3).stride())

    check(scenario)


def test_unfold_is_a_view_of_its_input():
    def scenario(torch, rec):
        t = torch.arange(10.0)
        v = t.unfold(0, 3, 2)
        rec(v._is_view(), v._base is t, v.stride(), v.storage_offset(), v.is_contiguous())
        rec(v.untyped_storage().data_ptr() == t.untyped_storage().data_ptr())
        v[1, 0] = 100  # writes reach the input and the overlapping window
        rec(t, v)
        t[4] = -1  # and back
        rec(v)
        w = t[1:].view(3, 3).unfold(1, 2, 1)  # a view of a view: layout from its parent
        rec(w.shape, w.stride(), w.storage_offset(), w._base is t)
        w[2, 1, 1] = -5
        rec(t, w.contiguous())

    check(scenario)


def test_unfold_view_in_place_gradient():
    # non-overlapping windows modified in place: the gradient reaches the input through
    # the write (CopySlices), as PyTorch's
    def scenario(torch, rec):
        x = torch.linspace(-1, 1, 24).view(4, 6).requires_grad_()
        y = x * 1
        u = y.unfold(1, 2, 3)
        u.mul_(torch.arange(8.0).view(4, 2, 1))
        rec(y.grad_fn.name())
        (y * y).sum().backward()
        rec(x.grad)

    check(scenario)


def test_unfold_node_and_values():
    def scenario(torch, rec):
        x = torch.linspace(-2, 2, 21, dtype=torch.float64).view(3, 7).requires_grad_()
        for args in ((1, 3, 2), (0, 2, 1), (-1, 7, 7), (1, 1, 3)):
            u = x.unfold(*args)
            rec(u.grad_fn.name(), u.shape, u.stride())
            (g,) = torch.autograd.grad((u * u).sum(), x)
            rec(u, g)
        rec(error_of(lambda: x.unfold(1, 8, 1)), error_of(lambda: x.unfold(1, 2, 0)))

    check(scenario)


def test_ravel_of_a_non_contiguous_input_is_a_contiguous_copy():
    def scenario(torch, rec):
        a = torch.ones(10)[::2]
        f = a.ravel()
        rec(f.shape, f.is_contiguous(), f._base is a, f._is_view())
        b = torch.arange(12.0).view(3, 4).requires_grad_()
        for src in (b, b.t(), b[:, ::2]):
            r = src.ravel()
            rec(r.is_contiguous(), r.grad_fn.name(), r._base is src, r)
        rec(torch.tensor(3.0).ravel().shape)

    check(scenario)


def test_swapaxes_takes_numpy_names():
    def scenario(torch, rec):
        x = torch.arange(24.0).view(2, 3, 4)
        rec(torch.swapaxes(x, axis0=0, axis1=2), x.swapaxes(axis0=-1, axis1=1))
        rec(torch.swapdims(x, dim0=0, dim1=1), x.swapaxes(0, 1).grad_fn)
        y = torch.zeros(2, 3)
        y.swapaxes_(axis0=0, axis1=1)
        rec(y.shape)
        rec(error_of(lambda: torch.transpose(x, axis0=0, axis1=1))[0])

    check(scenario)
