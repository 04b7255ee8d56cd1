"""Optimizer hooks against PyTorch 2.13's: step pre-/post-hooks per optimizer and global
(order, replaced arguments, removal, a bad return value), state-dict and load-state-dict
pre-/post-hooks (prepend, returned dicts), and state entries that are not a parameter's."""

from __future__ import annotations

import copy
import importlib
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _params(lib: Any) -> list[Any]:
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    p.grad = lib.tensor([0.5, 0.25])
    return [p]


def _step_hooks(lib: Any) -> list[Any]:
    from_optimizer = importlib.import_module(f"{lib.__name__}.optim.optimizer")
    log: list[Any] = []
    opt = lib.optim.SGD(_params(lib), lr=0.1)
    handles = [
        from_optimizer.register_optimizer_step_pre_hook(lambda o, a, k: log.append("gpre")),
        from_optimizer.register_optimizer_step_post_hook(lambda o, a, k: log.append("gpost")),
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), a[0] is o, k))),
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), k))),
    ]
    opt.step()
    handles[0].remove()
    handles[2].remove()
    opt.step()
    for h in handles:
        h.remove()
    opt.step()
    log.append(opt.param_groups[0]["params"][0].tolist())
    return log


def test_step_hooks_order_and_removal() -> None:
    assert _step_hooks(ctorch) == _step_hooks(torch)


def _replacing_arguments(lib: Any) -> list[Any]:
    seen: list[Any] = []

    def closure() -> Any:
        seen.append("closure ran")
        return lib.tensor(3.0)

    opt = lib.optim.SGD(_params(lib), lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": closure}))
    seen.append(float(opt.step()))
    return seen


def test_pre_hook_replaces_arguments() -> None:
    assert _replacing_arguments(ctorch) == _replacing_arguments(torch)


def test_pre_hook_bad_return_is_an_error() -> None:
    for lib in (torch, ctorch):
        opt = lib.optim.SGD(_params(lib), lr=0.1)
        opt.register_step_pre_hook(lambda o, a, k: 5)
        with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args"):
            opt.step()


def _state_dict_hooks(lib: Any) -> list[Any]:
    log: list[Any] = []
    opt = lib.optim.Adam(_params(lib), lr=0.01)
    opt.step()

    def post(o: Any, sd: dict) -> dict:
        sd = dict(sd)
        sd["extra"] = "added"
        return sd

    opt.register_state_dict_pre_hook(lambda o: log.append("pre1"))
    opt.register_state_dict_pre_hook(lambda o: log.append("pre0"), prepend=True)
    opt.register_state_dict_post_hook(post)
    opt.state["note"] = 7  # not a parameter's state: kept as it is
    sd = opt.state_dict()
    log += [sorted(sd), sd["state"]["note"], sd["extra"]]

    def load_pre(o: Any, sd: dict) -> dict:
        sd = copy.deepcopy(sd)
        sd["param_groups"][0]["lr"] = 0.5
        return sd

    other = lib.optim.Adam(_params(lib), lr=0.01)
    other.register_load_state_dict_pre_hook(lambda o, sd: log.append(sorted(sd)))
    other.register_load_state_dict_pre_hook(load_pre, prepend=True)
    other.register_load_state_dict_post_hook(lambda o: log.append(o.param_groups[0]["lr"]))
    del sd["extra"]
    other.load_state_dict(sd)
    log.append(other.state["note"])
    return log


def test_state_dict_hooks() -> None:
    assert _state_dict_hooks(ctorch) == _state_dict_hooks(torch)
