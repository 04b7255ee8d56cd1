"""Compiled optimizer steps: one ``funcgrad.jit`` program updates a whole parameter group.

The per-tensor path runs a handful of eager ops per parameter; here the same
pure update rules (``_functional``) are traced once over lists of arrays, so a
step of an ``n``-parameter group is one XLA call. Hyperparameters travel as one
small array argument (changing ``lr`` does not recompile); only the static
configuration (momentum on/off, amsgrad, ...), the parameters' shapes and
dtypes, and which state buffers exist select a new program. ``trace_counts``
counts how often each step function has been traced (a new program).

This needs the compat core to expose a Tensor's array (see ``array_access``);
otherwise, or with ``fused=False``, optimizers use the per-tensor path.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from compat._core.tensor import Tensor
from compat.torch.optim._functional import (
    AdamConfig,
    AdamScalars,
    SGDConfig,
    SGDScalars,
    adam_update,
    sgd_update,
)
from funcgrad import lax as flax
from funcgrad._compat_contract import call_jitted, compile_cache, donates, x64

__all__ = [
    "ArrayAccess",
    "adam_step",
    "array_access",
    "rule_step",
    "sgd_step",
    "trace_counts",
]

# How many times each compiled step ("sgd_step", "adam_step") was traced: one trace per
# new program; a learning-rate schedule must not add any.
trace_counts: Counter[str] = Counter()


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
    """Feature-detect the compat core's array plumbing (``compat._core.tensor``).

    Needs ``Tensor._data`` (the current array), ``Tensor._set_data_inplace``
    (swap the array and bump the version counter, exactly what an in-place op
    under ``no_grad`` does) and ``Tensor._make`` (a new leaf from an array).
    """
    tensor_type = Tensor
    needed = ("_data", "_set_data_inplace", "_make")
    if tensor_type is None or not all(hasattr(tensor_type, n) for n in needed):
        return None
    set_inplace = tensor_type._set_data_inplace
    make = tensor_type._make
    return ArrayAccess(
        get=lambda t: t._data,
        put=set_inplace,
        wrap=make,
    )


def _hyper_dtype() -> Any:
    # Scalars travel in double precision (the steps run in compat's x64 scope), rounded
    # once to each parameter's dtype inside the program, as PyTorch rounds its Python scalars.
    return np.float64


class _Ops:
    """``sqrt``/``maximum`` on traced arrays (``funcgrad.numpy``)."""

    @staticmethod
    def sqrt(x: Any) -> Any:

        return fnp.sqrt(x)

    @staticmethod
    def maximum(a: Any, b: Any) -> Any:

        return fnp.maximum(a, b)

    @staticmethod
    def minimum(a: Any, b: Any) -> Any:

        return fnp.minimum(a, b)

    @staticmethod
    def abs(x: Any) -> Any:

        return fnp.abs(x)

    @staticmethod
    def sign(x: Any) -> Any:

        return fnp.sign(x)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:

        return fnp.where(cond, a, b)

    @staticmethod
    def select(flag: Any, then: Callable[[], Any], otherwise: Callable[[], Any]) -> Any:
        """``then()`` where the runtime scalar ``flag`` is non-zero, else ``otherwise()``."""

        return fnp.where(flag != 0, then(), otherwise())


def _jit(fun: Callable[..., Any], donate: tuple[int, ...] = ()) -> Any:

    return fg.jit(fun, donate_argnums=donate)


# ---------------------------------------------------------------------------
# Buffer donation
# ---------------------------------------------------------------------------
#
# The step writes new parameters and state; donating the old buffers lets XLA
# update them in place instead of allocating (on CPU this halves an Adam step's
# time). A buffer may only be donated if nothing but its tensor's storage cell
# refers to the array: a ``deepcopy``/``clone`` of a tensor, or a graph that
# saved it, can share the very same array object, and donating would delete it
# under them. CPython's reference count proves exclusivity (a NumPy view of the
# buffer is an external reference XLA itself detects; it then copies).

_DONATION = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


def _exclusive(access: ArrayAccess, tensors: Sequence[Any]) -> bool:
    """Whether every tensor's array is referenced by its storage alone."""
    if not _DONATION:
        return False
    get = access.get
    # getrefcount sees: the storage cell's reference + its own argument.
    return all(t is not None and sys.getrefcount(get(t)) <= 2 for t in tensors)


def _donated(access: ArrayAccess, groups: Sequence[tuple[int, Sequence[Any]]]) -> tuple[int, ...]:
    if not donates():
        return ()
    return tuple(pos for pos, tensors in groups if tensors and _exclusive(access, tensors))


# ---------------------------------------------------------------------------
# SGD
# ---------------------------------------------------------------------------


def _scalars(hyper: Any, row: int | None, n: int, dtype: Any, cache: dict) -> list[Any]:
    """The ``n`` hyperparameters of a parameter (row ``row`` of the traced 2-D ``hyper``, or
    the 1-D ``hyper`` shared by all with ``row=None``) as scalars of ``dtype``: ``hyper``
    cast once per dtype, each scalar one slice and reshape (tracing ``hyper[i, j]``'s
    general indexing per scalar per parameter was a tenth of a first training step)."""
    key = (dtype, row)
    got = cache.get(key)
    if got is not None:
        return got
    h = cache.get(dtype)
    if h is None:
        h = cache[dtype] = hyper.astype(dtype)
    if row is None:
        got = [flax.reshape(flax.slice(h, (j,), (j + 1,)), ()) for j in range(n)]
    else:
        got = [flax.reshape(flax.slice(h, (row, j), (row + 1, j + 1)), ()) for j in range(n)]
    cache[key] = got
    return got


@compile_cache.register_lru_kind("optim_sgd_programs")
@functools.lru_cache(maxsize=64)
def _sgd_program(cfg: SGDConfig, donate: tuple[int, ...]) -> Any:
    def step(params: list, grads: list, bufs: list, hyper: Any) -> tuple[list, list]:
        trace_counts["sgd_step"] += 1  # runs only while tracing
        new_params, new_bufs = [], []
        cache: dict = {}
        for p, g, b in zip(params, grads, bufs):
            s = SGDScalars(*_scalars(hyper, None, len(SGDScalars._fields), p.dtype, cache))
            new_p, new_b = sgd_update(cfg, s, p, g, b)
            new_params.append(new_p)
            new_bufs.append(new_b)
        return new_params, new_bufs

    step.__name__ = "sgd_step"
    return _jit(step, donate)


@x64
def sgd_step(
    access: ArrayAccess,
    cfg: SGDConfig,
    s: SGDScalars,
    params: Sequence[Any],
    grads: Sequence[Any],
    bufs: Sequence[Any],
) -> list[Any]:
    """Update ``params`` and existing momentum buffers in place.

    Returns the momentum buffers: the given tensors (updated), new tensors
    for first steps, ``None`` without momentum.
    """
    get, put, wrap = access
    hyper = np.asarray(s, dtype=_hyper_dtype())
    existing = [b for b in bufs if b is not None]
    donate = _donated(access, [(0, params), (2, existing if len(existing) == len(bufs) else [])])
    new_params, new_bufs = call_jitted(
        _sgd_program(cfg, donate),
        [get(p) for p in params],
        [get(g) for g in grads],
        [None if b is None else get(b) for b in bufs],
        hyper,
    )
    for p, a in zip(params, new_params):
        put(p, a)
    out = []
    for b, a in zip(bufs, new_bufs):
        if a is None:
            out.append(None)
        elif b is None:
            out.append(wrap(a))
        else:
            put(b, a)
            out.append(b)
    return out


# ---------------------------------------------------------------------------
# Adam / AdamW
# ---------------------------------------------------------------------------


@compile_cache.register_lru_kind("optim_adam_programs")
@functools.lru_cache(maxsize=64)
def _adam_program(cfg: AdamConfig, donate: tuple[int, ...]) -> Any:
    n_scalars = len(AdamScalars._fields)

    def step(
        params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, maxes: list, hyper: Any
    ) -> tuple[list, list, list, list]:
        trace_counts["adam_step"] += 1  # runs only while tracing
        outs: tuple[list, list, list, list] = ([], [], [], [])
        cache: dict = {}
        for i, (p, g, m, v, vmax) in enumerate(zip(params, grads, exp_avgs, exp_avg_sqs, maxes)):
            s = AdamScalars(*_scalars(hyper, i, n_scalars, p.dtype, cache))
            for out, value in zip(outs, adam_update(cfg, s, _Ops, p, g, m, v, vmax)):
                out.append(value)
        return outs

    step.__name__ = "adam_step"
    return _jit(step, donate)


@x64
def adam_step(
    access: ArrayAccess,
    cfg: AdamConfig,
    scalars: Sequence[AdamScalars],
    params: Sequence[Any],
    grads: Sequence[Any],
    exp_avgs: Sequence[Any],
    exp_avg_sqs: Sequence[Any],
    maxes: Sequence[Any],
) -> None:
    """Update ``params`` and the state tensors (moments, running max) in place."""
    get, put, _ = access
    hyper = np.asarray(scalars, dtype=_hyper_dtype())
    amsgrad = cfg.amsgrad
    donate = _donated(
        access,
        [(0, params), (2, exp_avgs), (3, exp_avg_sqs), (4, maxes if amsgrad else [])],
    )
    new_p, new_m, new_v, new_max = call_jitted(
        _adam_program(cfg, donate),
        [get(p) for p in params],
        [get(g) for g in grads],
        [get(m) for m in exp_avgs],
        [get(v) for v in exp_avg_sqs],
        [get(x) for x in maxes] if amsgrad else [None] * len(params),
        hyper,
    )
    for tensors, arrays in ((params, new_p), (exp_avgs, new_m), (exp_avg_sqs, new_v)):
        for t, a in zip(tensors, arrays):
            put(t, a)
    if amsgrad:
        for t, a in zip(maxes, new_max):
            put(t, a)


# ---------------------------------------------------------------------------
# Any rule of ``_rules`` (Adadelta, Adagrad, RMSprop, Adamax, NAdam, RAdam, ASGD, Rprop)
# ---------------------------------------------------------------------------


@compile_cache.register_lru_kind("optim_rule_programs")
@functools.lru_cache(maxsize=128)
def _rule_program(rule: Any, cfg: Any, scalars_type: Any, donate: tuple[int, ...]) -> Any:
    n_scalars = len(scalars_type._fields)

    def step(params: list, grads: list, states: list, hyper: Any) -> tuple[list, list]:
        trace_counts[rule.name + "_step"] += 1  # runs only while tracing
        new_params: list = []
        new_states: list = [[] for _ in states]
        cache: dict = {}
        for i, (p, g) in enumerate(zip(params, grads)):
            s = scalars_type(*_scalars(hyper, i, n_scalars, p.dtype, cache))
            out = rule.fn(cfg, s, _Ops, p, g, *(st[i] for st in states))
            new_params.append(out[0])
            for lst, value in zip(new_states, out[1:]):
                lst.append(value)
        return new_params, new_states

    step.__name__ = rule.name + "_step"
    return _jit(step, donate)


@x64
def rule_step(
    access: ArrayAccess,
    rule: Any,
    cfg: Any,
    scalars: Sequence[Any],
    params: Sequence[Any],
    grads: Sequence[Any],
    states: Sequence[Sequence[Any]],
) -> None:
    """Update ``params`` and each list of state tensors in ``states`` in place with one program.

    ``scalars`` holds one NamedTuple of Python floats per parameter (the
    runtime hyperparameters); ``states[k][i]`` is parameter ``i``'s ``k``-th
    state tensor in the rule's order.
    """
    get, put, _ = access
    hyper = np.asarray(scalars, dtype=_hyper_dtype()).reshape(len(params), -1)
    flat_states = [t for st in states for t in st]
    donate = _donated(access, [(0, params), (2, flat_states)])
    new_params, new_states = call_jitted(
        _rule_program(rule, cfg, type(scalars[0]), donate),
        [get(p) for p in params],
        [get(g) for g in grads],
        [[get(t) for t in st] for st in states],
        hyper,
    )
    for t, a in zip(params, new_params):
        put(t, a)
    for st, arrays in zip(states, new_states):
        for t, a in zip(st, arrays):
            put(t, a)
