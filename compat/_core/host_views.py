"""Unrecorded views of host arrays: NumPy's own reshape, transpose and slices, no op program.

A ``view``, ``reshape``, ``transpose``, ``split`` or basic index (``x[:, -1]``) of a tensor
is one ``reshape`` or ``transpose`` equation or a few ``slice``/``dynamic_slice`` ones,
whose host rules are NumPy's (views of the same buffer). Through
:func:`compat._core.tensor.apply` each new shape costs what any new op signature costs:
a lookup (a shape template's instantiation, or a trace at the first three lengths of a
growing sequence) and a host plan's run, ~20-30 us of Python in a generated token where
NumPy's call is ~0.3 us; a small GPT's token makes 19 such calls of 48. Where ``apply``
would only evaluate host values, :func:`layout_op` calls NumPy directly:

* the call records nothing (grad mode off, or an input that requires no grad);
* no forward-AD level or dispatch mode (``tensor.FORWARD``), no funcgrad trace
  (``torch.func``), no lazy execution, and a tier mode that runs cold work on the host
  tier (in the compiled mode every eager op is an XLA executable);
* the input's value is a NumPy array (a host-tier value: not a jax array, a lazy value
  or a tracer) and, for a view, not stale (its base written since).

The output is read-only, as a host plan's (values are immutable). Everything else,
errors included (checked before by the callers), is ``apply``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import grad_mode as _gm
from compat._core import tensor as _t
from compat._core.tensor import Tensor, _new_tensor, apply
from funcgrad._compat_contract import HOST_MODES, lazy_state, tier_local, tier_policy, tracing

_ndarray = np.ndarray


def host_value(input: Tensor) -> np.ndarray | None:
    """``input``'s NumPy array where an unrecorded op on it may run on NumPy directly
    (the conditions in the module docstring), else ``None``."""
    x = input._st.a
    if type(x) is not _ndarray:
        return None
    v = input._view
    if (
        (input._requires_grad and _gm._state.record)
        or (v is not None and v.seen != input._vc.v)
        or _t.FORWARD is not None
        or tracing.stack
        or lazy_state.on
        or not HOST_MODES.get(tier_local.mode or tier_policy.tier)
    ):
        return None
    return x


def layout_op(
    fn: Callable, name: str, input: Tensor, static: tuple, host: Callable[[Any], Any]
) -> Tensor:
    """``apply(fn, name, (input,), static)``, or ``host(input's array)`` where that call
    would only evaluate a host value (``host``: NumPy's form of ``fn``, returning an
    array, or a tuple of them where ``fn`` returns a tuple)."""
    x = host_value(input)
    if x is None:
        return apply(fn, name, (input,), static)
    out = host(x)
    if type(out) is tuple:  # (a multi-output op: ``apply`` returns a tuple of tensors)
        return tuple([_read_only(o) for o in out])
    return _read_only(out)


def _read_only(a: np.ndarray) -> Tensor:
    if a.flags.writeable:
        a.flags.writeable = False
    return _new_tensor(Tensor, a)


def host_slices(axis: int, bounds: list[tuple[int, int]]) -> Callable[[Any], tuple]:
    """NumPy's form of ``split``: the slices ``a:b`` of ``bounds`` along ``axis``."""
    lead = (slice(None),) * axis
    return lambda x: tuple([x[(*lead, slice(a, b))] for a, b in bounds])


def host_index(input: Tensor, spec: tuple, arrays: list) -> Tensor | None:
    """``input[spec]`` (``shape_ops.index_spec``'s form) on NumPy for integers (wrapped
    into range there), slices (a positive step) and ``None``, where :func:`host_value`
    allows; else ``None`` (the caller applies the op). NumPy's basic indexing is a view,
    as PyTorch's; the trailing ``...`` keeps an all-integer index a 0-d array."""
    x = host_value(input)
    if x is None:
        return None
    idx: list = []
    for s in spec:
        kind = s[0]
        if kind == "s":
            idx.append(slice(s[1], s[2], s[3]))
        elif kind == "d" and type(arrays[s[1]]) is int:
            idx.append(arrays[s[1]])
        elif kind == "n":
            idx.append(None)
        else:  # (an index array)
            return None
    if len(idx) - idx.count(None) > x.ndim:  # (too many indices: ``apply``'s error)
        return None
    return _read_only(x[(*idx, Ellipsis)])
