"""``optim.swap_in_optimizer_params_and_state`` against PyTorch 2.13: a step inside the
block updates the swap-in parameters and the caller's state tensors with the swap-in
hyperparameters, the live optimizer and parameters are untouched and restored; the
checks."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import compat.torch as ctorch


def _setup(lib, opt_name):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3)))
    b = lib.nn.Parameter(lib.tensor([0.5, -0.5]))
    extra = {"momentum": 0.9} if opt_name == "SGD" else {}  # (plain SGD keeps no state)
    opt = getattr(lib.optim, opt_name)(
        [{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1, **extra
    )
    (w.sum() ** 2 + (b * b).sum()).backward()
    opt.step()  # live state initialised
    return w, b, opt


@pytest.mark.parametrize("opt_name", ["Adam", "SGD"])
def test_swap_in_step(opt_name, real_torch):
    results = []
    for lib in (real_torch, ctorch):
        w, b, opt = _setup(lib, opt_name)
        live_w, live_b = w.detach().clone(), b.detach().clone()
        osd = opt.state_dict()
        osd = {
            "state": copy.deepcopy(osd["state"]),
            "param_groups": copy.deepcopy(osd["param_groups"]),
        }
        osd["param_groups"][1]["lr"] = 0.5
        sw = lib.tensor(np.ones((2, 3)), requires_grad=True)
        sb = lib.tensor([2.0, 3.0], requires_grad=True)
        sw.grad, sb.grad = lib.full((2, 3), 0.25, dtype=lib.float64), lib.tensor([1.0, -1.0])
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": sw, "b": sb}, osd):
            assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is sw
            opt.step()
        assert opt.param_groups[1]["lr"] == 0.05 and opt.param_groups[0]["params"][0] is w
        assert set(map(id, opt.state)) == {id(w), id(b)}
        np.testing.assert_array_equal(w.detach().numpy(), live_w.numpy())
        np.testing.assert_array_equal(b.detach().numpy(), live_b.numpy())
        state = [
            v.numpy()
            for s in osd["state"].values()
            for k, v in sorted(s.items())
            if k != "step" and v is not None
        ]
        results.append((sw.detach().numpy(), sb.detach().numpy(), state))
    (wt, bt, st), (wc, bc, sc) = results
    np.testing.assert_allclose(wc, wt, rtol=1e-6)
    np.testing.assert_allclose(bc, bt, rtol=1e-6)
    assert len(sc) == len(st)
    for c, t in zip(sc, st):
        np.testing.assert_allclose(c, t, rtol=1e-6)


def test_swap_in_checks(real_torch):
    for lib in (real_torch, ctorch):
        p = lib.nn.Parameter(lib.ones(2))
        fresh = lib.optim.SGD([p], lr=0.1)
        with (
            pytest.raises(RuntimeError, match="requires initialized optimizer state"),
            lib.optim.swap_in_optimizer_params_and_state(fresh, {"p": p}, fresh.state_dict()),
        ):
            pass
        w, b, opt = _setup(lib, "Adam")
        osd = opt.state_dict()
        bad_groups = {"state": osd["state"], "param_groups": osd["param_groups"][:1]}
        with (
            pytest.raises(RuntimeError, match="different number of parameter groups"),
            lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w, "b": b}, bad_groups),
        ):
            pass
        extra = {"state": {**osd["state"], 7: {}}, "param_groups": osd["param_groups"]}
        with (
            pytest.raises(RuntimeError, match=r"got extra keys \[7\]"),
            lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w, "b": b}, extra),
        ):
            pass
