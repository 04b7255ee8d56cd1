"""``LRScheduler``, the base of every schedule, and the helpers the schedules share
(group values may be Python numbers or 0-d Tensors, never aliased).
"""

from __future__ import annotations

import functools
import types
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import compat.torch as torch
from compat.torch.optim.optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
    "will result in PyTorch skipping the first value of the learning rate schedule. "
    "See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)

_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)


def _copy_value(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value


def _group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """``[group[key] for group in param_groups]``, Tensors cloned."""
    return [_copy_value(group[key]) for group in optimizer.param_groups]


def _set_group_value(group: dict[str, Any], key: str, value: Any) -> None:
    """Write ``value`` into ``group[key]``: in place when the group holds a Tensor."""
    current = group[key]
    if isinstance(current, torch.Tensor):
        current.fill_(value.item() if isinstance(value, torch.Tensor) else value)
    else:
        group[key] = value


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """One value per param group: a list/tuple is checked for length, a scalar repeated."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(value)} values, param_groups has {n}."
            )
        values = list(value)
    else:
        values = [value] * n
    return [_copy_value(v) for v in values]


def _track_optimizer_step(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` once so that calling it sets ``optimizer._opt_called``."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    unbound = getattr(optimizer.step, "__func__", None)
    # the bound method only where there is no function to call with the optimizer: a bound
    # method held by the wrapper the optimizer holds is a reference cycle (PyTorch has none)
    step = optimizer.step if unbound is None else None
    opt_ref = weakref.ref(optimizer)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opt = opt_ref()
        opt._opt_called = True  # type: ignore[union-attr]
        if step is not None:
            return step(*args, **kwargs)
        return unbound(opt, *args, **kwargs)

    if unbound is not None:
        wrapper = functools.wraps(unbound)(wrapper)
    wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    optimizer.step = wrapper  # type: ignore[method-assign]


def _lambdas_state(lr_lambdas: list[Callable[[int], float]]) -> list[dict[str, Any] | None]:
    # Plain functions and lambdas are not saved; callable objects save their __dict__.
    return [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__) for fn in lr_lambdas]


def _lambdas_list(optimizer: Optimizer, lr_lambda: Any) -> list[Callable[[int], float]]:
    n = len(optimizer.param_groups)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * n


class LRScheduler:
    """Base class of the schedulers: subclasses implement ``get_lr()``.

    Construction records ``initial_lr`` in every param group (``last_epoch=-1``)
    or requires it (resuming with ``last_epoch >= 0``), then performs the
    initial step. ``step()`` advances ``last_epoch`` and writes the new learning
    rates into the optimizer; ``get_last_lr()`` returns them.
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy_value(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run "
                        "(not recommended)"
                    )
        self.base_lrs: list[Any] = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """Reset the step count and take the construction-time step."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by ``state_dict()``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates written by the latest ``step()`` (one per param group)."""
        return self._last_lr

    def get_lr(self) -> list[Any]:
        """The learning rates for the current ``last_epoch`` (called by ``step()``)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (``epoch``, deprecated, jumps there via the closed form)."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError("get_lr() must return one learning rate per param group")
        for group, lr in zip(groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr: list[Any] = _group_values(self.optimizer, "lr")

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, "
                "please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def _current_lrs(self) -> list[Any]:
        return _group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """Old name of ``LRScheduler`` (kept by PyTorch for backward compatibility)."""
