"""``jax.lax``'s general gather and scatter family, with its dimension numbers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core.interp import to_aval
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import scatter as sc
from funcgrad.primitives import shape as sh
from funcgrad.primitives.scatter import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "gather",
    "index_take",
    "scatter",
    "scatter_add",
    "scatter_apply",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
]


def _dn(name: str, dn: Any, norm: Callable, cls: type) -> Any:
    try:
        return norm(dn)
    except (AttributeError, TypeError) as e:
        raise TypeError(
            f"{name}: dimension_numbers must be a {cls.__name__}, got {dn!r}{here()}"
        ) from e


def _mode(name: str, mode: Any) -> str:
    try:
        return GatherScatterMode.from_any(mode).value
    except ValueError as e:
        raise ValueError(f"{name}: {e}{here()}") from e


def gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: Any = None,
    fill_value: Any = None,
) -> Any:
    """XLA's gather: slices of ``slice_sizes`` at ``start_indices`` (index vectors on the
    last axis), arranged by ``dimension_numbers``. By default (``mode=None``) indices
    are promised in bounds, as in ``jax.lax.gather`` (XLA clamps the forward, the
    derivative drops what falls outside); ``mode='clip'`` clamps; ``mode='fill'`` fills
    out-of-bounds windows with ``fill_value`` (NaN, the minimum int or True by default)."""
    dn = _dn("gather", dimension_numbers, sc.gather_dnums, GatherDimensionNumbers)
    fv = None if fill_value is None else np.asarray(fill_value).item()
    return sc._gather(
        prep(operand, "gather"),
        prep(start_indices, "gather"),
        dn,
        tuple(int(s) for s in slice_sizes),
        "promise_in_bounds" if mode is None else _mode("gather", mode),
        fv,
        bool(indices_are_sorted),
        bool(unique_indices),
    )


def _scatter(prim: Any, name: str) -> Callable:
    def f(
        operand: Any,
        scatter_indices: Any,
        updates: Any,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: Any = None,
    ) -> Any:
        dn = _dn(name, dimension_numbers, sc.scatter_dnums, ScatterDimensionNumbers)
        return sc._scatter(
            prim,
            prep(operand, name),
            prep(scatter_indices, name),
            prep(updates, name),
            dn,
            _mode(name, mode),
            bool(indices_are_sorted),
            bool(unique_indices),
        )

    f.__name__ = f.__qualname__ = name
    return f


scatter = _scatter(sc.scatter_general_p, "scatter")
scatter.__doc__ = """Write ``updates`` into ``operand`` at the windows ``scatter_indices`` and
``dimension_numbers`` select (with repeated indices one write wins; gradients assume
unique indices, as JAX's). Out-of-bounds updates are dropped unless ``mode='clip'``."""
scatter_add = _scatter(sc.scatter_add_general_p, "scatter_add")
scatter_add.__doc__ = "Add ``updates`` into ``operand`` at the selected windows (see scatter)."
scatter_mul = _scatter(sc.scatter_mul_p, "scatter_mul")
scatter_mul.__doc__ = "Multiply ``operand`` by ``updates`` at the selected windows."
scatter_min = _scatter(sc.scatter_min_p, "scatter_min")
scatter_min.__doc__ = "Elementwise minimum of ``operand`` and ``updates`` at the windows."
scatter_max = _scatter(sc.scatter_max_p, "scatter_max")
scatter_max.__doc__ = "Elementwise maximum of ``operand`` and ``updates`` at the windows."


def scatter_sub(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """Subtract ``updates`` from ``operand`` at the selected windows (see ``scatter``)."""
    return scatter_add(
        operand,
        scatter_indices,
        ew.neg(prep(updates, "scatter_sub")),
        dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )


def scatter_apply(
    operand: Any,
    scatter_indices: Any,
    func: Callable[[Any], Any],
    dimension_numbers: ScatterDimensionNumbers,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = None,
) -> Any:
    """``operand`` with the elementwise ``func`` applied once to every element the
    scatter windows touch. Repeated indices apply it once (JAX applies it once per
    occurrence)."""
    operand = prep(operand, "scatter_apply")
    mask = sh.full(to_aval(operand).shape, False, np.bool_)
    shape = tuple(int(s) for s in update_shape)
    if not shape:  # one flag per index vector (scalar updates, broadcast as in JAX)
        shape = to_aval(prep(scatter_indices, "scatter_apply")).shape[:-1]
    hit = sh.full(shape, True, np.bool_)
    mask = scatter(
        mask,
        scatter_indices,
        hit,
        dimension_numbers,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    return ew.select_n(mask, operand, func(operand))


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """Take ``src`` at the integer index arrays ``idxs``, one per axis of ``axes``
    (``jax.lax.index_take``): the result has the index arrays' shape followed by the
    axes of ``src`` not indexed, in order. Negative indices count from the end."""
    src = prep(src, "index_take")
    shape = to_aval(src).shape
    axes = tuple(int(a) for a in axes)
    if len(idxs) != len(axes):
        raise TypeError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes {axes}{here()}")
    columns = []
    for i, ax in zip(idxs, axes):
        i = prep(i, "index_take")
        size = np.asarray(shape[ax], to_aval(i).dtype)
        wrapped = ew.rem(ew.add(ew.rem(i, size), size), size)  # -1 -> size - 1
        columns.append(sh.expand_dims(wrapped, (to_aval(i).ndim,)))
    indices = sh.concatenate(*columns, dimension=to_aval(columns[0]).ndim - 1)
    batch = to_aval(indices).ndim - 1
    rest = [d for d in range(len(shape)) if d not in axes]
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(batch, batch + len(rest))),
        collapsed_slice_dims=tuple(sorted(axes)),
        start_index_map=axes,
    )
    sizes = tuple(1 if d in axes else shape[d] for d in range(len(shape)))
    return gather(src, indices, dnums, sizes)
