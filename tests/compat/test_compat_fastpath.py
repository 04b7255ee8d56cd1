"""The memoised dispatch of a tensor and a Python number (compat/_core/fastpath.py): it
is taken once warm, and everything ``apply`` does still happens (graph, grad modes,
hooks, views, anomaly mode, forward AD, lazy mode, torch.func, tier modes); values,
dtypes and node names against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import compat.lazy as lazy
import compat.torch as ct
from compat._core import fastpath
from funcgrad._compat_contract import LazyArray
from funcgrad.core import compile_cache, tiers

WARM = 6  # calls that take a signature past apply and the host plan's generated form


def _program(lib, x):
    y = x * 1.0001
    y = y + 0.25
    y = 2.0 - y
    y = y / 3
    y = 1.5 * y
    y = y - 1
    y = 3 + y
    y = y * 2
    return y


@pytest.fixture
def counted(monkeypatch):
    """Counts the calls that go through ``apply`` from the fast operators. The compile
    cache is emptied first: a test run before in this process may have had the same
    signatures' executables compiled, and a compiled one is never taken fast."""
    compile_cache.clear()
    calls = [0]
    real = fastpath._apply

    def apply(*a, **k):
        calls[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(fastpath, "_apply", apply)
    return calls


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(), (3,)])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_values_grads_and_names_match_torch(dtype, shape, requires_grad, counted):
    data = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)
    tx = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    ty = _program(torch, tx)
    for _ in range(WARM):
        cx = ct.tensor(data, dtype=getattr(ct, dtype), requires_grad=requires_grad)
        cy = _program(ct, cx)
    counted[0] = 0
    cx = ct.tensor(data, dtype=getattr(ct, dtype), requires_grad=requires_grad)
    cy = _program(ct, cx)
    assert counted[0] <= 1  # (``2.0 - y`` saves nothing but ``c / y`` would: all fast here)
    assert str(cy.dtype) == str(ty.dtype)
    np.testing.assert_allclose(cy.detach().numpy(), ty.detach().numpy(), rtol=1e-3)
    assert cy.requires_grad == ty.requires_grad
    if requires_grad:
        names, tn, cn = [], ty.grad_fn, cy.grad_fn
        while tn is not None and type(tn).__name__ != "AccumulateGrad":
            names.append((tn.name(), cn.name()))
            tn = next(f for f, _ in tn.next_functions if f is not None)
            cn = next(f for f, _ in cn.next_functions if f is not None)
        assert all(a == b for a, b in names), names
        assert cn.name() == tn.name() == "torch::autograd::AccumulateGrad"
        ty.sum().backward()
        cy.sum().backward()
        np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), rtol=1e-3)
    else:
        assert cy.grad_fn is None


def test_fast_path_is_taken_once_warm(counted):
    x = ct.tensor(1.0, requires_grad=True)
    for _ in range(WARM):
        x * 2.0
        x * 3  # an int: its own signature
    counted[0] = 0
    for _ in range(10):
        y = x * 2.0
        z = x * 3
    assert counted[0] == 0
    assert y.grad_fn.name() == "MulBackward0"
    # the leaf's one AccumulateGrad is shared by both consumers, as in apply
    assert y.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[0][0]
    (y + z).backward()
    assert x.grad.item() == 5.0


def test_saving_ops_and_views_take_apply(counted):
    x = ct.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(WARM):
        2.0 / x  # saves x (and its output): version checks go through apply
    counted[0] = 0
    y = 2.0 / x
    assert counted[0] == 1
    base = ct.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
    v = base[1:]
    for _ in range(WARM):
        w = v * 2.0
    counted[0] = 0
    w = v * 2.0
    assert counted[0] == 1  # a view: apply syncs it
    w.sum().backward()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-2.0, -0.5])


def test_grad_modes_inference_and_version():
    x = ct.tensor(2.0, requires_grad=True)
    for _ in range(WARM):
        x * 2.0
    with ct.no_grad():
        y = x * 2.0
    assert y.grad_fn is None and not y.requires_grad
    with ct.inference_mode():
        z = x * 2.0
    assert z.is_inference() and z.grad_fn is None
    w = x * 2.0
    assert not w.is_inference() and w.grad_fn is not None and w._version == 0
    with ct.enable_grad():
        assert (x * 2.0).requires_grad


def test_hooks_retain_grad_and_anomaly():
    x = ct.tensor(2.0, requires_grad=True)
    for _ in range(WARM):
        x * 2.0 * 3.0
    seen = []
    y = x * 2.0
    y.retain_grad()
    y.register_hook(lambda g: seen.append(g.item()))
    z = y * 3.0
    z.grad_fn.register_prehook(lambda gout: seen.append("pre"))
    z.backward()
    assert seen == ["pre", 3.0] and y.grad.item() == 3.0 and x.grad.item() == 6.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ct.autograd.detect_anomaly():
            a = x * 2.0
    assert "traceback_" in a.grad_fn.metadata


def test_forward_ad_lazy_func_and_tier_modes():
    x = ct.tensor([1.0, 2.0])
    for _ in range(WARM):
        x * 2.0
    with ct.autograd.forward_ad.dual_level():
        d = ct.autograd.forward_ad.make_dual(x, ct.tensor([1.0, 1.0]))
        tangent = ct.autograd.forward_ad.unpack_dual(d * 2.0).tangent
    np.testing.assert_array_equal(tangent.numpy(), [2.0, 2.0])
    with lazy.enabled(True):
        y = x * 2.0
        assert type(y._st.a) is LazyArray
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    g = ct.func.grad(lambda t: (t * 3.0).sum())(x)
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])
    for mode in ("compiled", "host", "tiered"):
        with tiers.eager_tier(mode):
            r = ct.tensor([1.0, 2.0], requires_grad=True)
            out = r * 2.0
            out.sum().backward()
        np.testing.assert_array_equal(out.detach().numpy(), [2.0, 4.0])
        np.testing.assert_array_equal(r.grad.numpy(), [2.0, 2.0])


def test_cleared_caches_and_compiled_executables(counted):
    x = ct.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(WARM):
        x * 2.0
    compile_cache.clear()  # compat's op cache too: the fast records go with it
    counted[0] = 0
    np.testing.assert_array_equal((x * 2.0).detach().numpy(), [2.0, 4.0])
    assert counted[0] == 1
    y = x * 2.0
    op = y.grad_fn._entry
    tiered = op._fwd_exe.raw
    tiered.exe = lambda *a: [np.asarray([7.0, 7.0], np.float32)]  # as if compiled
    counted[0] = 0
    z = x * 2.0  # a compiled executable is called by apply (64-bit scope, counters)
    assert counted[0] == 1
    np.testing.assert_array_equal(z.detach().numpy(), [7.0, 7.0])
    tiered.exe = None
