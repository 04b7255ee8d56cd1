"""Unreduced and reduced mesh axes in funcgrad's types, as JAX 0.10 types them.

A value *unreduced* over a mesh axis (``P(unreduced={'x'})``) holds a partial sum on each
device along it: the value is the sum over the axis (a dot's result over a contraction
split on ``x``, asked for with ``out_sharding=P(..., unreduced={'x'})``, skips the
all-reduce). A value *reduced* over an axis is replicated there and its cotangent is
unreduced. Both sets live in the spec of the aval's ``NamedSharding``
(``spec.unreduced``, ``spec.reduced``) beside the per-dimension splits, and
``fg.typeof`` prints them as JAX does (``float32[2,2]{U:x}``).

:func:`apply` is called by ``sharding_types.propagate`` for an equation where an operand
or a result names either set: it gives the results the sets JAX's rule for the primitive
gives them (``add`` of operands unreduced alike, ``reduce_sum``, the shape ops and
``convert_element_type`` keep them; ``dot_general`` makes them from its ``out_sharding``),
and raises JAX's error where JAX refuses (an unreduced operand to a nonlinear op, ``add``
of an unreduced and a reduced-free value, ``mul`` of two unreduced values). Calls and
control flow keep the types their bodies give. A reshard to a spec without the axis is
the all-reduce (JAX's ``reshard`` lowering).
"""

from __future__ import annotations

from typing import Any

from jax.sharding import NamedSharding, PartitionSpec

from funcgrad.core.errors import ShardingTypeError
from funcgrad.core.ir import Aval, partial_sum_suffix

_ISSUE = " Please file an issue at https://github.com/jax-ml/jax/issues"

#: families whose primitives' results take their types from a body or a parameter
#: (calls, control flow, reshards, collectives): their rules' types are kept as given
PASS_THROUGH = frozenset(
    {
        "sharding",
        "calls",
        "control_flow",
        "shard_map",
        "collectives",
        "effects",
        "interop",
        "callbacks",
    }
)

#: primitives whose results keep their first operand's unreduced and reduced axes
#: (JAX's rules for the shape ops, casts and ``reduce_sum``)
KEEP = frozenset(
    {
        "convert_element_type",
        "reduce_precision",
        "transpose",
        "pad",
        "slice",
        "squeeze",
        "broadcast_in_dim",
        "reduce_sum",
        "stop_gradient",
        "split",
    }
)


def getu(a: Aval) -> frozenset:
    """The mesh axes ``a`` is unreduced over: each device holds a partial sum, the value is
    their sum (``P(unreduced={'x'})``, a dot's result over a split contraction)."""
    return frozenset() if a.sharding is None else a.sharding.spec.unreduced


def getr(a: Aval) -> frozenset:
    """The mesh axes ``a`` is reduced over: replicated there, its cotangent unreduced
    (``P(reduced={'x'})``)."""
    return frozenset() if a.sharding is None else a.sharding.spec.reduced


def _str(a: Aval) -> str:
    """``a`` as JAX's messages print a type (``float32[8@x]{R:x}``)."""
    return f"{a.dtype.name}[{a.dims_str()}]{partial_sum_suffix(a)}"


def _flat(entries: Any) -> list:
    out = []
    for e in entries:
        if isinstance(e, tuple):
            out.extend(e)
        elif e is not None:
            out.append(e)
    return out


def _mesh(avals: list[Aval]) -> Any:
    for a in avals:
        if a.sharding is not None:
            return a.sharding.mesh
    return None


def with_sets(out: Aval, mesh: Any, unreduced: frozenset, reduced: frozenset) -> Aval:
    """``out`` unreduced and reduced over the axes given (its splits unchanged)."""
    s = out.sharding
    parts = s.spec.partitions if s is not None else (None,) * out.ndim
    if s is not None:
        mesh = s.mesh
    if all(e is None for e in parts) and not unreduced and not reduced:
        return out if s is None else out.update(sharding=None)
    if mesh is None:
        return out
    spec = PartitionSpec(*parts, unreduced=unreduced, reduced=reduced)
    return out.update(sharding=NamedSharding(mesh, spec))


def nary_reduced(avals: list[Aval], ndim: int) -> frozenset:
    """JAX's reduced axes of an elementwise result: the one set its operands are reduced
    over, refused where another operand is replicated or split over one of those axes
    (a scalar beside arrays is broadcast into its partner's type, as ``jnp`` does)."""
    sets = {r for a in avals if (r := getr(a))}
    if len(sets) > 1:
        raise ShardingTypeError(
            f"All inputs should be reduced across the same mesh axes. Got specs: {sets}"
        )
    if not sets:
        return frozenset()
    (red,) = sets
    mesh = _mesh(avals)
    for a in avals:
        if a.ndim == 0 and ndim > 0 and a.sharding is None:
            continue
        split = (
            frozenset(_flat(a.sharding.spec.partitions)) if a.sharding is not None else frozenset()
        )
        replicated = frozenset(mesh.axis_names) - (split | getu(a) | getr(a))
        if replicated & red:
            raise ShardingTypeError(
                "Inputs cannot be replicated on the same axes that another input is reduced "
                f"on. Got input type: {_str(a)} and reduced spec: {red}"
            )
        if split & red:
            raise ShardingTypeError(
                "Inputs cannot be sharded/varying on the same axes that another input is "
                "reduced on. Reshard the input which is reduced to be sharded on the mesh "
                "axes it is reduced on via `jax.sharding.reshard(inp, jax.P(...))`. Got input "
                f"type: {_str(a)} and reduced spec: {red}"
            )
    return red


def _add(avals: list[Aval], ndim: int) -> tuple[frozenset, frozenset]:
    red = nary_reduced(avals, ndim)
    x_u, y_u = getu(avals[0]), getu(avals[1])
    if x_u and y_u:
        if x_u != y_u:
            raise ShardingTypeError(
                "lhs and rhs to `add` must be unreduced along the same mesh axes. "
                f"Got lhs={x_u}, rhs={y_u}"
            )
        return x_u, red
    if x_u or y_u:
        lhs, rhs = ("lhs", "rhs") if x_u else ("rhs", "lhs")
        raise ShardingTypeError(
            f"{lhs} is unreduced while {rhs} is not. `add` operation does not allow this "
            f"because there will be implicit communication. Please reduce {lhs} via "
            "`reshard` before calling `add`."
        )
    return frozenset(), red


def _mul(avals: list[Aval], ndim: int) -> tuple[frozenset, frozenset]:
    red = nary_reduced(avals, ndim)
    x, y = avals
    x_u, y_u = getu(x), getu(y)
    # an untyped scalar (a constant) scales a partial sum as it does a value: JAX types
    # the constants its own transposes multiply by reduced, which funcgrad's literals
    # cannot say, so ``ct * 2`` in the gradient of ``x * 2`` stays unreduced
    if (x_u and _constant(y)) or (y_u and _constant(x)):
        return x_u or y_u, frozenset()
    if x_u and y_u:
        raise ShardingTypeError(
            "lhs and rhs to `mul` cannot be unreduced since mul is bilinear. "
            f"Got lhs={x_u}, rhs={y_u}"
        )
    if x_u and x_u != getr(y):
        raise ShardingTypeError(
            "RHS should be reduced along the same axes LHS is unreduced on. Got "
            f"lhs={_str(x)} and rhs={_str(y)}"
        )
    if y_u and y_u != getr(x):
        raise ShardingTypeError(
            "LHS should be reduced along the same axes RHS is unreduced on. Got "
            f"lhs={_str(x)} and rhs={_str(y)}"
        )
    u = x_u or y_u
    return u, (frozenset() if u else red)


def _constant(a: Aval) -> bool:
    return a.ndim == 0 and not getu(a) and not getr(a)


def _dot(avals: list[Aval], out_sharding: Any, dimension_numbers: Any) -> tuple:
    lhs, rhs = avals
    if getu(lhs) or getu(rhs):
        raise ShardingTypeError(
            "lhs or rhs passed to dot_general cannot be unreduced. Got "
            f"lhs={_str(lhs)} and rhs={_str(rhs)}"
        )
    want = getattr(getattr(out_sharding, "spec", None), "unreduced", frozenset())
    if not want:
        return frozenset(), frozenset()
    (lc, rc), _ = dimension_numbers
    pl = lhs.sharding.spec.partitions if lhs.sharding is not None else (None,) * lhs.ndim
    pr = rhs.sharding.spec.partitions if rhs.sharding is not None else (None,) * rhs.ndim
    ls, rs = tuple(pl[i] for i in lc), tuple(pr[j] for j in rc)
    if ls != rs:
        raise ShardingTypeError(
            "lhs and rhs contracting dims should be sharded identically when out_sharding "
            "provided to dot_general mentions unreduced_axes. Got "
            f"lhs_contracting_spec={ls}, rhs_contracting_spec={rs}"
        )
    if want != frozenset(_flat(ls)):
        raise ShardingTypeError(
            "out_sharding's unreduced axes should be equal to the contracting specs. Got "
            f"unreduced axes={want} and contracting spec={ls}"
        )
    return want, frozenset()


def _reduce_sum(x: Aval, axes: tuple, out_sharding: Any) -> frozenset:
    """JAX's rule: a sum's ``out_sharding`` may leave it unreduced over the axes that split
    the summed dimensions (or over which the operand already is), no others."""
    want = out_sharding.spec.unreduced
    if not want:
        return getu(x)
    parts = x.sharding.spec.partitions if x.sharding is not None else ()
    used = frozenset(_flat(tuple(p for i, p in enumerate(parts) if i in axes))) | getu(x)
    if not want <= used:
        raise ShardingTypeError(
            "out_sharding's unreduced axes should be in operand's specs that were summed "
            f"over. Got operand={_str(x)}, axes={tuple(axes)}, unreduced_spec={set(want)}"
        )
    return frozenset(want)


def _reshape(x: Aval, out_sharding: Any) -> tuple:
    spec = getattr(out_sharding, "spec", None)
    sets = []
    for kind, have in (("unreduced", getu(x)), ("reduced", getr(x))):
        given = getattr(spec, kind, frozenset()) if spec is not None else frozenset()
        if have and spec is not None and given != have:
            raise ShardingTypeError(
                f"out_sharding passed to reshape must be {kind} over the same mesh axes as "
                f"operand. Got out_sharding: {spec} and operand type: {_str(x)}"
            )
        if given and not have:
            raise ValueError(
                f"out_sharding passed to `reshape` cannot contain {kind} axes. Got {out_sharding}"
            )
        sets.append(have)
    return tuple(sets)


def _same_sets(avals: list[Aval], get: Any, kind: str) -> frozenset:
    sets = {s for a in avals if (s := get(a))}
    if len(sets) > 1:
        raise ShardingTypeError(
            f"All operands should be {kind} along the same mesh axes. Got {kind} specs: {sets}"
        )
    return sets.pop() if sets else frozenset()


def check_reshard(src: Any, dst: Any) -> None:
    """Refuse a reshard from a value unreduced over some axes to one unreduced over
    others, each naming an axis the other does not: XLA's partitioner (Shardy) aborts the
    process on it rather than raising; reduce over the source's axes first."""
    src_u, dst_u = (
        getattr(s if isinstance(s, PartitionSpec) else getattr(s, "spec", None), "unreduced", None)
        or frozenset()
        for s in (src, dst)
    )
    if src_u - dst_u and dst_u - src_u:
        raise ShardingTypeError(
            f"reshard: a value unreduced over {sorted(src_u)} cannot be resharded to one "
            f"unreduced over {sorted(dst_u)} (each names axes the other does not); reshard "
            f"it to a spec unreduced over {sorted(src_u & dst_u)} first"
        )


def apply(prim: Any, avals: list[Aval], outs: list[Aval], params: dict) -> list[Aval]:
    """``outs`` (typed with their splits by the primitive's sharding rule) unreduced and
    reduced over the axes JAX's rule for ``prim`` gives, or JAX's error where it refuses."""
    name, family = prim.name, prim.family
    if family in PASS_THROUGH:
        return outs
    mesh = _mesh([*avals, *outs])
    ndim = outs[0].ndim if outs else 0
    if name == "add":
        u, r = _add(avals, ndim)
    elif name == "mul":
        u, r = _mul(avals, ndim)
    elif name == "dot_general":
        u, r = _dot(avals, params.get("out_sharding"), params["dimension_numbers"])
    elif name == "reshape":
        u, r = _reshape(avals[0], params.get("out_sharding"))
    elif name == "reduce_sum" and params.get("out_sharding") is not None:
        u, r = _reduce_sum(avals[0], params["axes"], params["out_sharding"]), getr(avals[0])
    elif name in KEEP:
        u, r = getu(avals[0]), getr(avals[0])
    elif name == "concatenate":
        u = _same_sets(avals, getu, "unreduced")
        r = _same_sets(avals, getr, "reduced")
    elif name == "select_n":
        cases = [a for a in avals[1:] if a.sharding is not None] or avals[1:]
        u, r = getu(cases[0]), getr(cases[0])
    elif name == "dynamic_slice":
        if getu(avals[0]):
            raise NotImplementedError(
                "unreduced rule for dynamic_slice is not implemented." + _ISSUE
            )
        u, r = frozenset(), getr(avals[0])
    elif family in ("elementwise", "special") and not prim.multiple_results:
        if any(getu(a) for a in avals):
            raise NotImplementedError(f"unreduced rule for {name} is not implemented." + _ISSUE)
        u = frozenset()
        r = getr(avals[0]) if len(avals) == 1 else nary_reduced(avals, ndim)
    else:
        raise NotImplementedError(f"unreduced/reduced rule for {name} is not implemented." + _ISSUE)
    return [with_sets(o, mesh, u, r) for o in outs]
