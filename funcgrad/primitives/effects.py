"""Effectful primitives: ``debug_callback`` (``funcgrad.debug.print``/``callback``).

An effectful primitive has no outputs that matter; it is kept for what it does.
It carries ``effectful = True``, which the clean-up passes read: dead-code
elimination keeps its equations and CSE never merges two of them. It is not
differentiated (its operands' primal values reach the callback; no cotangent
flows through it) and under ``vmap`` it runs once per batch element, in order, as
JAX's debug callbacks do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.host import device_value
from funcgrad.core.interp import bind
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import rand

FAMILY = "effects"

#: effectful: read by the passes (``funcgrad.passes.dce``/``cse``): never removed or merged
debug_callback_p = Primitive(
    "debug_callback", family=FAMILY, multiple_results=True, differentiable=False, effectful=True
)


@debug_callback_p.def_abstract_eval
def _debug_callback_abstract_eval(*avals: Aval, callback: Callable, ordered: bool) -> list:
    if not callable(callback):
        raise TypeError(f"debug_callback: callback must be callable, got {callback!r}")
    return []


@debug_callback_p.def_lower
def _debug_callback_lower(*vals: Any, callback: Callable, ordered: bool) -> list:
    # eagerly JAX calls it now; inside the jitted program it is a host callback
    jax.debug.callback(callback, *vals, ordered=ordered)
    return []


_SCALARS = (bool, int, float, complex)


def _device_arg(v: Any) -> Any:
    """A host value as the compiled tier hands it to a debug callback: a JAX array
    (strongly typed, as a value inside a jitted program is)."""
    if type(v) in _SCALARS:
        return device_value(v, Aval((), dtypes.python_scalar_dtype(v)))
    return device_value(v, Aval(np.shape(v), v.dtype))


@debug_callback_p.def_host
def _debug_callback_host(*vals: Any, callback: Callable, ordered: bool) -> list:
    # called once, now: a host plan runs its equations once each, in program order (and
    # the tier policy never moves an effectful program to a background compile)
    callback(*[_device_arg(v) for v in vals])
    return []


def _index(x: Any, i: int, dim: int) -> Any:
    n = len(x.shape)
    start = tuple(i if d == dim else 0 for d in range(n))
    limit = tuple(i + 1 if d == dim else s for d, s in enumerate(x.shape))
    return sh.squeeze(sh.slice(x, start, limit), (dim,))


@debug_callback_p.def_batch
def _debug_callback_batch(args: list, dims: list, *, callback: Callable, ordered: bool) -> tuple:
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    for i in range(size):  # one call per element, in order (JAX unrolls the same way)
        row = [a if d is None else _index(a, i, d) for a, d in zip(args, dims)]
        bind(debug_callback_p, *row, callback=callback, ordered=ordered)
    return [], []


def _noop(*args: Any) -> None:
    return None


@debug_callback_p.def_examples
def _debug_callback_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,)), rand(rng, (2, 2))], {"callback": _noop, "ordered": False}),
        Example([rand(rng, (2,))], {"callback": _noop, "ordered": True}),
    ]


def debug_callback(callback: Callable[..., None], *args: Any, ordered: bool = False) -> None:
    """Call ``callback(*args)`` on the runtime values of ``args`` (flat arrays)."""
    bind(debug_callback_p, *args, callback=callback, ordered=ordered)
