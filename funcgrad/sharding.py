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

import functools
import inspect
from collections.abc import Callable
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
    use_abstract_mesh,
)

from funcgrad.core import partial_sums, sharding_types
from funcgrad.core.ad_util import close
from funcgrad.core.interp import Tracer, new_builder, to_aval
from funcgrad.primitives.calls import mesh_call
from funcgrad.primitives.sharding import sharding_constraint
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "make_mesh",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
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
    sets = sorted(s.spec.unreduced | s.spec.reduced)
    named = [e for e in s.spec.partitions if e is not None and e is not PartitionSpec.UNCONSTRAINED]
    axes = [a for e in named for a in (e if isinstance(e, tuple) else (e,))] + sets
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
        # (a pytree prefix of ``x``: one sharding for each subtree, as JAX's)
        per_leaf = []
        try:
            tree_map(
                lambda s, sub: per_leaf.extend([s] * len(tree_flatten(sub)[0])),
                shardings,
                x,
                is_leaf=lambda s: isinstance(s, _SHARDING_LIKE) or s is None,
            )
        except ValueError:
            s_tree = tree_flatten(
                shardings, is_leaf=lambda s: isinstance(s, _SHARDING_LIKE) or s is None
            )[1]
            raise ValueError(
                f"{name}: the shardings' tree structure {s_tree} does not match the value's "
                f"{tree} (nor is a prefix of it)"
            ) from None
    out = []
    for leaf, s in zip(leaves, per_leaf, strict=True):
        if s is None and kind == "constraint":
            raise ValueError(
                "One of with_sharding_constraint arguments got sharding None which is not "
                "allowed. Please only pass `jax.sharding.Sharding` instances."
            )
        if not isinstance(s, _SHARDING_LIKE):
            raise TypeError(
                f"{name}: expected a Sharding or a PartitionSpec for each leaf, got "
                f"{type(s).__name__}"
            )
        _check_axes(kind, s)
        if kind == "reshard":
            sharding_types.maybe_activate(s if isinstance(s, Sharding) else get_abstract_mesh())
        if isinstance(leaf, Tracer):
            if kind == "reshard" and isinstance(s, PartitionSpec):
                # (the mesh of the trace, which may be use_abstract_mesh's, not the lowering's)
                s = NamedSharding(get_abstract_mesh(), s)
            out.append(sharding_constraint(leaf, s, kind))
        else:
            if kind == "reshard":
                held = sharding_types.typeof(leaf, to_aval(leaf)).sharding
                partial_sums.check_reshard(held, s)
            out.append(eager(leaf, s))
    return tree_unflatten(tree, out)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` (a pytree of arrays) moved to ``out_shardings`` (a ``Sharding``, or a
    ``PartitionSpec`` over the mesh of :func:`set_mesh`; one for all leaves or a matching
    pytree), as ``jax.sharding.reshard``: the values are unchanged."""
    return _apply("reshard", "reshard", xs, out_shardings, jax.sharding.reshard)


def _given_or_keyword(given: Any, kwargs: dict, name: str) -> Any:
    """A decorator's sharding given at decoration, else taken from the call's keyword
    ``name`` (removed from ``kwargs``), as JAX's ``auto_axes``/``explicit_axes``."""
    if given is not None:
        return given
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def _switched(axes: Any, to: AxisType, name: str, shardings: Any = None) -> tuple | None:
    """The mesh to switch (the current abstract mesh, else that of the ``NamedSharding``s
    in ``shardings``, which must agree with it, as JAX's), the same mesh with ``axes`` (all
    when ``None``) of type ``to``, and the axes; ``None`` without either mesh."""
    mesh = get_abstract_mesh()
    given = None
    for s in tree_flatten(shardings, is_leaf=lambda s: isinstance(s, _SHARDING_LIKE))[0]:
        if isinstance(s, NamedSharding):
            m = s.mesh.abstract_mesh if isinstance(s.mesh, Mesh) else s.mesh
            if given is not None and given != m:
                raise ValueError(
                    f"Shardings passed to {name} should have the same mesh. Got one mesh "
                    f"{given} and another {s.mesh}"
                )
            given = m
    if given is not None and not mesh.empty and given != mesh:
        raise ValueError(
            f"Context mesh {mesh} must match the mesh passed to shardings {given}. "
            "Recommended approach is to use `jax.set_mesh` context manager."
        )
    if mesh.empty:
        if given is None:
            return None
        mesh = given
    names = mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)
    return mesh, mesh.update_axis_types({a: to for a in names}), names


def _spec_over(x: Any, mesh: Any) -> PartitionSpec:
    """``x``'s split as a spec over ``mesh``, naming only the axes explicit there."""
    explicit = {a for a, t in zip(mesh.axis_names, mesh.axis_types) if t == AxisType.Explicit}
    entries = []
    for e in sharding_types.spec_of(sharding_types.typeof(x, to_aval(x))):
        names = tuple(a for a in (e if isinstance(e, tuple) else (e,)) if a in explicit)
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    return PartitionSpec(*entries)


def _region(fun: Callable, mesh: Any, args: tuple, kwargs: dict, specs: Callable) -> Any:
    """``fun(*args, **kwargs)`` traced under the abstract ``mesh`` (its arguments first
    resharded to ``specs(args)`` there) and called as one ``mesh_call``, which lowers it
    inside that mesh as JAX requires."""
    leaves, tree = tree_flatten((args, kwargs))
    with use_abstract_mesh(mesh), new_builder("sharding") as b:
        a2, k2 = tree_unflatten(tree, [b.new_arg(to_aval(x)) for x in leaves])
        out_leaves, out_tree = tree_flatten(fun(*reshard(a2, specs(a2)), **k2))
        prog = b.build(out_leaves)
    prog, consts = close(prog)
    name = getattr(fun, "__name__", "fun")
    return tree_unflatten(out_tree, mesh_call(prog, *consts, *leaves, name=name, mesh=mesh))


def auto_axes(
    fun: Callable | None = None, /, *, axes: Any = None, out_sharding: Any = None
) -> Callable:
    """``fun`` run with the mesh's ``axes`` (all by default) automatic, as
    ``jax.sharding.auto_axes``: inside, values are not typed with splits over them and
    XLA's propagation places them; the results are resharded to ``out_sharding`` (given
    here, or by the caller as a keyword)."""
    if fun is None:
        return lambda f: auto_axes(f, axes=axes, out_sharding=out_sharding)

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        target = _given_or_keyword(out_sharding, kwargs, "out_sharding")
        found = _switched(axes, AxisType.Auto, "auto_axes", target)
        if found is None or set(found[0].auto_axes) == set(found[2]):
            return fun(*args, **kwargs)
        new = found[1]
        out = _region(fun, new, args, kwargs, lambda a: tree_map(lambda x: _spec_over(x, new), a))
        return reshard(out, target)

    return run


def explicit_axes(
    fun: Callable | None = None, /, *, axes: Any = None, in_sharding: Any = None
) -> Callable:
    """``fun`` run with the mesh's ``axes`` (all by default) explicit, as
    ``jax.sharding.explicit_axes``: its arguments resharded to ``in_sharding`` (given here,
    or by the caller as a keyword) and typed with their splits inside; the results leave
    with the splits the outer mesh's explicit axes allow."""
    if fun is None:
        return lambda f: explicit_axes(f, axes=axes, in_sharding=in_sharding)

    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        target = _given_or_keyword(in_sharding, kwargs, "in_sharding")
        found = _switched(axes, AxisType.Explicit, "explicit_axes")
        if found is None:
            raise ValueError(
                "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a "
                "mesh context when using `explicit_axes` API."
            )
        sharding_types.activate()
        out = _region(fun, found[1], args, kwargs, lambda a: target)
        return reshard(out, tree_map(lambda o: _spec_over(o, found[0]), out))

    return run


def takes_out_sharding(fn: Callable) -> Callable:
    """``fn`` taking JAX's keyword ``out_sharding`` too: its result resharded by it over
    explicit mesh axes (for functions whose values do not depend on their placement: the
    samplers, ``lax.reduce_sum``); the signature gains the keyword."""

    @functools.wraps(fn)
    def placed(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        return out if out_sharding is None else reshard(out, out_sharding)

    sig = inspect.signature(fn)
    kw = inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)
    placed.__signature__ = sig.replace(parameters=[*sig.parameters.values(), kw])  # type: ignore[attr-defined]
    return placed


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (a pytree of arrays) constrained to ``shardings`` for XLA's SPMD partitioner,
    as ``jax.lax.with_sharding_constraint``: the values are unchanged."""
    return _apply(
        "with_sharding_constraint", "constraint", x, shardings, jax.lax.with_sharding_constraint
    )
