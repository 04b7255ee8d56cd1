"""vmap's error for mapped axes of different sizes, worded as JAX's: each size, how many
axes have it, and an example argument (named by the function's parameter, with its
path into a pytree and its type)."""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from jax import tree_util

from funcgrad.core.interp import to_aval


def _type(x: Any) -> str:
    try:
        a = to_aval(x)
    except TypeError:
        return "unknown"
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def inconsistent_sizes(
    fun: Callable, args: tuple, kwargs: dict, leaves: list, dims: Sequence[int | None]
) -> str:
    """The message for leaves (of ``(args, kwargs)``) mapped along ``dims`` whose sizes
    differ."""
    try:
        params: list[str] | None = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = None
    names = []
    for path, _ in tree_util.tree_flatten_with_path((args, kwargs))[0]:
        where, i, rest = path[0].idx, path[1], path[2:]
        if where == 1:
            names.append(f"kwargs{tree_util.keystr((i, *rest))}")
        elif params is None or i.idx >= len(params):
            names.append(f"args{tree_util.keystr((i, *rest))}")
        else:
            names.append(f"argument {params[i.idx]}{tree_util.keystr(rest)}")
    sizes = [None if d is None else to_aval(x).shape[d] for x, d in zip(leaves, dims)]
    counts = collections.Counter(s for s in sizes if s is not None).most_common()
    lines = []
    for k, (size, n) in enumerate(counts):
        i = sizes.index(size)
        example = f"axis {dims[i]} of {names[i]} of type {_type(leaves[i])}"
        if n == 1:
            lines.append(f"  * one axis had size {size}: {example}")
        else:
            some = "most" if k == 0 else "some"
            lines.append(f"  * {some} axes ({n} of them) had size {size}, e.g. {example}")
    return "vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines)


def _split_of(x: Any, d: int) -> Any:
    """The mesh axes dimension ``d`` of ``x`` is split over in its type (``None``: unsplit
    or untyped)."""
    s = to_aval(x).sharding
    if s is None:
        return None
    parts = s.spec.partitions
    return parts[d] if d < len(parts) else None


def check_mapped_splits(leaves: Sequence[Any], dims: Sequence[int | None]) -> Any:
    """JAX's checks of the explicit mesh axes a ``vmap`` maps over: every mapped dimension
    split over the same axes (``Mapped away dimension ... should be sharded the same``),
    and no unmapped value split over them (``Unmapped values passed to vmap cannot be
    sharded ...``). Returns those axes as a tuple (``None``: the mapped dimensions are
    unsplit)."""
    spec: Any = None
    seen = False
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        s = _split_of(x, d)
        if seen and s != spec:
            raise ValueError(
                "Mapped away dimension of inputs passed to vmap should be sharded the same. "
                f"Got inconsistent axis specs: {spec} vs {s}"
            )
        spec, seen = s, True
    if spec is None:
        return None
    axes = spec if isinstance(spec, tuple) else (spec,)
    for x, d in zip(leaves, dims):
        if d is not None:
            continue
        s = to_aval(x).sharding
        if s is None:
            continue
        used = {
            a
            for e in s.spec.partitions
            if e is not None
            for a in (e if isinstance(e, tuple) else (e,))
        }
        if used & set(axes):
            raise ValueError(
                "Unmapped values passed to vmap cannot be sharded along the mesh axis you are "
                f"vmapping over. Got type: {to_aval(x).str_short()}, in_axes: None and "
                f"vmapped mesh axis: {axes}"
            )
    return axes
