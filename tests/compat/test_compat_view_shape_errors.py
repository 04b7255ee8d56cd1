"""Refusals of view and shape ops in PyTorch 2.13's words (type and message), from
test_view_ops.py and test_shape_ops.py: ``view``/``reshape`` of an empty tensor with an
ambiguous ``-1``, ``view_as_complex`` of a 0-d tensor, ``tensor_split``'s argument
checks, ``clamp_`` without bounds, ``nonzero``'s ``out=``, ``resize_``'s overflows."""

from __future__ import annotations

import pytest
from torch_oracle import error_of, import_real_torch

import compat.torch as ctorch

CASES = {
    "view_empty_ambiguous": lambda t: t.empty(0).view(-1, 0),
    "view_empty_ambiguous_middle": lambda t: t.empty(0, 3).view(2, -1, 0),
    "reshape_empty_ambiguous": lambda t: t.empty(0).reshape(0, -1),
    "view_zero_known_nonempty": lambda t: t.empty(6).view(-1, 0),
    "view_as_complex_0d": lambda t: t.view_as_complex(t.tensor(1.0)),
    "view_as_complex_last_dim": lambda t: t.view_as_complex(t.ones(3)),
    "tensor_split_0d": lambda t: t.tensor_split(t.tensor(1.0), 2, 0),
    "tensor_split_0d_indices": lambda t: t.tensor_split(t.tensor(1.0), (1,), 0),
    "tensor_split_0d_tensor": lambda t: t.tensor_split(t.tensor(1.0), t.tensor(2), 0),
    "tensor_split_dim": lambda t: t.tensor_split(t.ones(10), 10, 1),
    "tensor_split_sections": lambda t: t.tensor_split(t.ones(10), -1, 0),
    "tensor_split_tensor_sections": lambda t: t.tensor_split(t.ones(10), t.tensor(0), 0),
    "tensor_split_float_tensor": lambda t: t.tensor_split(t.ones(10), t.tensor(1.5)),
    "tensor_split_int32_tensor": lambda t: t.tensor_split(t.ones(10), t.tensor([1], dtype=t.int32)),
    "tensor_split_2d_tensor": lambda t: t.tensor_split(t.ones(10), t.tensor([[1]])),
    "clamp_no_bounds": lambda t: t.ones(3).clamp_(),
    "clip_no_bounds": lambda t: t.ones(3).clip_(),
    "clamp_function_no_bounds": lambda t: t.clamp(t.ones(3)),
    "nonzero_out_float": lambda t: t.nonzero(t.ones(2, 2), out=t.empty([], dtype=t.float32)),
    "nonzero_out_int32": lambda t: t.nonzero(t.ones(2, 2), out=t.empty(0, dtype=t.int32)),
    "nonzero_out_as_tuple": lambda t: t.nonzero(
        t.ones(2, 2), as_tuple=True, out=t.empty(0, dtype=t.int64)
    ),
    "resize_bytes_overflow": lambda t: t.empty((), dtype=t.float64).resize_([2, 4, 2**29, 2**29]),
    "resize_numel_overflow": lambda t: t.empty((), dtype=t.float64).resize_([8, 8, 2**29, 2**29]),
    "resize_stride_overflow": lambda t: t.empty(()).resize_([0, 4, 2305843009213693952]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refusal_matches_pytorch(case):
    theirs = error_of(lambda: CASES[case](import_real_torch()))
    ours = error_of(lambda: CASES[case](ctorch))
    assert theirs != "no error"
    assert ours == theirs


def test_accepted_forms_still_work():
    def run(t):
        a = t.arange(10.0)
        parts = [p.tolist() for p in t.tensor_split(a, t.tensor([2, 5]))]
        parts += [p.tolist() for p in t.tensor_split(a, t.tensor(3))]
        out = t.empty(0, dtype=t.int64)
        t.nonzero(t.tensor([[0.0, 1.0], [2.0, 0.0]]), out=out)
        x = t.empty(2)
        x.resize_(3, 4)
        return parts, out.tolist(), list(x.shape), t.empty(0, 2).view(-1, 2).shape

    assert run(ctorch) == run(import_real_torch())
