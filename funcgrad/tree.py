"""Pytree helpers (thin layer over ``jax.tree_util``)."""

from __future__ import annotations

from typing import Any

from jax import tree_util

tree_flatten = tree_util.tree_flatten
tree_unflatten = tree_util.tree_unflatten
tree_map = tree_util.tree_map
tree_leaves = tree_util.tree_leaves
tree_structure = tree_util.tree_structure
register_pytree_node = tree_util.register_pytree_node
register_dataclass = getattr(tree_util, "register_dataclass", None)


def broadcast_prefix(prefix: Any, full: Any, name: str, what: str) -> list[Any]:
    """Expand a pytree prefix (e.g. ``in_axes``) to one entry per leaf of ``full``.

    ``None`` entries in the prefix are leaves (they apply to a whole subtree).
    """
    out: list[Any] = []

    def add(p: Any, sub: Any) -> None:
        out.extend([p] * len(tree_util.tree_leaves(sub)))

    try:
        tree_util.tree_map(add, prefix, full, is_leaf=lambda x: x is None)
    except ValueError as e:
        raise ValueError(
            f"{name}: {what} {prefix!r} is not a pytree prefix of the arguments "
            f"with structure {tree_util.tree_structure(full)}: {e}"
        ) from None
    return out
