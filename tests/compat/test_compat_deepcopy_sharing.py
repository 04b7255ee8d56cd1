"""``copy.deepcopy`` keeps what shared memory sharing it, as PyTorch's storage memo: a view
deep-copied with its base is the same view of the base's copy, and a storage deep-copied
with its tensor is the copy's storage (compat copied each tensor and storage on its own, so
writes to the copied base did not reach the copied view or storage)."""

from __future__ import annotations

import warnings
from copy import deepcopy

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _values(x):
    return np.array(x.tolist())


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int64"])
def test_views_and_storages_follow_their_base(dtype):
    """PyTorch's ``test_deepcopy``: a base, its storage, another tensor's storage, a view."""
    out = []
    for lib in (ctorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (TypedStorage's deprecation warning)
            a = lib.arange(25).reshape(5, 5).to(getattr(lib, dtype))
            b = lib.arange(25, 50).reshape(5, 5).to(getattr(lib, dtype))
            c = a.view(25)
            w = deepcopy([a, [a.storage(), b.storage()], b, c])
            w[0].add_(1)
            w[2].sub_(1)
            out.append(
                (
                    w[1][0].tolist(),
                    w[1][1].tolist(),
                    _values(w[3]).tolist(),
                    _values(a).tolist(),
                    w[3].data_ptr() == w[0].data_ptr(),
                    w[0].data_ptr() != a.data_ptr(),
                )
            )
    assert out[0] == out[1]


def test_strided_view_copied_before_its_base():
    """The view comes first in the copied object: its base is copied through the memo, and
    the base met later is that copy."""
    out = []
    for lib in (ctorch, torch):
        x = lib.arange(6.0).reshape(2, 3)
        v = x.t()[1:]
        y = deepcopy({"v": v, "x": x})
        y["x"].mul_(10)
        out.append((y["v"].tolist(), y["v"].stride(), y["v"].is_leaf, x.tolist()))
    assert out[0] == out[1]


def test_gradient_and_attributes_kept():
    out = []
    for lib in (ctorch, torch):
        a = lib.zeros(4)
        a.grad = lib.ones(4)
        a.foo = 3
        s = lib.arange(4.0)[1:]
        s.requires_grad_()
        c = deepcopy([a, a.grad, s])
        out.append((c[0].grad is c[1], c[0].foo, c[1].tolist(), c[2].requires_grad, c[2].is_leaf))
    assert out[0] == out[1]


def test_parameter_keeps_its_class():
    for lib in (ctorch, torch):
        p = lib.nn.Parameter(lib.ones(3))
        q = deepcopy(p)
        assert type(q) is type(p) and q.requires_grad and q is not p
