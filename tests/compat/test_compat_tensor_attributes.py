"""Tensor attributes that PyTorch guards or keeps for old code: deleting ``grad`` /
``data`` / ``requires_grad`` / ``_grad_fn`` / ``_backward_hooks``, the removed
``volatile`` flag, ``_backward_hooks`` and ``torch.autograd.torch``; and the
Python conversions ``compat._core.tensor_convert`` holds. Each scenario runs on
compat and on real PyTorch (the ``lib`` fixture)."""

from __future__ import annotations

import math
import pickle
import sys
import warnings
from collections import OrderedDict

import pytest


def test_attribute_deletion(lib):
    x = lib.randn((5, 5), requires_grad=True)
    x.grad = lib.ones(5, 5)
    del x.grad
    assert x.grad is None
    with pytest.raises(RuntimeError, match="Deleting tensor data is not allowed"):
        del x.data
    with pytest.raises(TypeError):
        x.data = None
    with pytest.raises(RuntimeError):
        del x.requires_grad
    y = x * 2
    with pytest.raises(RuntimeError, match="Deletion of _grad_fn not allowed"):
        del y._grad_fn
    assert y.grad_fn is not None
    with pytest.raises(RuntimeError, match="Deletion of _backwards_hooks not allowed"):
        del x._backward_hooks


def test_backward_hooks_attribute(lib):
    x = lib.randn(3, requires_grad=True)
    assert x._backward_hooks is None

    def hook(g):
        return g * 2

    x.register_hook(hook)
    assert list(x._backward_hooks.values()) == [hook]
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]

    def error(*args):
        raise RuntimeError("called")

    # hooks set as a dict on tensors that take no part in backward are never called
    a, b = lib.randn(2), lib.randn(2)
    c = a + b
    for t in (a, b, c):
        t._backward_hooks = OrderedDict()
        t._backward_hooks["test"] = error
    z = lib.randn(2, requires_grad=True)
    (c + z).sum().backward()
    assert z.grad.tolist() == [1.0, 1.0]
    y = z * 3
    y._backward_hooks = OrderedDict(double=lambda g: g * 2)  # stored, not registered
    z.grad = None
    y.sum().backward()
    assert z.grad.tolist() == [3.0, 3.0]


def test_volatile_is_removed(lib):
    v = lib.autograd.torch.randn(3, 3)
    assert lib.autograd.torch is lib
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert v.volatile is False
        v.volatile = True
        assert v.volatile is False
        del v.volatile
    messages = [str(m.message) for m in w]
    assert messages[0] == "volatile was removed (Variable.volatile is always False)"
    assert "volatile was removed and now has no effect" in messages[1]
    assert len(messages) == 4


def test_python_scalar_conversions(lib):
    d = lib.zeros(1, 1, 1, dtype=lib.long)
    d[0] = -12345
    assert int(d) == -12345 and d.item() == -12345
    d[0] = 1234567890123456789
    assert float(d) == float(1234567890123456789)
    assert int(d) == 1234567890123456789
    f = lib.randn(1, 1, dtype=lib.double)
    f[0] = math.nan
    assert math.isnan(float(f)) and bool(f)
    with pytest.raises(ValueError):
        int(f[0])
    f[0] = math.inf
    with pytest.raises(OverflowError):
        int(f[0])
    f[0] = sys.float_info.max
    assert int(f) == sys.float_info.max
    f[0] = 0.0
    assert not f
    with pytest.raises(ValueError, match="only one element tensors"):
        float(lib.ones(2))
    with pytest.raises(TypeError):
        [lib.tensor(1.5)][lib.tensor(0.0)]
    assert complex(lib.tensor(2.0)) == 2 + 0j
    assert list(lib.arange(3)) == [0, 1, 2]
    assert lib.arange(3).tolist() == [0, 1, 2]


def test_pickle_round_trip(lib):
    x = lib.arange(4.0).requires_grad_()
    y = pickle.loads(pickle.dumps(x))
    assert y.requires_grad and y.tolist() == [0.0, 1.0, 2.0, 3.0]
