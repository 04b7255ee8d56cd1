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


# ``funcgrad.tree`` mirrors ``jax.tree``: funcgrad's pytrees are JAX's (one registry), so
# these are JAX's own functions, under the short names ported code calls
# (``fg.tree.map(f, params)``). Defined last: inside this module the builtins ``map`` and
# ``all`` are not used after this point.
from jax import tree as _jax_tree  # noqa: E402

all = _jax_tree.all
broadcast = _jax_tree.broadcast
flatten = _jax_tree.flatten
flatten_with_path = _jax_tree.flatten_with_path
leaves = _jax_tree.leaves
leaves_with_path = _jax_tree.leaves_with_path
map = _jax_tree.map
map_with_path = _jax_tree.map_with_path
reduce = _jax_tree.reduce
reduce_associative = _jax_tree.reduce_associative
static = _jax_tree.static
structure = _jax_tree.structure
transpose = _jax_tree.transpose
unflatten = _jax_tree.unflatten
