"""``torch._tensor_classes`` and the legacy classes' ``is_cuda``/``is_sparse``/``is_xpu``
(class attributes, as PyTorch's: compat's classes had none), against PyTorch 2.13."""

from __future__ import annotations

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def test_the_cpu_dense_classes_of_pytorch():
    names = {c.__name__ for c in ctorch._tensor_classes}
    want = {c.__name__ for c in torch._tensor_classes if c.__module__ == "torch"}
    assert names == want
    assert len(names) == len(ctorch._tensor_classes) == 10


@pytest.mark.parametrize("name", sorted(c.__name__ for c in ctorch._tensor_classes))
def test_class_attributes_as_pytorch(name):
    ours, theirs = getattr(ctorch, name), getattr(torch, name)
    for attr in ("is_cuda", "is_sparse", "is_xpu"):
        assert getattr(ours, attr) is getattr(theirs, attr) is False
    assert str(ours.dtype) == str(theirs.dtype)
    assert isinstance(ours([1]), ours) and ours in ctorch._tensor_classes
