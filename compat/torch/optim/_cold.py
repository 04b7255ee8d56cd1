"""An optimizer's first step as plain NumPy arithmetic, without tracing a program.

The compiled steps (``_compiled``) trace one program over a whole parameter group: for a
small GPT's AdamW that trace was about half of the first training step, and a one-off
step never repays it. A parameter's first step (``step == 1``) therefore runs the same
update rule (``_functional``; ``_rules`` for Adadelta, Adagrad, RMSprop, Adamax, NAdam,
RAdam, ASGD and Rprop) directly on NumPy arrays, parameter by parameter, when the
arrays are host values (JAX's default backend is the CPU, nothing is being traced, lazy
execution is off, and the tier mode is not ``compiled``); the fused program is traced
from the second step on, as the execution tiers trace an op only once it repeats.

The arithmetic is the one the host tier runs for the traced program: the same
operations in the same order on arrays of the parameter's dtype, each hyperparameter
rounded once from double precision to that dtype, NumPy's floating-point warnings off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from compat._core import device as _device
from compat.torch.optim._functional import AdamConfig, AdamScalars, adam_update
from funcgrad._compat_contract import host_scalars

__all__ = ["COLD_STEPS", "adam_host_step", "rule_host_step"]

#: a parameter's steps up to this count run on NumPy without tracing
COLD_STEPS = 1.0

# dtypes NumPy computes natively (bfloat16 & co. go through the traced program)
_DTYPES = frozenset(np.dtype(d) for d in ("float16", "float32", "float64"))


class _NumpyOps:
    """The rules' elementwise helpers on NumPy arrays."""

    sqrt = staticmethod(np.sqrt)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    abs = staticmethod(np.abs)
    sign = staticmethod(np.sign)
    where = staticmethod(np.where)

    @staticmethod
    def select(flag: Any, then: Any, otherwise: Any) -> Any:
        """``then()`` where the scalar ``flag`` is non-zero, else ``otherwise()`` (both
        evaluated, as in the traced program)."""
        return np.where(flag != 0, then(), otherwise())


def _host_array(a: Any) -> np.ndarray | None:
    """``a`` as a NumPy array without a copy, or ``None`` when it is not a host value."""
    if type(a) is np.ndarray:
        return a
    if isinstance(a, jax.Array):
        if getattr(a.device, "platform", None) != "cpu":
            return None
        return np.asarray(a)
    return None


def _frozen(a: Any, dtype: np.dtype) -> np.ndarray:
    """A result as the read-only host value a Tensor's storage holds."""
    a = np.asarray(a, dtype)
    if a.base is not None or a.flags.writeable:
        a = np.array(a, copy=a.base is not None)
        a.flags.writeable = False
    return a


def _host_rows(access: Any, columns: Sequence[Sequence[Any]]) -> list[list[Any]] | None:
    """Per parameter, the host arrays of its tensors in ``columns`` (one list per kind:
    params, grads, each state), or ``None`` where the NumPy step does not apply."""
    if not (host_scalars() and _device.default_is_cpu()):
        return None
    get = access.get
    rows = []
    for ts in zip(*columns):
        arrays = [_host_array(get(t)) for t in ts]
        if any(a is None for a in arrays):
            return None
        dtype = arrays[0].dtype
        if dtype not in _DTYPES or any(a.dtype != dtype for a in arrays):
            return None
        rows.append(arrays)
    return rows


def rule_host_step(
    access: Any,
    rule: Any,
    cfg: Any,
    scalars: Sequence[Any],
    params: Sequence[Any],
    grads: Sequence[Any],
    states: Sequence[Sequence[Any]],
) -> bool:
    """``_compiled.rule_step`` on NumPy: update ``params`` and ``states`` in place with
    ``rule``; ``False`` (nothing done) where the NumPy step does not apply."""
    rows = _host_rows(access, [params, grads, *states])
    if rows is None:
        return False
    with np.errstate(all="ignore"):  # XLA computes inf and nan silently
        outs = []
        for arrays, sc in zip(rows, scalars):
            dtype = arrays[0].dtype
            s = type(sc)(*(dtype.type(v) for v in sc))
            outs.append(rule.fn(cfg, s, _NumpyOps, *arrays))
    put = access.put
    for i, (arrays, out) in enumerate(zip(rows, outs)):
        dtype = arrays[0].dtype
        put(params[i], _frozen(out[0], dtype))
        for st, value in zip(states, out[1:]):
            put(st[i], _frozen(value, dtype))
    return True


def adam_host_step(
    access: Any,
    cfg: AdamConfig,
    scalars: Sequence[AdamScalars],
    params: Sequence[Any],
    grads: Sequence[Any],
    exp_avgs: Sequence[Any],
    exp_avg_sqs: Sequence[Any],
    maxes: Sequence[Any],
) -> bool:
    """Update ``params`` and their Adam state in place on NumPy; ``False`` (nothing done)
    when an array is not a host value of a NumPy dtype or the context rules it out."""
    amsgrad = cfg.amsgrad
    columns = [params, grads, exp_avgs, exp_avg_sqs] + ([maxes] if amsgrad else [])
    rows = _host_rows(access, columns)
    if rows is None:
        return False
    put = access.put
    with np.errstate(all="ignore"):  # XLA computes inf and nan silently
        outs = []
        for i, arrays in enumerate(rows):
            dtype = arrays[0].dtype
            s = AdamScalars(*(dtype.type(v) for v in scalars[i]))
            vmax = arrays[4] if amsgrad else None
            outs.append(adam_update(cfg, s, _NumpyOps, *arrays[:4], vmax))
    for i, (new_p, m, v, vmax) in enumerate(outs):
        dtype = rows[i][0].dtype
        put(params[i], _frozen(new_p, dtype))
        put(exp_avgs[i], _frozen(m, dtype))
        put(exp_avg_sqs[i], _frozen(v, dtype))
        if amsgrad:
            put(maxes[i], _frozen(vmax, dtype))
    return True
