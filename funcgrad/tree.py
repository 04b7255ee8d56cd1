"""``funcgrad.tree``: JAX's ``jax.tree`` functions under their short names.

funcgrad's pytrees are JAX's (one registry), so these are JAX's own functions, for the
short names ported code calls (``fg.tree.map(f, params)``); ``funcgrad.tree_util``
holds ``jax.tree_util``'s.
"""

from __future__ import annotations

from jax import tree as _jax_tree

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
