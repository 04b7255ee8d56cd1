"""``gradcheck``/``gradgradcheck`` run every eager op on one tier.

compat's tiers move an op between its NumPy host rule and a compiled program by timings;
the two may round differently in the last bit (docs/design.md, *the same op on both
tiers*), so a float64 backward run twice inside ``gradcheck`` could differ and fail its
reentrancy check ("Backward is not reentrant") though the gradient is right. The checks
pin the host tier (or keep the compiled one where the thread is in it).
"""

from __future__ import annotations

import compat.torch as torch
import funcgrad
from funcgrad import _compat_contract as contract

F = torch.nn.functional


def _modes_seen(check, mode=None):
    seen = []

    def f(x):
        seen.append(contract.tier_mode())
        return F.hardswish(x)

    x = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
    if mode is None:
        check(f, (x,))
    else:
        with funcgrad.eager_tier(mode):
            check(f, (x,))
    return set(seen)


def test_checks_run_on_the_host_tier_unless_compiled():
    for check in (torch.autograd.gradcheck, torch.autograd.gradgradcheck):
        assert _modes_seen(check) == {"host"}
        assert _modes_seen(check, "tiered") == {"host"}
        assert _modes_seen(check, "compiled") == {"compiled"}


def test_gradcheck_after_the_ops_warmed_up_and_compiled():
    # the ops run often before the check (their tiers may compile them meanwhile); the
    # reentrancy test compares two backward calls bit for bit (nondet_tol=0)
    torch.manual_seed(0)
    x = ((torch.randn(4, 16, 16, dtype=torch.double) - 0.5) * 10).requires_grad_()
    g = (torch.rand(2, 4, 3, 2, dtype=torch.double) * 2.2 - 1.1).requires_grad_()
    y = torch.randn(2, 3, 5, 6, dtype=torch.double, requires_grad=True)
    for _ in range(30):
        F.hardswish(x).sum().backward()
        F.grid_sample(y, g, align_corners=False).sum().backward()
    assert torch.autograd.gradcheck(F.hardswish, (x,))
    assert torch.autograd.gradcheck(lambda y, g: F.grid_sample(y, g, align_corners=False), (y, g))
    assert torch.autograd.gradgradcheck(F.hardswish, (x[:2, :3, :3].detach().requires_grad_(),))
