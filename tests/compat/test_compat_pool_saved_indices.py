"""Max pooling's ``indices`` (``return_indices=True``) count among the node's saved tensors,
as PyTorch's: modified in place, a backward raises PyTorch's version error; the pooled
output modified in place does not (PyTorch saves the input and the indices). Against real
PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch

_POOLS = [
    ("max_pool1d", 1, (2,)),
    ("max_pool2d", 2, (2,)),
    ("max_pool3d", 3, (2,)),
    ("adaptive_max_pool1d", 1, (2,)),
    ("adaptive_max_pool2d", 2, (2,)),
    ("adaptive_max_pool3d", 3, (2,)),
]


def _pool(lib, name, nd, args):
    x = lib.arange(1.0, 2 * 4**nd + 1).reshape(1, 2, *([4] * nd)).requires_grad_()
    out, idx = getattr(lib.nn.functional, name)(x, *args, return_indices=True)
    return x, out, idx


def _version_error(lib, name, nd, args):
    """The gradient of a first backward, then the error of a second one after the
    indices were changed in place (``None`` if none)."""
    x, out, idx = _pool(lib, name, nd, args)
    out.sum().backward(retain_graph=True)
    first = npv(x.grad)
    idx.add_(1)
    try:
        out.sum().backward()
    except RuntimeError as e:
        return first, str(e)
    return first, None


@pytest.mark.parametrize(("name", "nd", "args"), _POOLS)
def test_changed_indices_refused(real_torch, name, nd, args):
    g, ours = _version_error(torch, name, nd, args)
    ref_g, ref = _version_error(real_torch, name, nd, args)
    np.testing.assert_array_equal(g, ref_g)
    assert ref is not None and ours is not None
    assert "modified by an inplace operation" in ours
    # (PyTorch's 1-D pooling saves its 2-D kernel's 4-D indices: its message names them)
    assert ours == ref


@pytest.mark.parametrize("pool", ["max_pool1d", "adaptive_max_pool1d"])
@pytest.mark.parametrize("batch", [(), (1,), (3,)])
def test_pool1d_changed_indices_name_the_saved_shape(real_torch, batch, pool):
    """The 1-D poolings' version error names the indices' shape with the 2-D kernel's dim
    of size 1, batched or not."""
    msgs = []
    for lib in (torch, real_torch):
        x = lib.arange(2.0 * 9 * int(np.prod(batch))).reshape(*batch, 2, 9).requires_grad_()
        out, idx = getattr(lib.nn.functional, pool)(x, 3, return_indices=True)
        idx.add_(1)
        try:
            out.sum().backward()
        except RuntimeError as e:
            msgs.append(str(e))
    assert len(msgs) == 2 and msgs[0] == msgs[1]


@pytest.mark.parametrize(("name", "nd", "args"), _POOLS[:3])
def test_changed_output_accepted(real_torch, name, nd, args):
    """The pooled output changed in place: the indices' check does not fire."""
    for lib in (torch, real_torch):
        x, out, _ = _pool(lib, name, nd, args)
        y = out * 1  # (a backward through the pooling after ``out``'s own change)
        out.detach().mul_(2)
        y.sum().backward()
        assert x.grad is not None


def test_without_indices_no_extra_saved(real_torch):
    res = []
    for lib in (torch, real_torch):
        x = lib.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
        out = lib.nn.functional.max_pool2d(x, 2)
        out.sum().backward()
        res.append(npv(x.grad))
    np.testing.assert_array_equal(*res)
