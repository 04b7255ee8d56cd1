"""``optim.swap_in_optimizer_params_and_state``: run an optimizer's APIs on other
parameters and state (a ``state_dict()``-shaped dict) for the length of a ``with`` block.

The live groups get the swap-in parameters (``swapin_parameters``' values, in the
groups' order) and the swap-in groups' hyperparameters; ``optimizer.state`` becomes the
swap-in state re-keyed by those parameters (each entry a shallow copy, so in-place tensor
updates reach the caller's dict and new entries do not). Everything is restored on exit.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import compat.torch as torch

__all__ = ["swap_in_optimizer_params_and_state"]

_WHO = "swap_in_optimizer_params_and_state"


def _check_state(state: Any) -> dict[Any, Any]:
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_WHO} requires swapin_optim_state['state'] to be a dict mapping packed "
            f"parameter ids to per-param state dicts, got {type(state).__name__}."
        )
    if any(isinstance(k, torch.Tensor) for k in state):
        raise RuntimeError(
            f"{_WHO} requires optimizer.state_dict()-style state keyed by packed parameter ids."
        )
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(
            f"{_WHO} requires per-parameter optimizer state entries to be dictionaries."
        )
    return state


def _check_group(idx: int, live: dict[str, Any], group: Any) -> list[int]:
    if not isinstance(group, dict):
        raise RuntimeError(f"{_WHO} requires each optimizer param group to be a dictionary.")
    ids = group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(
            f"{_WHO} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
            "keyed by packed parameter ids."
        )
    if len(live["params"]) != len(ids):
        raise RuntimeError(
            f"swapin_optim_state param group {idx} has a different number of params than the "
            "live optimizer param group."
        )
    only_swap = [k for k in group if k not in live]
    only_live = [k for k in live if k not in group]
    if only_swap or only_live:
        raise RuntimeError(
            f"{_WHO} requires optimizer.state_dict()-style param group keys to exactly match "
            f"the live optimizer group keys for group {idx}. Keys only in swap-in: {only_swap}. "
            f"Keys only in live: {only_live}."
        )
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(
    optimizer: Any,
    swapin_parameters: dict[str, Any],
    swapin_optim_state: dict[str, Any],
) -> Iterator[None]:
    """Within the block, ``optimizer`` steps (and every other API) act on
    ``swapin_parameters`` with the state and hyperparameters of ``swapin_optim_state``;
    its own parameters, state and groups are restored on exit."""
    if not optimizer.state:
        raise RuntimeError(f"{_WHO} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_WHO} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(
            f"{_WHO} requires swapin_optim_state['param_groups'] to be a list of param-group "
            f"dicts, got {type(groups).__name__}."
        )
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError(
            "swapin_optim_state has a different number of parameter groups than the live optimizer."
        )
    flat = list(swapin_parameters.values())
    plan, offset, seen = [], 0, set()
    for idx, (live, group) in enumerate(zip(optimizer.param_groups, groups, strict=True)):
        ids = _check_group(idx, live, group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(
                f"{_WHO} requires the explicit parameter state to match optimizer.param_groups ordering."
            )
        plan.append((live, group, ids, flat[offset : offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(
            f"{_WHO} requires swapin_optim_state['state'] to be keyed only by packed parameter "
            f"ids from param_groups[*]['params']; got extra keys {extra!r}."
        )
    saved_state = optimizer.state
    saved_groups = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for live, group, ids, params in plan:
            live.update({k: v for k, v in group.items() if k != "params"})
            live["params"] = params
            for p, i in zip(params, ids, strict=True):
                swapped[p] = dict(state.get(i, {}))
        optimizer.state = swapped
        yield
    finally:
        for live, snapshot in zip(optimizer.param_groups, saved_groups, strict=True):
            live.clear()
            live.update(snapshot)
        optimizer.state = saved_state
