"""PyTorch's ``*_copy`` view ops (``torch.view_copy``, ``diagonal_copy``, ``slice_copy``,
...) against PyTorch 2.13: new contiguous tensors sharing nothing with their input,
their nodes, gradients, ``out=`` and refusals. (The op-table suite checks each row's
samples for values, gradients and ``out=`` too.)"""

from __future__ import annotations

import pytest
from torch_oracle import check, error_of

#: (name, arguments after the input, input shape)
CASES = [
    ("view_copy", ((3, 4),), (2, 6)),
    ("diagonal_copy", (1, 0, 1), (3, 4)),
    ("slice_copy", (1, 1, None, 2), (3, 5)),
    ("select_copy", (0, -1), (3, 4)),
    ("expand_copy", ((2, 3, 4),), (3, 1)),
    ("permute_copy", ((1, 0),), (3, 4)),
    ("transpose_copy", (0, 1), (3, 4)),
    ("t_copy", (), (3, 4)),
    ("unsqueeze_copy", (1,), (3, 4)),
    ("squeeze_copy", (), (1, 3, 1)),
    ("as_strided_copy", ((2, 2), (1, 2), 1), (3, 4)),
    ("alias_copy", (), (3, 4)),
    ("unfold_copy", (1, 2, 1), (3, 4)),
]


@pytest.mark.parametrize(("name", "args", "shape"), CASES, ids=[c[0] for c in CASES])
def test_copy_is_the_view_in_new_memory(name, args, shape):
    def scenario(torch, rec):
        n = 1
        for s in shape:
            n *= s
        x = torch.arange(float(n)).view(shape).requires_grad_()
        base = x * 1
        y = getattr(torch, name)(base, *args)
        rec(y, y.is_contiguous(), y._is_view(), y.grad_fn.name())
        rec(y.untyped_storage().data_ptr() == base.untyped_storage().data_ptr())
        w = torch.arange(float(y.numel())).view(y.shape)
        (g,) = torch.autograd.grad((y * w).sum(), x)
        rec(g)
        with torch.no_grad():
            y.add_(1)  # its own memory: the input does not change
        rec(base)
        out = torch.empty(0)
        r = getattr(torch, name)(base.detach(), *args, out=out)
        rec(r is out, out)

    check(scenario)


def test_view_copy_of_a_non_contiguous_input_and_of_a_dtype():
    def scenario(torch, rec):
        a = torch.arange(6.0).view(2, 3)
        rec(torch.view_copy(a.t(), (6,)), torch.view_copy(a.t(), [3, -1]))
        rec(torch.view_copy(a, torch.int32))
        rec(error_of(lambda: torch.view_copy(a, [4])))

    check(scenario)


def test_slice_copy_bounds_and_refusals():
    def scenario(torch, rec):
        a = torch.arange(12.0).view(3, 4)
        rec(torch.slice_copy(a), torch.slice_copy(a, 1, -2), torch.slice_copy(a, 1, 0, 100, 3))
        rec(torch.slice_copy(a, -1, 3, 1).shape)
        rec(error_of(lambda: torch.slice_copy(a, 1, 0, 3, 0)))
        rec(error_of(lambda: torch.slice_copy(a, 1, 0, 3, -1)))
        rec(torch.ops.aten.slice_copy(a, 0, 0, 2))

    check(scenario)


def test_copies_of_complex_views_and_multi_dim_squeeze():
    def scenario(torch, rec):
        z = torch.tensor([1 + 2j, -3 + 0.5j])
        rec(torch.view_as_real_copy(z), torch.view_as_complex_copy(torch.view_as_real(z)))
        s = torch.zeros(1, 3, 1)
        rec(torch.squeeze_copy(s, 0).shape, torch.squeeze_copy(s, (0, 2)).shape)
        x = torch.zeros(1, 3, 1, requires_grad=True)
        rec(torch.squeeze_copy(x, (0, 2)).grad_fn.name(), torch.squeeze_copy(x, 2).grad_fn.name())

    check(scenario)


def test_copy_of_a_channels_last_slice_is_contiguous():
    # test_view_ops.test_view_copy_output_contiguous
    def scenario(torch, rec):
        a = torch.arange(256.0).view(4, 4, 4, 4).to(memory_format=torch.channels_last)
        b = torch.ops.aten.slice_copy(a, 0, 0, 2)
        rec(b.is_contiguous(), b)

    check(scenario)


def test_multi_output_copies():
    def scenario(torch, rec):
        a = torch.arange(6.0).view(2, 3).requires_grad_()
        for pieces in (torch.split_copy(a, 2, 1), torch.unbind_copy(a), torch.unbind_copy(a, 1)):
            rec(list(pieces), [p.grad_fn.name() for p in pieces], [p._is_view() for p in pieces])
            (g,) = torch.autograd.grad(sum((p * (i + 1)).sum() for i, p in enumerate(pieces)), a)
            rec(g)
        o = [torch.empty(0), torch.empty(0)]
        rec(torch.unbind_copy(a.detach(), out=o), o)
        o = [torch.empty(2, 2), torch.empty(2, 1)]
        rec(torch.split_copy(a.detach(), 2, 1, out=o), o)
        rec(error_of(lambda: torch.unbind_copy(a.detach(), out=[torch.empty(0)])))

        rec(error_of(lambda: torch.split_copy(a.detach(), 2, 1, out=[torch.empty(0)])))
        rec(error_of(lambda: torch.split_with_sizes_copy(a.detach(), [2, 1], 1, out=[])))

    check(scenario)
