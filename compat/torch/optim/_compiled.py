"""Compiled optimizer steps: one ``funcgrad.jit`` program updates a whole parameter group.

The per-tensor path runs a handful of eager ops per parameter; here the same
pure update rules (``_functional``) are traced once over lists of arrays, so a
step of an ``n``-parameter group is one XLA call. Hyperparameters travel as one
small array argument (changing ``lr`` does not recompile); only the static
configuration (momentum on/off, amsgrad, ...), the parameters' shapes and
dtypes, and which state buffers exist select a new program.

This needs the compat core to expose a Tensor's array (see ``array_access``);
otherwise, or with ``fused=False``, optimizers use the per-tensor path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from compat.torch.optim._functional import (
    AdamConfig,
    AdamScalars,
    SGDConfig,
    SGDScalars,
    adam_update,
    sgd_update,
)

__all__ = ["ArrayAccess", "adam_step", "array_access", "sgd_step"]


class ArrayAccess(NamedTuple):
    """How to read a Tensor's array, replace it in place, and wrap a new array as a Tensor."""

    get: Callable[[Any], Any]
    put: Callable[[Any, Any], None]
    wrap: Callable[[Any], Any]


_UNRESOLVED = object()
_access: Any = _UNRESOLVED


def array_access() -> ArrayAccess | None:
    """The core's array accessors, or ``None`` when it offers none."""
    global _access
    if _access is _UNRESOLVED:
        _access = _resolve_access()
    return _access


def _resolve_access() -> ArrayAccess | None:
    return None


def _hyper_dtype() -> Any:
    from funcgrad.core import dtypes

    return np.float64 if dtypes.x64_enabled() else np.float32


class _Ops:
    sqrt = staticmethod(fnp.sqrt)
    maximum = staticmethod(fnp.maximum)


# ---------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _sgd_program(cfg: SGDConfig) -> Any:
    def step(params: list, grads: list, bufs: list, hyper: Any) -> tuple[list, list]:
        new_params, new_bufs = [], []
        for p, g, b in zip(params, grads, bufs):
            s = SGDScalars(*(hyper[j].astype(p.dtype) for j in range(len(SGDScalars._fields))))
            new_p, new_b = sgd_update(cfg, s, p, g, b)
            new_params.append(new_p)
            new_bufs.append(new_b)
        return new_params, new_bufs

    step.__name__ = "sgd_step"
    return fg.jit(step)


def sgd_step(
    access: ArrayAccess,
    cfg: SGDConfig,
    s: SGDScalars,
    params: Sequence[Any],
    grads: Sequence[Any],
    bufs: Sequence[Any],
) -> list[Any]:
    """Update ``params`` in place; returns the new momentum buffers (Tensors, or ``None``)."""
    get, put, wrap = access
    hyper = np.asarray(s, dtype=_hyper_dtype())
    buf_arrays = [None if b is None else get(b) for b in bufs]
    new_params, new_bufs = _sgd_program(cfg)(
        [get(p) for p in params], [get(g) for g in grads], buf_arrays, hyper
    )
    for p, a in zip(params, new_params):
        put(p, a)
    return [None if b is None else wrap(b) for b in new_bufs]


# ---------------------------------------------------------------------------
# Adam / AdamW
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _adam_program(cfg: AdamConfig) -> Any:
    n_scalars = len(AdamScalars._fields)

    def step(
        params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, maxes: list, hyper: Any
    ) -> tuple[list, list, list, list]:
        outs: tuple[list, list, list, list] = ([], [], [], [])
        for i, (p, g, m, v, vmax) in enumerate(zip(params, grads, exp_avgs, exp_avg_sqs, maxes)):
            s = AdamScalars(*(hyper[i, j].astype(p.dtype) for j in range(n_scalars)))
            for out, value in zip(outs, adam_update(cfg, s, _Ops, p, g, m, v, vmax)):
                out.append(value)
        return outs

    step.__name__ = "adam_step"
    return fg.jit(step)


def adam_step(
    access: ArrayAccess,
    cfg: AdamConfig,
    scalars: Sequence[AdamScalars],
    params: Sequence[Any],
    grads: Sequence[Any],
    exp_avgs: Sequence[Any],
    exp_avg_sqs: Sequence[Any],
    maxes: Sequence[Any],
) -> tuple[list[Any], list[Any], list[Any]]:
    """Update ``params`` in place; returns the new ``(exp_avgs, exp_avg_sqs, maxes)`` Tensors."""
    get, put, wrap = access
    hyper = np.asarray(scalars, dtype=_hyper_dtype())
    new_p, new_m, new_v, new_max = _adam_program(cfg)(
        [get(p) for p in params],
        [get(g) for g in grads],
        [get(m) for m in exp_avgs],
        [get(v) for v in exp_avg_sqs],
        [None if x is None else get(x) for x in maxes],
        hyper,
    )
    for p, a in zip(params, new_p):
        put(p, a)
    return (
        [wrap(a) for a in new_m],
        [wrap(a) for a in new_v],
        [None if a is None else wrap(a) for a in new_max],
    )
