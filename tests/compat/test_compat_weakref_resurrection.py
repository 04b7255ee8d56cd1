"""Weak references to tensors, as PyTorch's ``test_tensor_resurrected_weak_ref`` and
``test_tensor_fix_weakref_no_leak`` use them with ``Tensor._fix_weakref`` (PyTorch's re-link
of a resurrected tensor to its C++ half; compat's tensors are one Python object, so it has
nothing to do and the weak reference stays what Python makes it)."""

from __future__ import annotations

import gc
import weakref

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("lib", [ctorch, torch], ids=["compat", "torch"])
def test_resurrected_through_grad_still_computes(lib):
    x = lib.empty(2).fill_(0.5)
    w_x = weakref.ref(x)
    y = lib.empty(2)
    y.grad = x
    del x
    x = w_x()
    assert x is not None and x is y.grad
    x._fix_weakref()
    del y
    assert x.sigmoid().tolist() == pytest.approx([0.6224593312] * 2)


@pytest.mark.parametrize("lib", [ctorch, torch], ids=["compat", "torch"])
def test_fix_weakref_does_not_keep_the_tensor_alive(lib):
    called = []
    a = lib.randn(1)
    wa = weakref.ref(a, lambda w: called.append(True))
    a._fix_weakref()
    del a
    gc.collect()
    assert called == [True] and wa() is None
