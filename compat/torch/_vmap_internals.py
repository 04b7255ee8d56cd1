"""``torch._vmap_internals._vmap``: PyTorch's first (legacy) vmap, as a loop.

``_vmap(func, in_dims, out_dims)(*args)`` calls ``func`` once per index of the mapped
dimension (on ``select`` views of the mapped inputs) and stacks each output along
``out_dims``. Where PyTorch's batched tensors keep identities, so does the unbatching
here: an output that is, in every example, the example's slice of an input is that
input; one that is, in every example, the same tensor as an earlier output is that
output's result; one that is, in every example, a view of an earlier output is the same
view (with the batch dimension in front) of that output's result. Unlike PyTorch's
batching, ``func`` runs once per example (side effects and call counts show it). A
random op inside (one that advances the default generator) raises, as PyTorch's legacy
vmap refuses them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from compat._core import creation as _creation
from compat._core import views as _views
from compat._core.ops.array_rows import stack
from compat._core.restride import as_strided
from compat._core.tensor import Tensor

__all__ = ["_vmap"]

_RANDOM = (
    "vmap: We do not yet support calling random operations inside of vmap. Please perform "
    "random operations outside of vmap as a workaround"
)


def _dims(dims: Any, n: int, what: str) -> tuple:
    if isinstance(dims, int) or dims is None:
        return (dims,) * n
    if not isinstance(dims, tuple) or len(dims) != n:
        raise ValueError(
            f"vmap: {what} must be an int, None or a tuple of {n} entries, got {dims!r}"
        )
    return dims


def _view_of(o: Tensor, base: Tensor) -> bool:
    info = o._view
    return info is not None and info.root is base


def _batched_view(res: Tensor, example: Tensor, n: int) -> Tensor:
    """The view ``example`` is of its (contiguous) root, over the stacked ``res``."""
    shape, strides, offset = _views.layout_of(example)
    numel = 1
    for s in example._view.root.shape:
        numel *= s
    return as_strided(res, (n, *shape), (numel, *strides), offset)


def _vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its tensor arguments (see the module
    docstring)."""

    @functools.wraps(func)
    def wrapped(*args: Any) -> Any:
        dims = _dims(in_dims, len(args), "in_dims")
        sizes = {a.shape[d] for a, d in zip(args, dims) if isinstance(a, Tensor) and d is not None}
        if len(sizes) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sorted(sizes)} for the mapped dimension"
            )
        n = sizes.pop()
        examples = [
            [
                a.select(d, i) if isinstance(a, Tensor) and d is not None else a
                for a, d in zip(args, dims)
            ]
            for i in range(n)
        ]
        gen = _creation.default_generator
        before = gen._state_bytes()
        outs = [func(*ex) for ex in examples]
        if gen._state_bytes() != before:
            raise RuntimeError(_RANDOM)
        single = not isinstance(outs[0], tuple)
        cols = [[o] for o in outs] if single else [list(o) for o in outs]
        k = len(cols[0])
        odims = _dims(out_dims, k, "out_dims")
        results: list = [None] * k
        deferred = []
        for j in range(k):
            col = [c[j] for c in cols]
            base = _base_output(j, col, cols, odims)
            if base is not None:
                deferred.append((j, base))
            else:
                results[j] = _unbatch(j, col, cols, examples, args, dims, odims, results)
        for j, jj in deferred:
            results[j] = _batched_view(results[jj], cols[0][j], n)
        return results[0] if single else tuple(results)

    return wrapped


def _base_output(j: int, col: list, cols: list, odims: tuple) -> int | None:
    """The other output that ``col`` (output ``j`` of every example) is a view of."""
    if odims[j] != 0:
        return None
    for jj in range(len(cols[0])):
        if jj != j and odims[jj] == 0 and all(_view_of(c, cs[jj]) for c, cs in zip(col, cols)):
            return jj
    return None


def _unbatch(
    j: int,
    col: list,
    cols: list,
    examples: list,
    args: tuple,
    dims: tuple,
    odims: tuple,
    results: list,
) -> Tensor:
    od = odims[j]
    for a, (arg, d) in enumerate(zip(args, dims)):
        if d is not None and d == od and all(c is ex[a] for c, ex in zip(col, examples)):
            return arg
    for jj in range(j):
        if odims[jj] == od and all(c is cs[jj] for c, cs in zip(col, cols)):
            return results[jj]
    return stack(col, od)
