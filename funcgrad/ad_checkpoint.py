"""``funcgrad.ad_checkpoint``, as ``jax.ad_checkpoint``: ``checkpoint`` (``remat``),
``checkpoint_name``, ``checkpoint_policies`` and ``print_saved_residuals``."""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import checkpoint_policies
from funcgrad.core import compile_cache
from funcgrad.core.interp import (
    Tracer,
    bind,
    to_aval,
)
from funcgrad.custom import trace_function
from funcgrad.debug import Residual, saved_residuals
from funcgrad.primitives.calls import checkpoint_name, checkpoint_p
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
]


#: traces of checkpointed functions, per function: a fresh ``checkpoint(f)`` of a
#: function already seen (with the same avals and static arguments) does not retrace
_CHECKPOINT_TRACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
compile_cache.register(
    "checkpoint_traces",
    size=lambda: sum(len(per_fun) for per_fun in list(_CHECKPOINT_TRACES.values())),
    clear=_CHECKPOINT_TRACES.clear,
)


def checkpoint(
    fun: Callable,
    *,
    prevent_cse: bool = True,
    policy: Callable | None = None,
    static_argnums: int | Sequence[int] = (),
) -> Callable:
    """Recompute ``fun``'s forward pass during the backward pass instead of saving it.

    Trades compute for memory in reverse mode (also called rematerialisation; the
    alias ``fg.remat`` is the same function).

    Args:
        fun: the function whose intermediate values should not be kept.
        prevent_cse: accepted for JAX compatibility: funcgrad always keeps the
            recomputation from being merged with the forward pass.
        policy: ``policy(prim, *avals, **params) -> bool`` names the values worth saving
            (see ``funcgrad.checkpoint_policies``, e.g. ``dots_saveable``): the values
            it accepts are saved and recomputation starts from them. Without a policy
            only ``fun``'s inputs are saved.
        static_argnums: positional arguments passed through as Python values (the
            function may branch on them).

    Returns:
        A function with ``fun``'s signature and values; only its derivatives are
        computed differently. ``fg.debug.saved_residuals`` shows what it keeps.
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be callable or None, got {policy!r}")
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        n = len(args)
        for i in statics:
            if not -n <= i < n:
                raise ValueError(
                    f"checkpoint: static_argnums {static_argnums!r} must be integers in "
                    f"[-len(args), len(args)) but len(args) = {n}"
                )
        fixed = {i % n: args[i] for i in statics}
        dyn = tuple(a for i, a in enumerate(args) if i not in fixed)
        leaves, in_tree = tree_flatten((dyn, kwargs))  # keyword arguments are traced

        def body(d: tuple, kw: dict) -> Any:
            it = iter(d)
            return fun(*[fixed[i] if i in fixed else next(it) for i in range(n)], **kw)

        try:
            statics_key = tuple((i, type(v), v) for i, v in sorted(fixed.items()))
            key: Any = (in_tree, tuple(to_aval(x) for x in leaves), statics_key)
            hash(key)
        except TypeError:
            key = None
        per_fun: dict | None = None
        if key is not None:
            with contextlib.suppress(TypeError):  # not weak-referenceable: no cache
                per_fun = _CHECKPOINT_TRACES.setdefault(fun, {})
        entry = per_fun.get(key) if per_fun is not None else None
        if entry is None:
            entry = trace_function(body, leaves, in_tree, "checkpoint", known=False)
            if per_fun is not None and not any(isinstance(c, Tracer) for c in entry[1]):
                per_fun[key] = entry
        prog, consts, out_tree = entry
        outs = bind(checkpoint_p, *consts, *leaves, program=prog, policy=policy)
        return tree_unflatten(out_tree, outs)

    return wrapped


remat = checkpoint


def print_saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> None:
    """Print the arrays the reverse pass of ``f`` at ``args`` keeps, one line each in
    ``jax.ad_checkpoint``'s words (``f32[5,4] from the argument W``, ``f32[5] output of
    sin from file.py:3``, ``named 'h' from ...``).

    The rows are :func:`funcgrad.debug.saved_residuals` with respect to every positional
    argument (keyword arguments are held fixed): funcgrad's reverse pass keeps a
    nonlinear operation's input and recomputes what its derivative needs, so the rows
    can name other values than JAX's for the same function (``sin``'s input where JAX
    keeps ``sin`` and ``cos`` outputs); ``checkpoint`` and its policies select alike.
    """
    for row in saved_residuals(f, *args, argnums=tuple(range(len(args))), **kwargs):
        print(f"{_short_aval(row)} {_residual_source(row)}")


def _short_aval(row: Residual) -> str:
    """``f32[5,4]``: JAX's short form of a residual's type."""
    dtype = row.dtype.replace("bfloat", "bf").replace("float", "f")
    dtype = dtype.replace("complex", "c").replace("uint", "u").replace("int", "i")
    return f"{dtype}[{','.join(map(str, row.shape))}]"


def _residual_source(row: Residual) -> str:
    """Where a residual comes from, in ``jax.ad_checkpoint``'s words."""
    if row.argument is not None:
        return f"from the argument {row.argument}"
    where = f"{row.source[0]}:{row.source[1]}" if row.source else "an unknown line"
    if row.name is not None:
        return f"named '{row.name}' from {where}"
    if row.origin == "constant":
        return "from a constant"
    return f"output of {row.origin} from {where}"
