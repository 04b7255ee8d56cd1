"""Collectives over named axes, with ``jax.lax``'s names and signatures: ``psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``, ``ppermute``,
``all_to_all``, ``axis_index`` and ``axis_size``.

A name is bound by ``fg.vmap(..., axis_name=)`` or by ``fg.shard_map`` (see
:mod:`funcgrad.primitives.collectives`); elsewhere these raise ``NameError``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.axes import normalize_axis
from funcgrad.core.interp import to_aval
from funcgrad.primitives import collectives as col
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh
from funcgrad.tree_util import tree_map

__all__ = [
    "all_gather",
    "all_to_all",
    "axis_index",
    "axis_size",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "pshuffle",
    "psum",
    "psum_scatter",
    "pswapaxes",
]


def _no_groups(axis_index_groups: Any, api: str) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(f"{api}: axis_index_groups is not supported by funcgrad")


def _reduce(p: Any, x: Any, axis_name: Any, api: str, constant: Any) -> Any:
    frames = col.frames_for(axis_name, api)

    def leaf(v: Any) -> Any:
        if to_aval(v).dtype == np.bool_:
            v = ew.convert_element_type(v, np.int32)
        if not col.is_traced(v):  # the same value at every index: computed now, as JAX
            return constant(v, col.axis_size(frames))
        return col.all_reduce(p, v, frames)

    return tree_map(leaf, x)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Sum ``x`` (an array or a pytree of arrays) over the named axis or axes.

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> fg.vmap(lambda v: fg.lax.psum(v, "i"), axis_name="i")(fnp.arange(3.0))
        Array([3., 3., 3.], dtype=float32)
    """
    _no_groups(axis_index_groups, "psum")
    return _reduce(col.psum_p, x, axis_name, "psum", lambda v, n: v * n)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Mean of ``x`` over the named axis or axes (``psum(x) / axis_size``)."""
    _no_groups(axis_index_groups, "pmean")
    n = col.axis_size(col.frames_for(axis_name, "pmean"))

    def leaf(v: Any) -> Any:
        s = psum(v, axis_name)
        dt = to_aval(s).dtype
        if not dtypes.is_inexact(dt):  # true division, as JAX's ``psum(x) / n``
            dt = dtypes.to_inexact(dt)
            s = ew.convert_element_type(s, dt)
        return ew.div(s, np.array(n, dt))

    return tree_map(leaf, x)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Maximum of ``x`` over the named axis or axes."""
    _no_groups(axis_index_groups, "pmax")
    return _reduce(col.pmax_p, x, axis_name, "pmax", lambda v, n: v)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Minimum of ``x`` over the named axis or axes."""
    _no_groups(axis_index_groups, "pmin")
    return _reduce(col.pmin_p, x, axis_name, "pmin", lambda v, n: v)


def all_gather(
    x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0, tiled: bool = False
) -> Any:
    """Gather ``x`` from every index of the named axis: stacked along a new axis ``axis``
    (or concatenated along ``axis`` when ``tiled``). Over several names the indices are
    taken row-major (the first name major)."""
    _no_groups(axis_index_groups, "all_gather")
    frames = col.frames_for(axis_name, "all_gather")

    def leaf(v: Any) -> Any:
        nd = to_aval(v).ndim
        ax = normalize_axis(axis, nd if tiled else nd + 1, "all_gather")
        if len(frames) == 1:
            return col.all_gather(v, frames[0], axis=ax, tiled=bool(tiled))
        for f in reversed(frames):  # the minor axis first: the major one ends up in front
            v = col.all_gather(v, f, axis=ax, tiled=False)
        return _merge(v, ax, len(frames) + bool(tiled))

    return tree_map(leaf, x)


def psum_scatter(
    x: Any,
    axis_name: Any,
    *,
    scatter_dimension: int = 0,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Sum ``x`` over the named axis; index ``i`` keeps block ``i`` of
    ``scatter_dimension`` (whose size must be the axis size, or a multiple when ``tiled``).
    Over several names the blocks are indexed row-major (the first name major)."""
    _no_groups(axis_index_groups, "psum_scatter")
    frames = col.frames_for(axis_name, "psum_scatter")

    def leaf(v: Any) -> Any:
        shape = to_aval(v).shape
        d = normalize_axis(scatter_dimension, len(shape), "psum_scatter")
        if len(frames) == 1:
            return col.psum_scatter(v, frames[0], scatter_dimension=d, tiled=bool(tiled))
        n = col.axis_size(frames)
        if (shape[d] % n) if tiled else (shape[d] != n):
            raise ValueError(
                f"psum_scatter: operand scatter dimension size {shape[d]} must "
                + (f"be divisible by shard_count {n}" if tiled else f"match shard count {n}")
            )
        split = [f.size for f in frames] + ([shape[d] // n] if tiled else [])
        v = sh.reshape(v, (*shape[:d], *split, *shape[d + 1 :]))
        for f in frames:  # the major axis first: each keeps its block and drops its axis
            v = col.psum_scatter(v, f, scatter_dimension=d, tiled=False)
        return v

    return tree_map(leaf, x)


def _merge(x: Any, axis: int, count: int) -> Any:
    """``x`` with its ``count`` axes from ``axis`` on merged into one (row-major)."""
    shape = to_aval(x).shape
    size = math.prod(shape[axis : axis + count])
    return sh.reshape(x, (*shape[:axis], size, *shape[axis + count :]))


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Send ``x`` along the named axis: for each ``(src, dst)`` in ``perm`` index ``dst``
    receives ``src``'s value; an index nobody sends to receives zeros."""
    frames = col.frames_for(axis_name, "ppermute")
    pairs = col.check_perm(perm, col.axis_size(frames))
    return tree_map(lambda v: col.ppermute(v, frames, pairs), x)


def pshuffle(x: Any, axis_name: Any, perm: Any) -> Any:
    """Index ``i`` of the named axis receives index ``perm[i]``'s value (``perm`` a
    permutation of the indices): a :func:`ppermute` with pairs ``(perm[i], i)``."""
    frames = col.frames_for(axis_name, "pshuffle")
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    pairs = col.check_perm([(p, i) for i, p in enumerate(perm)], col.axis_size(frames))
    return tree_map(lambda v: col.ppermute(v, frames, pairs), x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Exchange the named axis with positional axis ``axis`` (of the axis's size): an
    untiled :func:`all_to_all` splitting and concatenating ``axis``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def all_to_all(
    x: Any,
    axis_name: Any,
    split_axis: int,
    concat_axis: int,
    *,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Split ``split_axis`` into one block per index of the named axis, send block ``d``
    to index ``d`` and concatenate what arrives along ``concat_axis`` (``tiled``); without
    ``tiled`` the split axis must have the axis size, and is removed while a new axis of
    that size is inserted at ``concat_axis``. Over several names the indices are
    row-major (the first name major)."""
    _no_groups(axis_index_groups, "all_to_all")
    frames = col.frames_for(axis_name, "all_to_all")
    n = col.axis_size(frames)

    def leaf(v: Any) -> Any:
        nd = to_aval(v).ndim
        s = normalize_axis(split_axis, nd, "all_to_all")
        c = normalize_axis(concat_axis, nd, "all_to_all")
        if tiled:
            return _exchange(v, frames, s, c)
        if to_aval(v).shape[s] != n:
            raise ValueError(
                f"all_to_all: the split axis {s} has size {to_aval(v).shape[s]}, which must "
                f"equal the size {n} of axis {axis_name!r} (or pass tiled=True)"
            )
        # untiled: concat_axis is a position in the result, whose split axis is gone;
        # exchange blocks of one along a new axis there, then drop the split axis
        if s == c:
            return _exchange(v, frames, s, c)
        if s < c:
            c += 1
        else:
            s += 1
        return _without_axis(_exchange(_with_axis(v, c), frames, s, c), s)

    return tree_map(leaf, x)


def _exchange(v: Any, frames: list, s: int, c: int) -> Any:
    """The tiled all_to_all over ``frames``: one primitive for one axis; over several, one
    exchange per axis, each gathering its sources on a new leading axis (the last name
    first, so the sources end up row-major in front), then merged into ``concat_axis``."""
    if len(frames) == 1:
        return col.all_to_all(v, frames[0], s, c)
    shape = to_aval(v).shape
    n = col.axis_size(frames)
    if shape[s] % n:
        raise ValueError(
            f"all_to_all: the split axis {s} has size {shape[s]}, which is not divisible by "
            f"the axis size {n}"
        )
    k = len(frames)
    v = sh.reshape(v, (*shape[:s], *[f.size for f in frames], shape[s] // n, *shape[s + 1 :]))
    for j in reversed(range(k)):  # block axis j sits at s + j, shifted by the sources
        v = col.all_to_all(_with_axis(v, 0), frames[j], s + (k - j) + j, 0)
    # (sources..., rest with k block axes of size one at s..s+k-1): drop those
    rest = list(to_aval(v).shape)
    del rest[k + s : k + s + k]
    v = sh.reshape(v, tuple(rest))
    # the k source axes go just before the concat axis and merge with it
    v = sh.transpose(v, (*range(k, k + c), *range(k), *range(k + c, len(rest))))
    return _merge(v, c, k + 1)


def _with_axis(x: Any, axis: int) -> Any:
    shape = list(to_aval(x).shape)
    shape.insert(axis, 1)
    return sh.reshape(x, tuple(shape))


def _without_axis(x: Any, axis: int) -> Any:
    shape = list(to_aval(x).shape)
    del shape[axis]
    return sh.reshape(x, tuple(shape))


def axis_index(axis_name: Any) -> Any:
    """The index along the named axis (row-major over a tuple of names), an ``int32``."""
    return col.axis_index(col.frames_for(axis_name, "axis_index"))


def axis_size(axis_name: Any) -> int:
    """The size of the named axis (the product over a tuple of names), a Python int."""
    return col.axis_size(col.frames_for(axis_name, "axis_size"))
