"""The messages of ``custom_jvp``/``custom_vjp``'s checks, in JAX's words: types and
tree structures spelt as JAX prints them, and the rule-output errors that need them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from funcgrad import config
from funcgrad.core.interp import Tracer, to_aval
from funcgrad.core.ir import Aval
from funcgrad.tree_util import keystr, tree_flatten_with_path, tree_map, tree_unflatten

__all__ = ["fwd_types_error", "shown", "tree_str", "type_str", "typed_tree", "types_differ"]


def type_str(aval: Any) -> str:
    """JAX's spelling of an aval in messages: ``float32[3,4]``."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def tree_str(tree: Any) -> str:
    """A tree structure as JAX's messages show it (``PyTreeDef`` left out)."""
    return str(tree).replace("PyTreeDef", "")


def typed_tree(tree: Any, avals: Iterable[Aval]) -> str:
    """A structure with its leaves' types, as JAX prints it: ``(float32[], float32[3])``
    (the structure alone where the types are not known)."""
    types = [type_str(a) for a in avals]
    if len(types) != tree.num_leaves:
        return tree_str(tree)
    return str(tree_unflatten(tree, types)).replace("'", "")


def types_differ(leaves: list, avals: Sequence[Aval]) -> bool:
    """Whether a rule's primal outputs differ in shape or dtype from the function's
    (weak types aside); nothing to compare where the function's types are not known."""
    return bool(avals) and any(
        (a.shape, a.dtype) != (b.shape, b.dtype) for a, b in zip(map(to_aval, leaves), avals)
    )


def fwd_types_error(fwd: str, name: str, tree: Any, leaves: list, avals: Sequence[Aval]) -> None:
    """JAX's error for a ``fwd`` whose primal outputs have other shapes or dtypes than
    the function's (``jax_custom_vjp3``'s sentence names the first such leaf)."""
    if config.read("jax_custom_vjp3"):
        for (path, _), x, a in zip(
            tree_flatten_with_path(tree_unflatten(tree, leaves))[0], leaves, avals
        ):
            b = to_aval(x)
            if (b.shape, b.dtype) != (a.shape, a.dtype):
                raise TypeError(
                    f"at {keystr(path)}, got fwd output type {type_str(b)} which doesn't "
                    f"match primal output type {type_str(a)}"
                )
    raise TypeError(
        f"Custom VJP fwd rule {fwd} must produce a pair (list or tuple of length two) where "
        "the first element represents the primal output (equal to the output of the "
        f"custom_vjp-decorated function {name}) and the second element represents residuals "
        "(i.e. values stored from the forward pass for use on the backward pass), but "
        "instead the fwd rule output's first element had shapes/dtypes of:\n"
        f"    {typed_tree(tree, map(to_aval, leaves))}\n"
        f"while the custom_vjp-decorated function {name} had output shapes/dtypes of:\n"
        f"    {typed_tree(tree, avals)}"
    )


def shown(x: Any) -> str:
    """``x`` for an error message, with known traced values shown as values (JAX's
    rules see concrete values outside jit and print them)."""

    def leaf(v: Any) -> Any:
        if isinstance(v, Tracer):
            try:
                return np.asarray(v).item() if v.aval.shape == () else np.asarray(v)
            except Exception:  # an unknown value: the tracer itself
                return v
        return v

    shown = tree_map(leaf, x)
    return str(shown)
