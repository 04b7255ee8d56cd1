"""``funcgrad.tree_util``: JAX's pytree utilities under ``jax.tree_util``'s names.

funcgrad's pytrees are JAX's (one registry: a class registered with either library is
a pytree to both), so this module re-exports ``jax.tree_util`` rather than keeping a
second implementation.

    >>> import funcgrad as fg
    >>> fg.tree_util.tree_map(lambda x: 2 * x, {"a": 1, "b": (2, 3)})
    {'a': 2, 'b': (4, 6)}
"""

from __future__ import annotations

from jax import tree_util as _tu

__all__ = sorted(n for n in dir(_tu) if not n.startswith("_"))

globals().update({n: getattr(_tu, n) for n in __all__})
