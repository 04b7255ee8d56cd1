"""``torch.optim.swa_utils``: stochastic weight averaging and exponential moving averages.

``AveragedModel`` keeps a copy of a model whose parameters (and, with ``use_buffers``,
buffers) are a running average of the model's, updated by ``update_parameters``;
``SWALR`` anneals each group's learning rate to its ``swa_lr``; ``update_bn``
recomputes batch-norm statistics with one pass over data. As PyTorch's.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

import compat.torch as torch
from compat.torch.nn.modules.batchnorm import _BatchNorm
from compat.torch.nn.modules.module import Module
from compat.torch.optim.lr_scheduler import LRScheduler
from compat.torch.optim.optimizer import Optimizer

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_avg_fn(decay: float = 0.999) -> Callable[..., Any]:
    """``avg_fn`` of an exponential moving average: ``decay * avg + (1 - decay) * new``."""
    _check_decay(decay)

    def ema_update(ema_param: Any, current_param: Any, num_averaged: Any) -> Any:
        with torch.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[..., Any]:
    """``avg_fn`` of the equally weighted average of the ``num_averaged + 1`` models."""

    def swa_update(averaged_param: Any, current_param: Any, num_averaged: Any) -> Any:
        with torch.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[..., None]:
    """``multi_avg_fn`` of an exponential moving average, in place over lists."""
    _check_decay(decay)

    def ema_update(ema_params: list[Any], current_params: list[Any], _: Any) -> None:
        with torch.no_grad():
            for e, c in zip(ema_params, current_params, strict=True):
                if e.is_floating_point() or e.is_complex():
                    e.lerp_(c, 1 - decay)
                else:
                    e.copy_(e * decay + c * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[..., None]:
    """``multi_avg_fn`` of the equally weighted average, in place over lists."""

    def swa_update(averaged: list[Any], current: list[Any], num_averaged: Any) -> None:
        with torch.no_grad():
            for a, c in zip(averaged, current, strict=True):
                if a.is_floating_point() or a.is_complex():
                    a.lerp_(c, float(1 / (num_averaged + 1)))
                else:
                    a.copy_(a + (c - a) / (num_averaged + 1))

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` holding a running average of its parameters (SWA by default;
    EMA with ``get_ema_avg_fn``/``get_ema_multi_avg_fn``). The first
    ``update_parameters`` copies the model's values; ``n_averaged`` counts the updates."""

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[..., Any] | None = None,
        multi_avg_fn: Callable[..., None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _values(self, model: Module) -> Iterable[Any]:
        if self.use_buffers:
            return itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current values into this copy's."""
        ours = [p.detach() for p in self._values(self.module)]
        theirs = [p.detach().to(o.device) for p, o in zip(self._values(model), ours)]
        first = int(self.n_averaged.item()) == 0
        with torch.no_grad():
            if first:
                for o, t in zip(ours, theirs):
                    o.copy_(t)
            elif self.avg_fn is not None:
                for o, t in zip(ours, theirs):
                    o.copy_(self.avg_fn(o, t, self.n_averaged.to(o.device)))
            else:
                fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                groups: dict[Any, tuple[list[Any], list[Any]]] = {}
                for o, t in zip(ours, theirs):
                    mine, other = groups.setdefault((str(o.device), o.dtype), ([], []))
                    mine.append(o)
                    other.append(t)
                for (device, _), (mine, other) in groups.items():
                    fn(mine, other, self.n_averaged.to(device))
            if not self.use_buffers:  # buffers follow the model, not averaged
                for b, mb in zip(self.module.buffers(), model.buffers()):
                    b.detach().copy_(mb.detach().to(b.device))
            self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch norms with one pass over
    ``loader`` (a batch that is a list or tuple gives its first element to the model)."""
    momenta: dict[Any, Any] = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    groups = optimizer.param_groups
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(value)} values, param_groups has {len(groups)}."
            )
        return list(value)
    return [value] * len(groups)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` epochs
    (cosine or linear), then hold it there."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.anneal_func = _cosine_anneal if anneal_strategy == "cos" else _linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The lr that, mixed with ``swa_lr`` by the anneal weight of this step, continues
        from the previous step's mixture (so a changed lr in between is kept)."""
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        out = []
        for group in self.optimizer.param_groups:
            swa = group["swa_lr"]
            start = swa if prev_alpha == 1 else (group["lr"] - prev_alpha * swa) / (1 - prev_alpha)
            out.append(swa * alpha + start * (1 - alpha))
        return out


def _linear_anneal(t: float) -> float:
    return t


def _cosine_anneal(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2
