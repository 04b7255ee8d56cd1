"""JAX's explicit mesh axes ("sharding in types") where funcgrad lowers a program.

Under a mesh whose axes are ``AxisType.Explicit`` JAX types every value with its
sharding and refuses operations whose operands' shardings disagree or leave the
output's ambiguous. funcgrad's IR carries shapes and dtypes only, so its rules emit no
shardings; the lowering fills the two gaps that meets (``core/lowering.py``,
``primitives/linalg.py``), both with values unchanged:

* an elementwise equation whose same-shaped operands are split differently (a constant
  funcgrad made with ``full`` or ``broadcast_in_dim`` is replicated; JAX's own code makes
  it like its partner): the operands are resharded to the sharding funcgrad's types give
  the result (``sharding_types.merge_specs``);
* a dot whose contracting dimension is split on both operands: the output keeps the
  batch and free dimensions' splits and the contraction is summed across devices
  (:func:`dot_out_sharding`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from funcgrad.core.sharding_types import merge_specs


def spec_of(value: Any) -> tuple[tuple | None, Any]:
    """The partition spec of a JAX value over explicit mesh axes, one entry per dimension,
    and its mesh; ``(None, None)`` for a value that is not explicitly sharded."""
    s = getattr(jax.typeof(value), "sharding", None)
    mesh = getattr(s, "mesh", None)
    if mesh is None or AxisType.Explicit not in tuple(getattr(mesh, "axis_types", ())):
        return None, None
    spec = tuple(s.spec.partitions)
    return spec + (None,) * (value.ndim - len(spec)), mesh


def any_explicit(values: Sequence[Any]) -> bool:
    """Whether a program's inputs (or the mesh set by ``set_mesh``) use explicit axes."""
    mesh = jax.sharding.get_abstract_mesh()
    if AxisType.Explicit in tuple(getattr(mesh, "axis_types", ()) or ()):
        return True
    return any(spec_of(v)[0] is not None for v in values if hasattr(v, "ndim"))


def _partial(value: Any) -> bool:
    """Whether ``value`` is typed unreduced or reduced over a mesh axis."""
    spec = getattr(getattr(jax.typeof(value), "sharding", None), "spec", None)
    return bool(spec is not None and (spec.unreduced or spec.reduced))


def _scale_partial_sums(values: list[Any]) -> list[Any]:
    """Operands beside a partial sum are taken as typed (JAX's rules for unreduced and
    reduced operands), but a scalar constant scaling a value unreduced over some axes is
    typed reduced over them, as JAX types the constants its transposes multiply by (a
    gradient's ``ct * 2`` of a reduced ``x * 2``)."""
    s = next(
        (t for v in values if (t := jax.typeof(v).sharding) is not None and t.spec.unreduced),
        None,
    )
    if s is None:
        return values
    target = NamedSharding(s.mesh, PartitionSpec(reduced=s.spec.unreduced))
    return [
        jax.sharding.reshard(v, target) if getattr(v, "ndim", 1) == 0 and not _partial(v) else v
        for v in values
    ]


def unify(values: list[Any]) -> list[Any]:
    """An elementwise equation's operands resharded to the result's sharding in funcgrad's
    types where their explicit shardings differ (scalars left alone)."""
    if any(_partial(v) for v in values):
        return _scale_partial_sums(values)
    found = [spec_of(v) if getattr(v, "ndim", 0) else (None, None) for v in values]
    specs = [spec for spec, _ in found if spec is not None]
    if not specs:
        return values
    ndim = max(len(s) for s in specs)
    target_spec = merge_specs([s for s in specs if len(s) == ndim], ndim)
    mesh = next(m for spec, m in found if spec is not None)
    change = [
        bool(getattr(v, "ndim", 0)) and found[i][0] != target_spec for i, v in enumerate(values)
    ]
    if not any(change):
        return values
    target = NamedSharding(mesh, PartitionSpec(*target_spec))
    return [jax.sharding.reshard(v, target) if c else v for v, c in zip(values, change)]


def dot_out_sharding(x: Any, y: Any, dimension_numbers: Any) -> Any:
    """The output sharding for lowering ``dot_general(x, y)`` under JAX's explicit mesh
    axes where JAX needs one (a contracting dimension split on both operands), else
    ``None``: the batch and free dimensions keep their operands' splits and the
    contraction is summed across devices — the sharding JAX's transpose gives a
    data-parallel gradient. funcgrad's IR has no shardings, so a transposed dot cannot
    take its primal's as JAX's does; a dot written by the user that JAX would refuse
    without ``out_sharding`` gets the same default."""
    sx, mesh = spec_of(x)
    sy, _ = spec_of(y)
    if sx is None or sy is None:
        return None
    (lc, rc), (lb, rb) = dimension_numbers
    if not any(sx[i] is not None and sx[i] == sy[j] for i, j in zip(lc, rc)):
        return None
    free_x = [sx[i] for i in range(len(sx)) if i not in lc and i not in lb]
    free_y = [sy[j] for j in range(len(sy)) if j not in rc and j not in rb]
    return NamedSharding(mesh, PartitionSpec(*[sx[i] for i in lb], *free_x, *free_y))
