"""``out=`` of another shape, as PyTorch: a plain tensor is resized to the result's shape
(with PyTorch's deprecation warning when it had elements); a view of another shape, which
PyTorch grows over its storage, is refused with a clear error naming the op and shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import check, npv

import compat.torch as ctorch


def test_plain_out_is_resized_as_pytorch():
    def scenario(torch, rec):
        a = torch.arange(6.0)
        for size in (0, 3, 4, 9):
            out = torch.zeros(size)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = torch.cat([a[:2], a[2:4]], out=out)
            rec(r is out, out, tuple(out.shape), any("was resized" in str(x.message) for x in w))

    check(scenario)


def test_view_out_of_the_result_shape_writes_through():
    def scenario(torch, rec):
        a = torch.arange(6.0)
        base = torch.zeros(8)
        torch.cat([a[:2], a[2:4]], out=base[2:6])
        rec(base)

    check(scenario)


def test_view_out_of_another_shape_is_a_clear_error():
    a, base = ctorch.arange(6.0), ctorch.zeros(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotImplementedError, match=r"cat\(\).*view.*\[3\].*\[4\]"):
            ctorch.cat([a[:2], a[2:4]], out=base[:3])
    np.testing.assert_array_equal(npv(base), np.zeros(8))
