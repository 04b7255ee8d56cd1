"""Learning-rate schedules: ``step -> value`` functions that work on traced step counts.

Every schedule is written with :mod:`funcgrad.numpy` (``where``/``minimum``/
``clip``, never a Python ``if`` on the step), so it can be evaluated inside
``fg.jit``, ``fg.scan`` and ``fg.fori_loop`` on the int32 step count an
optimizer state carries. Formulas follow optax.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import numpy as fnp

Schedule = Callable[[Any], Any]
"""A function from a step count (int or int32 array) to a scalar value."""


def constant_schedule(value: float) -> Schedule:
    """``value`` at every step.

    Example:
        >>> constant_schedule(0.1)(100)
        0.1
    """
    return lambda count: value


def polynomial_schedule(
    init_value: float,
    end_value: float,
    power: float,
    transition_steps: int,
    transition_begin: int = 0,
) -> Schedule:
    """Polynomial transition from ``init_value`` to ``end_value`` over ``transition_steps``.

    Holds ``init_value`` for the first ``transition_begin`` steps and
    ``end_value`` after the transition; ``transition_steps <= 0`` gives a
    constant ``init_value``.
    """
    if transition_steps <= 0:
        return constant_schedule(init_value)
    transition_begin = max(transition_begin, 0)

    def schedule(count: Any) -> Any:
        c = fnp.clip(fnp.asarray(count) - transition_begin, 0, transition_steps)
        frac = 1 - c / transition_steps
        return (init_value - end_value) * (frac**power) + end_value

    return schedule


def linear_schedule(
    init_value: float, end_value: float, transition_steps: int, transition_begin: int = 0
) -> Schedule:
    """Linear transition from ``init_value`` to ``end_value`` over ``transition_steps``.

    Example:
        >>> float(linear_schedule(1.0, 0.0, 10)(5))
        0.5
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def cosine_decay_schedule(
    init_value: float, decay_steps: int, alpha: float = 0.0, exponent: float = 1.0
) -> Schedule:
    """Cosine decay from ``init_value`` to ``alpha * init_value`` over ``decay_steps``.

    ``value(t) = init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * t / T))) ** exponent + alpha)``
    with ``t`` clipped to ``T = decay_steps``.
    """
    if not decay_steps > 0:
        raise ValueError(f"cosine_decay_schedule requires positive decay_steps, got {decay_steps}")
    steps = float(decay_steps)

    def schedule(count: Any) -> Any:
        c = fnp.minimum(fnp.asarray(count), steps)
        cosine = 0.5 * (1 + fnp.cos(math.pi * c / steps))
        return init_value * ((1 - alpha) * cosine**exponent + alpha)

    return schedule


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """Run ``schedules[i+1]`` from step ``boundaries[i]`` on, counting from that boundary."""
    if len(boundaries) != len(schedules) - 1:
        raise ValueError("join_schedules needs exactly one boundary fewer than schedules")

    def schedule(count: Any) -> Any:
        count = fnp.asarray(count)
        out = fnp.asarray(schedules[0](count))
        for boundary, sched in zip(boundaries, schedules[1:]):
            out = fnp.where(count < boundary, out, sched(count - boundary))
        return out

    return schedule


def warmup_cosine_decay_schedule(
    init_value: float,
    peak_value: float,
    warmup_steps: int,
    decay_steps: int,
    end_value: float = 0.0,
    exponent: float = 1.0,
) -> Schedule:
    """Linear warm-up from ``init_value`` to ``peak_value``, then cosine decay to ``end_value``.

    ``decay_steps`` counts the whole schedule, warm-up included (as in optax).
    """
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules(
        [
            linear_schedule(init_value, peak_value, warmup_steps),
            cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent),
        ],
        [warmup_steps],
    )


def exponential_decay(
    init_value: float,
    transition_steps: int,
    decay_rate: float,
    transition_begin: int = 0,
    staircase: bool = False,
    end_value: float | None = None,
) -> Schedule:
    """``init_value * decay_rate ** ((t - transition_begin) / transition_steps)``, optionally bounded."""
    if transition_steps <= 0 or decay_rate == 0:
        return constant_schedule(init_value)
    transition_begin = max(transition_begin, 0)

    def schedule(count: Any) -> Any:
        c = fnp.asarray(count) - transition_begin
        p = c / transition_steps
        if staircase:
            p = fnp.floor(p)
        v = fnp.where(c <= 0, init_value, init_value * decay_rate**p)
        if end_value is not None:
            bound = fnp.maximum if decay_rate < 1 else fnp.minimum
            v = bound(v, end_value)
        return v

    return schedule
