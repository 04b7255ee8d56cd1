"""``funcgrad.debug.explain_recompiles``: say why a jitted function traces again.

``fg.jit`` keeps one entry per (static values, pytree structure, abstract values of
the leaves). When a call misses every entry while others exist, the hook below
compares the new key with the closest earlier one and warns a
:class:`RecompileWarning` naming the function, the call site, what differed (the
argument by name and pytree path) and how many entries the function has now.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jax import tree_util

from funcgrad import config
from funcgrad.core.debug_hooks import hooks, set_hook
from funcgrad.core.errors import user_frame
from funcgrad.core.ir import Aval

__all__ = ["RecompileWarning", "explain_recompiles"]


class RecompileWarning(UserWarning):
    """A jitted function traced (and compiles) again; the message says why."""


def _set(on: bool) -> None:
    hooks.recompiles = bool(on)


config.define(
    "debug_recompiles",
    False,
    "warn a funcgrad.debug.RecompileWarning saying why each time a jitted function traces again",
    on_change=_set,
)


@contextmanager
def explain_recompiles(enabled: bool = True) -> Iterator[None]:
    """Within the block, every re-trace of a ``jit``-compiled function warns a
    :class:`RecompileWarning` explaining what differed from its closest earlier entry
    (also ``funcgrad.config.update("debug_recompiles", True)``)."""
    saved = config.read("debug_recompiles")
    config.update("debug_recompiles", enabled)
    try:
        yield
    finally:
        config.update("debug_recompiles", saved)


def _param_names(jitted: Any, n_args: int) -> list[str]:
    sig = getattr(jitted, "_sig_names", None)
    if sig is None:
        try:
            sig = [
                p.name
                for p in inspect.signature(jitted.fun).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            sig = []
    return [sig[i] if i < len(sig) else f"args[{i}]" for i in range(n_args)]


def _aval_str(a: Aval) -> str:
    return f"{a}{' (weak type)' if a.weak_type else ''}"


def _leaf_labels(jitted: Any, args: tuple, kwargs: dict, statics: set) -> list[str]:
    """A label per dynamic leaf, in flattening order: argument name plus pytree path."""
    names = _param_names(jitted, len(args))
    dyn = tuple(a for i, a in enumerate(args) if i not in statics)
    dyn_names = [names[i] for i in range(len(args)) if i not in statics]
    dyn_kw = {k: v for k, v in kwargs.items() if k not in jitted.static_argnames}
    labels = []
    for path, _ in tree_util.tree_flatten_with_path((dyn, dyn_kw))[0]:
        head = dyn_names[path[1].idx] if path[0].idx == 0 else str(path[1].key)
        labels.append(f"'{head}'" + tree_util.keystr(tuple(path[2:])))
    return labels


def _differences(
    jitted: Any, key: tuple, old: tuple, args: tuple, kwargs: dict, statics: set
) -> list[str]:
    static_vals, static_kw, tree, avals = key
    o_static_vals, o_static_kw, o_tree, o_avals = old
    names = _param_names(jitted, len(args))
    out = []
    old_pos = dict(o_static_vals)
    for i, v in static_vals:
        if i not in old_pos:
            out.append(f"argument '{names[i]}' is now static")
        elif old_pos[i] != v:
            out.append(f"static argument '{names[i]}': was {old_pos[i]!r}, now {v!r}")
    old_kw = dict(o_static_kw)
    for k, v in static_kw:
        if k not in old_kw:
            out.append(f"static argument '{k}' was not passed before (now {v!r})")
        elif old_kw[k] != v:
            out.append(f"static argument '{k}': was {old_kw[k]!r}, now {v!r}")
    if tree != o_tree:
        labels = _arg_labels(jitted, args, kwargs, statics)
        parts = _tree_parts(tree)
        o_parts = _tree_parts(o_tree)
        if parts is not None and o_parts is not None and len(parts) == len(o_parts):
            for label, p, q in zip(labels, parts, o_parts):
                if p != q:
                    out.append(f"pytree structure of argument {label}: was {q}, now {p}")
        if not any("pytree" in d for d in out):
            out.append(f"pytree structure of the arguments: was {o_tree}, now {tree}")
        return out
    labels = _leaf_labels(jitted, args, kwargs, statics)
    for label, a, b in zip(labels, avals, o_avals):
        if a == b:
            continue
        if a.strip_weak() == b.strip_weak():
            out.append(
                f"argument {label}: weak type changed: was {_aval_str(b)}, now {_aval_str(a)}"
            )
        elif a.shape != b.shape and a.dtype == b.dtype:
            out.append(f"argument {label}: shape changed: was {b}, now {a}")
        elif a.dtype != b.dtype and a.shape == b.shape:
            out.append(f"argument {label}: dtype changed: was {b}, now {a}")
        else:
            out.append(f"argument {label}: was {_aval_str(b)}, now {_aval_str(a)}")
    return out


def _arg_labels(jitted: Any, args: tuple, kwargs: dict, statics: set) -> list[str]:
    names = _param_names(jitted, len(args))
    labels = [f"'{names[i]}'" for i in range(len(args)) if i not in statics]
    return labels + [f"'{k}'" for k in sorted(kwargs) if k not in jitted.static_argnames]


def _tree_parts(tree: Any) -> list[Any] | None:
    """The per-argument treedefs of a ``(dyn_args, dyn_kwargs)`` treedef."""
    try:
        pos, kw = tree.children()
        return [*pos.children(), *kw.children()]
    except (ValueError, AttributeError):
        return None


def _distance(key: tuple, old: tuple) -> int:
    d = sum(a != b for a, b in zip(key[:3], old[:3])) * 100
    if key[2] == old[2]:  # per leaf: how many of shape, dtype, weak type differ
        for a, b in zip(key[3], old[3]):
            d += (a.shape != b.shape) + (a.dtype != b.dtype) + (a.weak_type != b.weak_type)
    return d


def _explain(jitted: Any, key: tuple, earlier: list, args: tuple, kwargs: dict) -> None:
    n = len(args)
    statics = {i % n for i in jitted.static_argnums if -n <= i < n}
    old = min(earlier, key=lambda k: _distance(key, k))
    diffs = _differences(jitted, key, old, args, kwargs, statics)
    if not diffs:
        diffs = ["no argument differs from the closest earlier entry"]
    src = user_frame()
    at = f" (called at {src[0]}:{src[1]})" if src else ""
    msg = (
        f"jit-compiled function '{jitted._name()}'{at} traces and compiles again; "
        f"it will have {len(earlier) + 1} entries. Differences from the closest earlier "
        "entry: " + "; ".join(diffs)
    )
    if src is None:
        warnings.warn(msg, RecompileWarning, stacklevel=2)
    else:
        warnings.warn_explicit(msg, RecompileWarning, src[0], src[1])


set_hook("explain_recompile", _explain)
