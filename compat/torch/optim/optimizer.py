"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and state dicts.

Follows ``torch/optim/optimizer.py``: ``param_groups`` is a list of dicts
(``"params"`` plus every hyperparameter, filled from ``defaults``), ``state``
maps a parameter to its dict of buffers, and ``state_dict()`` /
``load_state_dict()`` use PyTorch's layout (parameters replaced by their
running index over all groups), so optimizer checkpoints keep PyTorch's
shape; loaded state may hold compat Tensors, NumPy arrays or real torch
tensors.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

import compat.torch as torch
from compat.torch.optim._hooks import (
    OptimizerHooks,
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from funcgrad._compat_contract import mark_step

__all__ = [
    "Optimizer",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
]


class _RequiredParameter:
    """Singleton marking a hyperparameter a param group must specify."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _to_compat(value: Any, dtype: Any = None) -> Any:
    """A compat Tensor from a compat Tensor, NumPy array or real torch tensor."""
    if isinstance(value, torch.Tensor):
        if dtype is not None and value.dtype != dtype:
            return value.to(dtype)
        return value
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach().cpu().numpy()
    arr = np.asarray(value)
    return torch.tensor(arr) if dtype is None else torch.tensor(arr, dtype=dtype)


class Optimizer(OptimizerHooks):
    """Base class of all optimizers (with PyTorch's step and state-dict hooks).

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of
            dicts defining parameter groups.
        defaults: default hyperparameters for groups that do not set them.

    Subclasses implement ``step(closure=None)``.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass's ``step`` runs between the step hooks and ends a training step:
        under lazy execution what is pending (forward, backward, this update) is evaluated
        then, as one program."""
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_step_boundary", False):

            @functools.wraps(step)
            def bounded_step(self: Any, *args: Any, **kw: Any) -> Any:
                out = self._run_step(step, (self, *args), kw)
                mark_step()
                return out

            bounded_step._step_boundary = True  # type: ignore[attr-defined]
            cls.step = bounded_step

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, torch.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + torch.typename(params)
            )
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    #: group options a pickled optimizer of this class may lack, and their defaults
    #: (filled in by ``__setstate__``, as PyTorch's optimizers do)
    _state_defaults: dict[str, Any] = {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for group in self.param_groups:
            for k, v in self._state_defaults.items():
                group.setdefault(k, v)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own hyperparameters (defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, torch.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        else:
            param_group["params"] = list(params)

        named = [p for p in param_group["params"] if isinstance(p, tuple)]
        if named:
            if len(named) != len(param_group["params"]):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = [name for name, _ in named]
            param_group["params"] = [p for _, p in named]

        for param in param_group["params"]:
            if not isinstance(param, torch.Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + torch.typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)

        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                UserWarning,
                stacklevel=3,
            )
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if not existing.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized parameter (to ``None`` by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step (re-evaluating the loss with ``closure`` if given)."""
        raise NotImplementedError

    def _closure_loss(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with torch.enable_grad():
            return closure()

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Parameters are replaced by their index over all groups in order; state
        values are the optimizer's own tensors (not copies), as in PyTorch.
        """
        self._state_dict_pre_hooks()
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {}
        for key, value in self.state.items():
            index = param_mappings[id(key)] if isinstance(key, torch.Tensor) else key
            # (a value that is not a parameter's dict of buffers is kept as it is)
            packed_state[index] = (
                self._export_param_state(value) if isinstance(value, dict) else value
            )
        return self._state_dict_post_hooks({"state": packed_state, "param_groups": param_groups})

    def _export_param_state(self, state: dict[str, Any]) -> dict[str, Any]:
        # Steps are kept as Python numbers internally; PyTorch stores float32 tensors.
        out = dict(state)
        if "step" in out and not isinstance(out["step"], torch.Tensor):
            out["step"] = torch.tensor(float(out["step"]), dtype=torch.float32)
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load hyperparameters and per-parameter state saved by ``state_dict()``.

        Tensors (compat, NumPy or real torch) are cast to their parameter's
        dtype, except ``step``; the groups must match this optimizer's in number
        and sizes (PyTorch's ``ValueError`` otherwise).
        """
        state_dict = self._load_state_dict_pre_hooks(dict(state_dict))
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = [len(g["params"]) for g in groups]
        saved_lens = [len(g["params"]) for g in saved_groups]
        if any(p != s for p, s in zip(param_lens, saved_lens)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = {
                    k: self._import_state_value(param, k, v) for k, v in dict(value).items()
                }
            else:
                state[key] = value

        param_groups = []
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            param_groups.append(new_group)
        self.__setstate__({"state": state, "param_groups": param_groups})
        self._load_state_dict_post_hooks()

    def _import_state_value(self, param: Any, key: str, value: Any) -> Any:
        if key == "step":
            if isinstance(value, (int, float)):
                return float(value)
            return float(np.asarray(_numpy_of(value)))
        if isinstance(value, (int, float, bool)) or value is None:
            return value
        return _to_compat(value, param.dtype)


def _numpy_of(value: Any) -> Any:
    if isinstance(value, torch.Tensor) or hasattr(value, "detach"):
        return value.detach().numpy() if hasattr(value, "detach") else value.numpy()
    return value


def params_with_grad(group: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The group's parameters whose ``.grad`` is set, and those gradients (others are skipped)."""
    params, grads = [], []
    for p in group["params"]:
        g = p.grad
        if g is not None:
            params.append(p)
            grads.append(g)
    return params, grads
