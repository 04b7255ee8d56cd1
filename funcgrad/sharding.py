"""Device meshes and shardings, as ``jax.sharding``: JAX's own classes, funcgrad's ops.

funcgrad hands shardings to XLA's SPMD partitioner through JAX, so the mesh and
sharding objects are JAX's (``Mesh``, ``NamedSharding``, ``PartitionSpec``,
``AxisType``...: one object model for both libraries, and arrays placed by either are
the same ``jax.Array``). What acts on values is funcgrad's: :func:`reshard` (and
``funcgrad.lax.with_sharding_constraint``) outside a transform place the arrays as JAX
does; inside one they record a ``sharding_constraint`` equation in funcgrad's IR, whose
lowering gives JAX the sharding (``funcgrad/primitives/sharding.py``).

    mesh = fg.make_mesh((4,), ("batch",), axis_types=(AxisType.Explicit,))
    x = fg.device_put(data, NamedSharding(mesh, P("batch")))
    with fg.set_mesh(mesh):
        params = train_step(params, x)
"""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    get_abstract_mesh,
)

from funcgrad.core import sharding_types
from funcgrad.core.interp import Tracer
from funcgrad.primitives.sharding import sharding_constraint
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "get_abstract_mesh",
    "make_mesh",
    "reshard",
    "set_mesh",
    "with_sharding_constraint",
]


def make_mesh(
    axis_shapes: Any, axis_names: Any, axis_types: Any = None, *, devices: Any = None
) -> Mesh:
    """A mesh of ``axis_shapes`` devices named ``axis_names``, as ``jax.make_mesh`` (its
    devices laid out for the shape; ``axis_types`` JAX's explicit or automatic sharding per
    axis, explicit by default). A mesh with explicit axes turns on sharding in funcgrad's
    types (``core/sharding_types.py``)."""
    mesh = jax.make_mesh(axis_shapes, axis_names, axis_types, devices=devices)
    sharding_types.maybe_activate(mesh)
    return mesh


def set_mesh(mesh: Any) -> Any:
    """Make ``mesh`` the current one, as ``jax.set_mesh`` (a call, or a context manager
    restoring the previous mesh on exit); a mesh with explicit axes turns on sharding in
    funcgrad's types."""
    sharding_types.maybe_activate(mesh)
    return jax.set_mesh(mesh)


_SHARDING_LIKE = (Sharding, PartitionSpec)


def _check_axes(kind: str, s: Any) -> None:
    """Refuse a ``NamedSharding`` splitting over mesh axes of the wrong type, as JAX: a
    constraint guides XLA's propagation over automatic axes (``AxisType.Auto``); a
    reshard moves values over explicit ones (``AxisType.Explicit``)."""
    if not isinstance(s, NamedSharding):
        return
    types = dict(zip(s.mesh.axis_names, s.mesh.axis_types, strict=True))
    named = [e for e in s.spec if e is not None and e is not PartitionSpec.UNCONSTRAINED]
    axes = [a for e in named for a in (e if isinstance(e, tuple) else (e,))]
    if kind == "constraint":
        bad = [a for a in axes if types.get(a) == AxisType.Explicit]
        if bad:
            raise ValueError(
                f"with_sharding_constraint: the spec {s.spec} splits over the explicit mesh "
                f"axes {bad}; a constraint takes automatic axes only (AxisType.Auto): "
                "use reshard for explicit ones"
            )
    else:
        bad = [a for a in axes if types.get(a) != AxisType.Explicit]
        if bad:
            raise ValueError(
                f"reshard: the spec {s.spec} splits over the mesh axes {bad}, which are not "
                "explicit; reshard takes explicit axes only (AxisType.Explicit): use "
                "with_sharding_constraint for automatic ones"
            )


def _apply(name: str, kind: str, x: Any, shardings: Any, eager: Any) -> Any:
    """Each leaf of ``x`` with its sharding from ``shardings`` (one sharding or spec for
    all leaves, or a pytree of them matching ``x``): ``eager`` on concrete leaves, a
    ``sharding_constraint`` equation of ``kind`` on traced ones."""
    leaves, tree = tree_flatten(x)
    if isinstance(shardings, _SHARDING_LIKE) or shardings is None:
        per_leaf = [shardings] * len(leaves)
    else:
        per_leaf, s_tree = tree_flatten(
            shardings, is_leaf=lambda s: isinstance(s, _SHARDING_LIKE) or s is None
        )
        if s_tree != tree:
            raise ValueError(
                f"{name}: the shardings' tree structure {s_tree} does not match the value's {tree}"
            )
    out = []
    for leaf, s in zip(leaves, per_leaf, strict=True):
        if not isinstance(s, _SHARDING_LIKE):
            raise TypeError(
                f"{name}: expected a Sharding or a PartitionSpec for each leaf, got "
                f"{type(s).__name__}"
            )
        _check_axes(kind, s)
        if kind == "reshard":
            sharding_types.maybe_activate(s if isinstance(s, Sharding) else get_abstract_mesh())
        if isinstance(leaf, Tracer):
            out.append(sharding_constraint(leaf, s, kind))
        else:
            out.append(eager(leaf, s))
    return tree_unflatten(tree, out)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` (a pytree of arrays) moved to ``out_shardings`` (a ``Sharding``, or a
    ``PartitionSpec`` over the mesh of :func:`set_mesh`; one for all leaves or a matching
    pytree), as ``jax.sharding.reshard``: the values are unchanged."""
    return _apply("reshard", "reshard", xs, out_shardings, jax.sharding.reshard)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (a pytree of arrays) constrained to ``shardings`` for XLA's SPMD partitioner,
    as ``jax.lax.with_sharding_constraint``: the values are unchanged."""
    return _apply(
        "with_sharding_constraint", "constraint", x, shardings, jax.lax.with_sharding_constraint
    )
