"""View replay (``torch.autograd._force_original_view_tracking``,
``is_view_replay_enabled``) and ``Tensor._view_func`` against real PyTorch."""

from __future__ import annotations

import numpy as np
from torch_oracle import check


def test_view_replay_switch_names_the_regenerated_node():
    def scenario(lib, rec):
        ag = lib.autograd

        def f(x):
            out = x.clone().view(-1)
            out.add_(1)
            return out

        x = lib.ones(2, 2, requires_grad=True)
        with ag._force_original_view_tracking(False):
            rec(f(x).grad_fn.name(), ag.is_view_replay_enabled())
        with ag._force_original_view_tracking(True):
            out = f(x)
            rec(out.grad_fn.name(), ag.is_view_replay_enabled())
        rec(f(x).grad_fn.name(), ag.is_view_replay_enabled())
        with ag._force_original_view_tracking(False):
            ag._force_original_view_tracking(True)
            rec(f(x).grad_fn.name(), ag.is_view_replay_enabled())
        rec(ag.is_view_replay_enabled())
        out.sum().backward()
        rec(x.grad)

    check(scenario)


def test_view_func_replays_the_chain_on_a_new_base():
    def scenario(lib, rec):
        base = lib.tensor(np.arange(60.0).reshape(3, 4, 5))
        new = base * 2 + 1
        with lib.autograd._force_original_view_tracking(True):
            view = base.select(1, 2)
        rec(view._view_func(new, symint_visitor_fn=lambda i: i + 1), view._view_func(new))
        v2 = base[1:].transpose(0, 1)[2]
        r = v2._view_func(new)
        rec(r, r._is_view(), r._base is new)

    check(scenario)
