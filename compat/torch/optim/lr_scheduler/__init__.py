"""``torch.optim.lr_scheduler``: PyTorch's learning-rate schedulers on compat optimizers.

Schedulers only rewrite ``param_group["lr"]`` (and, for ``OneCycleLR`` and ``CyclicLR``, the
group's ``momentum`` or ``betas``) between optimizer steps. The optimizers pass
those hyperparameters to their compiled per-group program as runtime scalars, so a
schedule never recompiles the step.

The chainable (recursive) forms of PyTorch 2.13 are followed operation by
operation, so every learning rate is the same Python float PyTorch computes;
``step(epoch)`` (deprecated in PyTorch) uses the closed forms, as PyTorch does.

The schedules live in modules by job (``base``, ``decay``, ``cyclic``, ``composite``,
``plateau``); this package re-exports them.

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

from compat.torch.optim.lr_scheduler.base import (  # noqa: F401 (public in PyTorch)
    EPOCH_DEPRECATION_WARNING,
    LRScheduler,
    _LRScheduler,
)
from compat.torch.optim.lr_scheduler.composite import ChainedScheduler, SequentialLR
from compat.torch.optim.lr_scheduler.cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from compat.torch.optim.lr_scheduler.decay import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from compat.torch.optim.lr_scheduler.plateau import ReduceLROnPlateau

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
