"""``funcgrad.optim``: optax-style gradient transformations and learning-rate schedules.

    from funcgrad import optim

    opt = optim.chain(optim.clip_by_global_norm(1.0), optim.adam(1e-3))
    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    params = optim.apply_updates(params, updates)

Everything is written with :mod:`funcgrad.numpy` over pytrees of arrays, so
``init`` and ``update`` run eagerly or inside ``fg.jit`` / ``fg.scan`` /
``fg.fori_loop``, and ``learning_rate`` may be a float or a schedule of the
(traced) step count.
"""

from funcgrad.optim.schedules import (
    Schedule,
    constant_schedule,
    cosine_decay_schedule,
    exponential_decay,
    join_schedules,
    linear_schedule,
    polynomial_schedule,
    warmup_cosine_decay_schedule,
)
from funcgrad.optim.transforms import (
    EmptyState,
    GradientTransformation,
    ScalarOrSchedule,
    ScaleByAdamState,
    ScaleByScheduleState,
    TraceState,
    adam,
    adamw,
    add_decayed_weights,
    apply_updates,
    chain,
    clip_by_global_norm,
    global_norm,
    identity,
    momentum,
    safe_increment,
    scale,
    scale_by_adam,
    scale_by_learning_rate,
    scale_by_schedule,
    sgd,
    trace,
)

__all__ = [
    "EmptyState",
    "GradientTransformation",
    "ScalarOrSchedule",
    "ScaleByAdamState",
    "ScaleByScheduleState",
    "Schedule",
    "TraceState",
    "adam",
    "adamw",
    "add_decayed_weights",
    "apply_updates",
    "chain",
    "clip_by_global_norm",
    "constant_schedule",
    "cosine_decay_schedule",
    "exponential_decay",
    "global_norm",
    "identity",
    "join_schedules",
    "linear_schedule",
    "momentum",
    "polynomial_schedule",
    "safe_increment",
    "scale",
    "scale_by_adam",
    "scale_by_learning_rate",
    "scale_by_schedule",
    "sgd",
    "trace",
    "warmup_cosine_decay_schedule",
]
