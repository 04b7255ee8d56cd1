"""Unrecorded views of host arrays (compat/_core/host_views.py): ``view``, ``reshape``,
``transpose``, ``split`` and basic indexing of a host tensor that records nothing run NumPy's own reshape/transpose
without an op lookup; recorded calls, forward AD, lazy mode, torch.func and the compiled
tier mode still go through ``apply``. Values, view semantics and gradients against
PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import compat.lazy as lazy
import compat.torch as ct
from funcgrad import _compat_contract
from funcgrad._compat_contract import LazyArray
from funcgrad.core import tiers


@pytest.fixture
def lookups(monkeypatch):
    """The op functions ``apply`` looked up (a new signature: a trace or a template).
    ``"auto"``'s meaning is resolved first, as the first op of a process does: until
    then the NumPy path is not taken (as compat's per-op fast path)."""
    tiers.mode()
    seen: list[str] = []
    real = _compat_contract.lookup_op

    def counting(fn, *args, **kwargs):
        seen.append(fn.__name__)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(_compat_contract, "lookup_op", counting)
    return seen


def _layouts(lib, x, t):
    """A growing sequence's attention layouts (new shapes at every ``t``)."""
    q, k, v = x.split(4, dim=2)
    q = x.view(2, t, 4, 3).transpose(1, 2)
    return q.reshape(2, 4 * t, 3), q.transpose(1, 2).reshape(2, t, -1), k, v


def test_unrecorded_views_make_no_lookup(lookups):
    rng = np.random.default_rng(0)
    for t in range(1, 7):  # each length a new signature of every op
        a = rng.standard_normal((2, t, 12)).astype(np.float32)
        with ct.no_grad():
            got = _layouts(ct, ct.tensor(a, requires_grad=True), t)
        want = _layouts(torch, torch.tensor(a), t)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.detach().numpy(), w.numpy())
            assert g.grad_fn is None
        plain = _layouts(ct, ct.tensor(a), t)  # grad mode on, nothing requires grad
        np.testing.assert_array_equal(plain[1].numpy(), want[1].numpy())
    # (``q.reshape(2, 4 * t, 3)`` of the non-contiguous ``q`` copies from length 2 on:
    # ``apply``'s UnsafeView, once a length; every split, view and transpose ran on
    # NumPy, and the transpose back makes ``q`` contiguous: the last reshape is a view)
    assert lookups == ["_reshape_f"] * 5


def test_views_stay_views_and_outputs_read_only():
    base = ct.zeros(2, 6)
    with ct.no_grad():
        v = base.view(3, 4)
        w = v.transpose(0, 1)
        _, s = base.split([2, 4], dim=1)
    assert not v._st.a.flags.writeable and not w._st.a.flags.writeable
    w.add_(1.0)  # written through to the base, as PyTorch's views
    s.sub_(0.5)
    ref = torch.zeros(2, 6)
    ref.view(3, 4).transpose(0, 1).add_(1.0)
    ref.split([2, 4], dim=1)[1].sub_(0.5)
    np.testing.assert_array_equal(base.numpy(), ref.numpy())
    base.mul_(3.0)  # the view reads the base's new values
    np.testing.assert_array_equal(v.numpy(), ref.mul_(3.0).view(3, 4).numpy())
    assert v._base is base and w._base is base and s._base is base


def test_recorded_views_keep_their_graph(lookups):
    a = np.arange(24, dtype=np.float32).reshape(2, 12)
    x, tx = ct.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = (z.view(2, 3, 4).transpose(0, 2) for z in (x, tx))
    assert y.grad_fn.name() == ty.grad_fn.name() == "TransposeBackward0"
    assert "_reshape_f" in lookups and "_transpose_f" in lookups
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_other_modes_go_through_apply(lookups):
    x = ct.arange(6.0)
    with ct.autograd.forward_ad.dual_level():
        d = ct.autograd.forward_ad.make_dual(x, ct.ones(6))
        tangent = ct.autograd.forward_ad.unpack_dual(d.view(2, 3).t()).tangent
    np.testing.assert_array_equal(tangent.numpy(), np.ones((3, 2)))
    with lazy.enabled(True):
        y = x.view(3, 2)
        assert type(y._st.a) is LazyArray
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0).reshape(3, 2))
    g = ct.func.grad(lambda t: (t.view(2, 3).transpose(0, 1) ** 2).sum())(x)
    np.testing.assert_array_equal(g.numpy(), 2 * np.arange(6.0))
    lookups.clear()
    with tiers.eager_tier("compiled"), ct.no_grad():
        z = ct.arange(8.0).view(2, 4).transpose(0, 1)
    assert {"_reshape_f", "_transpose_f"} <= set(lookups)
    np.testing.assert_array_equal(z.numpy(), np.arange(8.0).reshape(2, 4).T)


BASIC = [
    (slice(None), -1, slice(None)),
    (0,),
    (1, 2, 3),
    (-2, slice(1, None, 2), None),
    (None, Ellipsis, 0),
    (slice(-3, 100), slice(None, None, 3)),
    (slice(5, 1),),
    (Ellipsis,),
]


def test_basic_indexing_without_lookup(lookups):
    a = np.arange(2 * 5 * 4, dtype=np.float32).reshape(2, 5, 4)
    for idx in BASIC:
        with ct.no_grad():
            got = ct.tensor(a, requires_grad=True)[idx]
        want = torch.tensor(a)[idx]
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.detach().numpy(), want.numpy())
        assert not got._st.a.flags.writeable
    t = ct.tensor(a)
    with ct.no_grad():
        row = t[ct.tensor(1), 1:3]  # (a 0-d integer tensor: an integer)
    row.zero_()  # written through to the base, as PyTorch's
    ref = torch.tensor(a)
    ref[torch.tensor(1), 1:3].zero_()
    np.testing.assert_array_equal(t.numpy(), ref.numpy())
    assert "_getitem_f" not in lookups  # (``zero_`` is an op of its own)
    with ct.no_grad():  # index arrays and too many indices: ``apply`` (its errors)
        np.testing.assert_array_equal(t[[0, 1], 0].numpy(), ref[[0, 1], 0].numpy())
        with pytest.raises(IndexError, match="too many indices"):
            t[0, 0, 0, 0]
    assert lookups.count("_getitem_f") == 1
