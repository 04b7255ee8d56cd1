"""``torch.optim.lr_scheduler``: PyTorch's learning-rate schedulers on compat optimizers.

Schedulers only rewrite ``param_group["lr"]`` (and, for ``OneCycleLR`` and ``CyclicLR``, the
group's ``momentum`` or ``betas``) between optimizer steps. The optimizers pass
those hyperparameters to their compiled per-group program as runtime scalars, so a
schedule never recompiles the step.

The chainable (recursive) forms of PyTorch 2.13 are followed operation by
operation, so every learning rate is the same Python float PyTorch computes;
``step(epoch)`` (deprecated in PyTorch) uses the closed forms, as PyTorch does.

Example:
    >>> import compat.torch as torch
    >>> model = torch.nn.Linear(2, 1)
    >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr()
    [0.05]
"""

from __future__ import annotations

import functools
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, SupportsFloat

import compat.torch as torch
from compat.torch.optim.optimizer import Optimizer

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]

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


# ---------------------------------------------------------------------------
# Helpers: group values may be Python numbers or 0-d Tensors (never aliased)
# ---------------------------------------------------------------------------


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
    step = optimizer.step
    unbound = getattr(step, "__func__", None)
    opt_ref = weakref.ref(optimizer)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opt = opt_ref()
        opt._opt_called = True  # type: ignore[union-attr]
        if unbound is None:
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


# ---------------------------------------------------------------------------
# Base class
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Multiplicative schedules
# ---------------------------------------------------------------------------


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)`` (one function, or one per param group)."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_list(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """Attributes except the optimizer; lambdas only as callable objects' ``__dict__``."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = _lambdas_state(self.lr_lambdas)
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes; callable-object lambdas get their saved ``__dict__`` back."""
        saved = dict(state_dict)
        lambdas = saved.pop("lr_lambdas")
        self.__dict__.update(saved)
        for fn, fn_state in zip(self.lr_lambdas, lambdas):
            if fn_state is not None:
                fn.__dict__.update(fn_state)

    def get_lr(self) -> list[Any]:
        """``base_lr * lambda(last_epoch)`` per group."""
        self._warn_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(LRScheduler):
    """``lr *= lr_lambda(epoch)`` at every step after the first."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_list(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self) -> list[Any]:
        """The current lr times ``lambda(last_epoch)`` (unchanged on the initial step)."""
        self._warn_outside_step()
        if self._is_initial:
            return self._current_lrs()
        groups = self.optimizer.param_groups
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, groups)]


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """Decay at non-zero multiples of ``step_size``."""
        self._warn_outside_step()
        epoch = self.last_epoch
        if epoch == 0 or epoch % self.step_size != 0:
            return self._current_lrs()
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        power = self.last_epoch // self.step_size
        return [base * self.gamma**power for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone (repeated milestones compound)."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """Decay by ``gamma ** count`` when ``last_epoch`` is a milestone."""
        self._warn_outside_step()
        count = self.milestones.get(self.last_epoch, 0)
        if count == 0:
            return self._current_lrs()
        return [g["lr"] * self.gamma**count for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the lr by ``factor`` until epoch ``total_iters``, then restore it."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """``* factor`` at epoch 0, ``* (1 / factor)`` at ``total_iters``."""
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch == self.total_iters:
            return [g["lr"] * (1.0 / self.factor) for g in groups]
        return self._current_lrs()

    def _get_closed_form_lr(self) -> list[Any]:
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr by a factor moving linearly from ``start_factor`` to ``end_factor``."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The ratio of consecutive factors applied to the current lr."""
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        epoch = self.last_epoch
        if epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or epoch > self.total_iters:
            return self._current_lrs()
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor + (epoch - 1) * delta)
        return [g["lr"] * ratio for g in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        delta = self.end_factor - self.start_factor
        epochs = min(self.total_iters, self.last_epoch)
        return [
            base * (self.start_factor + delta * epochs / self.total_iters) for base in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The current lr times ``gamma`` (unchanged on the initial step)."""
        self._warn_outside_step()
        if self._is_initial:
            return self._current_lrs()
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = initial_lr * (1 - epoch / total_iters) ** power`` until ``total_iters``."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The ratio of consecutive decay factors applied to the current lr."""
        self._warn_outside_step()
        epoch, total = self.last_epoch, self.total_iters
        if self._is_initial or epoch > total:
            return self._current_lrs()
        decay = ((1.0 - epoch / total) / (1.0 - (epoch - 1) / total)) ** self.power
        return [g["lr"] * decay for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - frac) ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from ``initial_lr`` to ``eta_min`` over ``T_max`` epochs (SGDR, no restarts).

    Uses PyTorch's recursive form (each step rescales the current lr), so it
    composes with other schedulers exactly as PyTorch's does.
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The recursive cosine update (closed form on the first step after a resume)."""
        self._warn_outside_step()
        if self._is_initial:
            return self._current_lrs()
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._step_count == 1 and epoch > 0:
            cos = math.cos(epoch * math.pi / t_max)
            return [eta_min + (base - eta_min) * (1 + cos) / 2 for base in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            one_minus_cos = 1 - math.cos(math.pi / t_max)
            return [
                g["lr"] + (base - eta_min) * one_minus_cos / 2
                for base, g in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (
            1 + math.cos(math.pi * (epoch - 1) / t_max)
        )
        return [ratio * (g["lr"] - eta_min) + eta_min for g in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        cos = math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base - self.eta_min) * (1 + cos) / 2 for base in self.base_lrs]


# ---------------------------------------------------------------------------
# OneCycleLR
# ---------------------------------------------------------------------------


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to ``max_lr``, then anneal far below ``initial_lr``.

    With ``cycle_momentum`` the SGD ``momentum`` (or Adam's ``beta1``) moves the
    opposite way between ``max_momentum`` and ``base_momentum``. Meant to be
    stepped after every batch; stepping past ``total_steps`` raises.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = self._total_steps(total_steps, epochs, steps_per_epoch)

        up_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            down_end = float(2 * pct_start * self.total_steps) - 2
            self._schedule_phases = [
                _phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(down_end, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                _phase(last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                _phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]

        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy

        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, peak in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _per_group("max_momentum", optimizer, max_momentum)
            lows = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, high, low in zip(optimizer.param_groups, highs, lows):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _total_steps(total_steps: int | None, epochs: int | None, per_epoch: int | None) -> int:
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is not None and per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(per_epoch, int) or per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {per_epoch}")
            return epochs * per_epoch
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        if self._anneal_func_type == "linear":
            return self._annealing_linear(start, end, pct)
        raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        """Straight line from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def get_lr(self) -> list[Any]:
        """The lr of the current phase (momentum/beta1 is written to the groups here)."""
        self._warn_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        last_phase = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == last_phase:
                    pct = (step - start) / (end - start)
                    lrs.append(
                        self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    )
                    if self.cycle_momentum:
                        momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                        self._set_momentum(group, momentum)
                    break
                start = end
        return lrs


def _phase(end_step: float, start_lr: str, end_lr: str, start_m: str, end_m: str) -> dict[str, Any]:
    return {
        "end_step": end_step,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": start_m,
        "end_momentum": end_m,
    }


# ---------------------------------------------------------------------------
# Cyclical schedules: CyclicLR, CosineAnnealingWarmRestarts
# ---------------------------------------------------------------------------


def _constant_scale(x: float) -> float:
    return 1.0


def _halving_scale(x: float) -> float:
    return 1 / (2.0 ** (x - 1))


def _power_scale(gamma: float, x: float) -> float:
    return gamma**x


class CyclicLR(LRScheduler):
    """Cyclical learning rates (CLR): a triangle between ``base_lr`` and ``max_lr``.

    A cycle lasts ``step_size_up + step_size_down`` steps (meant to be stepped
    per batch). The amplitude is scaled per cycle (``'triangular'``: constant,
    ``'triangular2'``: halved each cycle) or per iteration (``'exp_range'``:
    ``gamma ** iteration``), or by a custom ``scale_fn`` evaluated on the cycle
    number or the iteration (``scale_mode``). With ``cycle_momentum`` the SGD
    ``momentum`` (or Adam's ``beta1``) moves inversely between ``max_momentum``
    and ``base_momentum``.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: Literal["cycle", "iterations"] = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)

        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size

        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for group, high, low in zip(
                    optimizer.param_groups, self.max_momentums, self.base_momentums
                ):
                    self._set_momentum(group, high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        # PyTorch's order: the construction step used ``initial_lr``; from now on base_lr.
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        """Pick the built-in scale function of ``mode`` (and its ``scale_mode``)."""
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref: Callable[[float], float] = _constant_scale
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = _halving_scale
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = functools.partial(_power_scale, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude scale at ``x`` (cycle number or iteration)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self) -> list[Any]:
        """The lr at iteration ``last_epoch`` (momentum/beta1 is written to the groups here)."""
        self._warn_outside_step()
        it = self.last_epoch
        cycle = math.floor(1 + it / self.total_size)
        x = 1.0 + it / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else it
        # scale_fn is called once per group and value, as PyTorch does (custom ones may count).
        lrs = [
            base + (peak - base) * scale_factor * self.scale_fn(at)
            for base, peak in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            momenta = [
                high - (high - low) * scale_factor * self.scale_fn(at)
                for low, high in zip(self.base_momentums, self.max_momentums)
            ]
            for group, momentum in zip(self.optimizer.param_groups, momenta):
                self._set_momentum(group, momentum)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """Attributes except the optimizer and the built-in scale function.

        A custom ``scale_fn`` is saved only as a callable object's ``__dict__``.
        """
        out = {
            k: v
            for k, v in self.__dict__.items()
            if k not in ("optimizer", "_scale_fn_ref", "_scale_fn_custom")
        }
        fn = self._scale_fn_custom
        out["_scale_fn_custom"] = (
            None if fn is None or isinstance(fn, types.FunctionType) else dict(fn.__dict__)
        )
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes (a saved callable object's state goes back into ``scale_fn``)."""
        saved = dict(state_dict)
        fn_state = saved.pop("_scale_fn_custom")
        self.__dict__.update(saved)
        if fn_state is not None:
            self._scale_fn_custom.__dict__.update(fn_state)  # type: ignore[union-attr]
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing from ``initial_lr`` to ``eta_min`` with warm restarts.

    The first period lasts ``T_0`` epochs, each next one ``T_mult`` times longer.
    ``step(epoch)`` accepts fractional epochs (e.g. ``epoch + i / iters`` per
    batch) and may be interleaved with ``step()``; it is not deprecated here.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """``eta_min + (base - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2`` per group."""
        self._warn_outside_step()
        eta_min = self.eta_min
        cos = math.cos(math.pi * self.T_cur / self.T_i)
        return [eta_min + (base - eta_min) * (1 + cos) / 2 for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or jump to (possibly fractional) ``epoch``.

        No step-order or deprecation warnings, and ``_step_count`` stays 0, as in PyTorch.
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                # the restart index n: T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


# ---------------------------------------------------------------------------
# Compositions
# ---------------------------------------------------------------------------


def _check_members(owner: str, optimizer: Optimizer, schedulers: Sequence[Any]) -> None:
    for i, sched in enumerate(schedulers):
        if not hasattr(sched, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(sched, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence."
            )
        if optimizer != sched.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(sched).__name__} at index {i} has {sched.optimizer}, which "
                f"is different from {type(optimizer).__name__}."
            )


class _Composite(LRScheduler):
    """State dicts of schedulers that own other schedulers (saved under ``_schedulers``)."""

    _schedulers: Sequence[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """Own attributes plus each member's ``state_dict()``."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore own attributes and every member's state."""
        saved = dict(state_dict)
        members = saved.pop("_schedulers")
        self.__dict__.update(saved)
        for sched, sched_state in zip(self._schedulers, members):
            sched.load_state_dict(sched_state)


class SequentialLR(_Composite):
    """Run ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``.

    At a milestone the next scheduler restarts from epoch 0 (closed form).
    """

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_members(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo the members' construction steps, then start the first active one afresh.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Step every (nested) member back by one epoch."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for member in target._schedulers:
                self.recursive_undo(member)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the active scheduler (restarting it at its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched._update_lr(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler in turn at each ``step()`` (their effects compose)."""

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(
                f"{name} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(name, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step each member scheduler."""
        for sched in self._schedulers:
            sched.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


# ---------------------------------------------------------------------------
# ReduceLROnPlateau
# ---------------------------------------------------------------------------


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` once a metric has not improved for ``patience`` epochs.

    ``step(metric)`` is called with the monitored value; an improvement is
    relative (``threshold_mode='rel'``) or absolute to the best value so far.
    After a reduction ``cooldown`` epochs pass before bad epochs count again;
    lrs never go below ``min_lr`` and changes smaller than ``eps`` are skipped.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: Literal["min", "max"] = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: Literal["rel", "abs"] = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr: float | None = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record one epoch's metric; reduce the lrs when patience runs out."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch

        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch: int) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                _set_group_value(group, "lr", new)

    @property
    def in_cooldown(self) -> bool:
        """Whether reductions are still paused after the last one."""
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            if self.threshold_mode == "rel":
                return a < best * (1.0 - self.threshold)
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes (and the comparison rule they define)."""
        self.__dict__.update(state_dict)
        self._init_is_better(
            mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode
        )
