"""``funcgrad.flatten_util``, as ``jax.flatten_util``: a pytree of arrays as one flat
vector and back (``ravel_pytree``), for code that treats parameters as a single vector
(second-order optimizers, ``scipy.optimize``-style solvers, Hessians of whole models).

The flat vector's dtype is the leaves' dtypes promoted together. When all leaves share
one dtype, ``unravel`` takes a vector of any dtype and keeps it (a mask of the flat
vector unravels to masks); otherwise it takes only the promoted dtype and casts each
piece back to its leaf's dtype. ``unravel`` functions of equal structure compare equal
and hash alike, so passing one as a static argument of ``jit`` does not retrace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from funcgrad import lax
from funcgrad import numpy as fnp
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


@dataclass(frozen=True)
class _Unravel:
    """The inverse of one ``ravel_pytree``: a flat vector back to the tree."""

    treedef: Any
    sizes: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    #: the leaves' dtypes, or ``None`` when they all share one (any dtype is kept)
    from_dtypes: tuple[np.dtype, ...] | None
    to_dtype: np.dtype

    def __call__(self, flat: Any) -> Any:
        shape, dtype = np.shape(flat), fnp.result_type(flat)
        total = sum(self.sizes)
        if shape != (total,):
            raise ValueError(
                f"unravel: expected a 1-D array of {total} elements (the raveled tree's), "
                f"got shape {shape}"
            )
        if self.from_dtypes is not None and dtype != self.to_dtype:
            raise TypeError(
                f"unravel function given array of dtype {dtype}, but expected dtype "
                f"{self.to_dtype} (the leaves' dtypes differ, so the flat vector's is fixed)"
            )
        bounds = np.cumsum(self.sizes)[:-1].tolist()
        chunks = fnp.split(flat, bounds) if self.sizes else []
        leaves = [fnp.reshape(c, s) for c, s in zip(chunks, self.shapes)]
        if self.from_dtypes is not None:
            leaves = [_cast_back(x, d) for x, d in zip(leaves, self.from_dtypes)]
        return tree_unflatten(self.treedef, leaves)


def _cast_back(x: Any, dtype: np.dtype) -> Any:
    """``x`` as ``dtype``; a complex piece of a real leaf gives its real part (the
    imaginary part of a raveled real leaf is zero)."""
    if fnp.iscomplexobj(x) and not np.issubdtype(dtype, np.complexfloating):
        x = fnp.real(x)
    return lax.convert_element_type(x, dtype)


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``pytree``'s leaves raveled and concatenated into one 1-D array, and the function
    that splits such an array back into a tree of ``pytree``'s structure.

    Args:
        pytree: a pytree of arrays and scalars.

    Returns:
        ``(flat, unravel)``: ``flat`` has the leaves' dtypes promoted together (an empty
        tree gives an empty float32 array, as JAX's); ``unravel(flat)`` rebuilds the tree
        with each leaf's shape and dtype.

    Example:
        >>> flat, unravel = ravel_pytree({"w": fnp.ones((2, 2)), "b": fnp.zeros(3)})
        >>> flat.shape
        (7,)
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return fnp.zeros((0,), np.float32), _Unravel(treedef, (), (), None, np.dtype("float32"))
    dtypes = tuple(np.dtype(fnp.result_type(x)) for x in leaves)
    to_dtype = np.dtype(fnp.result_type(*dtypes))
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    one_dtype = all(d == to_dtype for d in dtypes)
    parts = [fnp.ravel(fnp.asarray(x, to_dtype)) for x in leaves]
    flat = fnp.concatenate(parts, axis=0)
    return flat, _Unravel(treedef, sizes, shapes, None if one_dtype else dtypes, to_dtype)
