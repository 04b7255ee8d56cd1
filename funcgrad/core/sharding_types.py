"""Sharding in funcgrad's types: each value's split over a mesh's explicit axes.

Under a mesh whose axes are ``AxisType.Explicit`` (JAX 0.10's ``make_mesh`` default) JAX
types every value with its sharding: ``jax.typeof(x)`` prints ``float32[8@X,4@Y]``, and
the type of an operation's result follows from its operands'. funcgrad does the same in
its own IR: an :class:`~funcgrad.core.ir.Aval` holds the sharding (``Aval.sharding``, a
``NamedSharding`` over the abstract mesh naming explicit axes only), arrays placed over
explicit axes give typed avals (``ir.aval_of``), and tracing propagates shardings with
one rule per primitive (``Primitive.sharding_rule``; the elementwise and reduction
families share a default here). A primitive without a rule gives an untyped result
(``None``): its value is still placed by JAX's own propagation where the program is
lowered, only funcgrad's type does not say how.

Nothing of this runs until a mesh with explicit axes is in use (:func:`activate`, called
by ``funcgrad.sharding`` and ``fg.device_put``): untyped programs trace as before, and
``aval_of`` reads no array's sharding.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec, SingleDeviceSharding

from funcgrad.core import partial_sums
from funcgrad.core.errors import ShardingTypeError
from funcgrad.core.ir import SHARDING_TYPES, Aval, Eqn, aval_of, typed_sharding
from funcgrad.core.zeros import is_zero

#: the families whose results take their operands' common sharding (same-shaped
#: operands, or scalars beside them)
ELEMENTWISE_FAMILIES = frozenset({"elementwise", "special"})


def active() -> bool:
    """Whether values are typed with their shardings (a mesh with explicit axes was used)."""
    return SHARDING_TYPES[0]


def activate() -> None:
    """Type values with their shardings from now on (idempotent)."""
    SHARDING_TYPES[0] = True


def has_explicit_axes(mesh: Any) -> bool:
    return AxisType.Explicit in tuple(getattr(mesh, "axis_types", ()) or ())


def maybe_activate(sharding_or_mesh: Any) -> None:
    """:func:`activate` if ``sharding_or_mesh`` (a mesh, or a sharding) has an explicit
    axis, or places values over several devices (a concrete mesh or sharding: eager work
    on such values must keep their placement, :func:`split_over_devices`)."""
    if SHARDING_TYPES[0]:
        return
    mesh = getattr(sharding_or_mesh, "mesh", sharding_or_mesh)
    if has_explicit_axes(mesh) or _devices(sharding_or_mesh) > 1:
        activate()


def _devices(sharding_or_mesh: Any) -> int:
    """How many devices a concrete mesh or sharding spans (0 for an abstract one)."""
    if isinstance(sharding_or_mesh, jax.sharding.Sharding):
        return len(sharding_or_mesh.device_set)
    if isinstance(sharding_or_mesh, jax.sharding.Mesh):
        return sharding_or_mesh.devices.size
    return 0


def split_over_devices(args: Sequence[Any]) -> bool:
    """Whether any of ``args`` is a JAX array placed over several devices (split or
    replicated, over any mesh): eager work on it runs compiled, as JAX's does (the host
    tier computes on one device: its results would lose their placement, and over
    explicit axes their type)."""
    for a in args:
        if (
            isinstance(a, jax.Array)
            and not isinstance(a, jax.core.Tracer)
            and not isinstance(a.sharding, SingleDeviceSharding)
            and len(a.sharding.device_set) > 1
        ):
            return True
    return False


def check_committed_to(x: Any, device: Any) -> Any:
    """JAX's error for ``array``/``asarray`` (``device=``) of an array committed to other
    devices than ``device`` names (JAX converts it in a program constrained to ``device``, which a
    committed operand on other devices cannot enter; ``device_put`` moves it). Returns ``x``."""
    if not isinstance(x, jax.Array) or not getattr(x, "_committed", False):
        return x
    want = device.device_set if isinstance(device, jax.sharding.Sharding) else {device}
    have = x.sharding.device_set
    if have == want:
        return x

    def ids(devs: Any) -> str:
        return f"device ids {sorted(d.id for d in devs)} on platform {next(iter(devs)).platform.upper()}"

    raise ValueError(
        "Received incompatible devices for jitted computation. Got argument args[0] of "
        f"convert_element_type with shape {jax.typeof(x).str_short()} and with {ids(have)} "
        f"and sharding_constraint inside jit with {ids(want)}"
    )


def named(sharding: Any) -> NamedSharding:
    """An op's ``out_sharding`` as a ``NamedSharding`` (a ``PartitionSpec`` is over the
    current abstract mesh, read when the op is called)."""
    if isinstance(sharding, PartitionSpec):
        return NamedSharding(jax.sharding.get_abstract_mesh(), sharding)
    return sharding


def reversed_spec(sharding: Any) -> NamedSharding:
    """An op's ``out_sharding`` with its spec's entries in reverse order: the type of the
    row-major middle step of a column-major reshape (JAX's ``order="F"``, which reverses
    the spec as written, so a spec shorter than the rank types the last axes)."""
    ns = named(sharding)
    return NamedSharding(ns.mesh, ns.spec.update(partitions=ns.spec.partitions[::-1]))


class _VmapAxes(threading.local):
    def __init__(self) -> None:
        #: the explicit mesh axes each running ``vmap`` rewrite's mapped dimensions are
        #: split over (JAX's ``axis_data.explicit_mesh_axis``), innermost last
        self.stack: list[Any] = []


_VMAP_AXES = _VmapAxes()


@contextmanager
def vmap_explicit_axes(axes: tuple | None) -> Iterator[None]:
    """Within the block a ``vmap`` rewrite batches values whose mapped dimensions are split
    over the explicit mesh ``axes`` (``None``: not split): an ``out_sharding`` batched
    there (:func:`batched`) splits its batch axis over them, as JAX's."""
    _VMAP_AXES.stack.append(axes)
    try:
        yield
    finally:
        _VMAP_AXES.stack.pop()


def vmap_entry(mesh: Any = None) -> Any:
    """The spec entry of the innermost running ``vmap``'s batch axis: the explicit mesh
    axes its mapped dimensions are split over, or ``None`` (also where ``mesh``, that of
    the sharding batched, does not have them explicit: inside ``auto_axes``)."""
    axes = _VMAP_AXES.stack[-1] if _VMAP_AXES.stack else None
    if not axes:
        return None
    if mesh is not None:
        kinds = dict(zip(mesh.axis_names, mesh.axis_types))
        if any(kinds.get(a) != AxisType.Explicit for a in axes):
            return None
    return axes[0] if len(axes) == 1 else tuple(axes)


def canonical(sharding: Any, api_name: str) -> NamedSharding | None:
    """An op's ``out_sharding`` checked and read as JAX's ``canonicalize_sharding``: a
    ``PartitionSpec`` is over the current abstract mesh (refused without one), a
    ``NamedSharding`` of an empty mesh is none, and naming an axis that is ``Auto`` or
    ``Manual`` there is JAX's ``ValueError``."""
    if sharding is None or (isinstance(sharding, NamedSharding) and sharding.mesh.empty):
        return None
    if not isinstance(sharding, (NamedSharding, PartitionSpec)):
        raise TypeError(
            f"`out_sharding` argument of {api_name} only supports instances of "
            f"`NamedSharding` or `PartitionSpec`. Got {sharding} of type: {type(sharding)}"
        )
    if isinstance(sharding, PartitionSpec):
        mesh = jax.sharding.get_abstract_mesh()
        if mesh.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. "
                "Please pass a NamedSharding instance or enter into a mesh context via "
                f"`jax.set_mesh`. Got {sharding}"
            )
        sharding = NamedSharding(mesh, sharding)
    kinds = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types))
    spec = sharding.spec
    named = [
        a for e in spec.partitions if e is not None for a in (e if isinstance(e, tuple) else (e,))
    ]
    for a in (*named, *spec.unreduced, *spec.reduced):
        if kinds.get(a) in (AxisType.Auto, AxisType.Manual):
            raise ValueError(
                f"PartitionSpec passed to {api_name} cannot contain axis names that are of "
                f"type Auto or Manual. Got PartitionSpec: {spec} with axis name: {a} of type: "
                f"{kinds[a]}"
            )
    return sharding


def batched(sharding: NamedSharding, ndim: int, dim: int) -> NamedSharding:
    """``sharding`` of an ``ndim``-dimensional value with a batch axis inserted at ``dim``,
    split as the running ``vmap``'s mapped dimensions are (:func:`vmap_entry`; JAX's
    ``get_sharding_for_vmap``)."""
    parts = sharding.spec.partitions
    spec = list(parts) + [None] * (ndim - len(parts))
    spec.insert(dim, vmap_entry(sharding.mesh))
    return NamedSharding(sharding.mesh, sharding.spec.update(partitions=tuple(spec)))


def spec_of(aval: Aval) -> tuple:
    """``aval``'s spec, one entry per dimension (``None`` entries when untyped)."""
    if aval.sharding is None:
        return (None,) * len(aval.shape)
    return tuple(aval.sharding.spec.partitions)


def typed(
    aval: Aval,
    spec: Sequence[Any],
    mesh: Any,
    unreduced: frozenset = frozenset(),
    reduced: frozenset = frozenset(),
) -> Aval:
    """``aval`` with the sharding ``spec`` over ``mesh``, unreduced and reduced over the
    axes given (untyped if nothing is split, unreduced or reduced)."""
    if mesh is None or (all(e is None for e in spec) and not unreduced and not reduced):
        return aval if aval.sharding is None else aval.update(sharding=None)
    p = PartitionSpec(*spec, unreduced=unreduced, reduced=reduced)
    return aval.update(sharding=NamedSharding(mesh, p))


def cotangent_sharding(sharding: Any) -> Any:
    """The sharding of a cotangent of a value of ``sharding``: its unreduced and reduced
    axes swapped (JAX's ``to_ct_spec``: a partial sum's cotangent is replicated over those
    axes, a reduced value's cotangent is a partial sum)."""
    if sharding is None or not (sharding.spec.unreduced or sharding.spec.reduced):
        return sharding
    return NamedSharding(sharding.mesh, sharding.spec.to_ct_spec())


def mesh_of(avals: Sequence[Aval]) -> Any:
    """The abstract mesh of the first typed aval, or ``None``."""
    for a in avals:
        if a.sharding is not None:
            return a.sharding.mesh
    return None


def _splits(spec: Sequence[Any]) -> int:
    return sum(e is not None for e in spec)


def _default(prim: Any, avals: list[Aval], outs: list[Aval], params: dict) -> list[Aval]:
    mesh = mesh_of(avals)
    if prim.family in ELEMENTWISE_FAMILIES and not prim.multiple_results:
        return elementwise_rule(avals, outs)
    if len(avals) == 1 and len(outs) == 1 and outs[0].shape == avals[0].shape:
        return [outs[0].update(sharding=avals[0].sharding)]  # (cumulative ops, sorts)
    if "axes" in params and len(avals) == 1 and not prim.multiple_results:
        axes = params["axes"]
        spec = [e for i, e in enumerate(spec_of(avals[0])) if i not in axes]
        if len(spec) == outs[0].ndim:
            return [typed(outs[0], spec, mesh)]
    return outs


def propagate(prim: Any, avals: list[Aval], outs: list[Aval], params: dict) -> list[Aval]:
    """The output avals of one equation typed with their shardings, from its operands'
    (called by the tracer for every equation once :func:`active`)."""
    rule = prim.sharding_rule
    if rule is not None:  # (a rule also types results from its params: a reshard)
        res = list(rule(avals, outs, **params))
    elif not any(a.sharding is not None for a in avals):
        return outs
    else:
        res = _default(prim, avals, outs, params)
    if any(partial_sums.getu(a) or partial_sums.getr(a) for a in (*avals, *res)):
        return partial_sums.apply(prim, avals, res, params)
    return res


def typeof(x: Any, aval: Aval) -> Aval:
    """The aval ``fg.typeof`` shows for ``x`` (its own, or for an array that funcgrad
    has not typed, the sharding its placement gives)."""
    if aval.sharding is None and isinstance(x, jax.Array):
        s = typed_sharding(getattr(x, "sharding", None), aval.ndim)
        if s is not None:
            return aval.update(sharding=s)
    return aval


def full_sharding(aval: Aval) -> Any:
    """``aval``'s sharding as JAX's types show it: over the current abstract mesh, with
    one ``None`` entry per dimension when the value is not split over explicit axes."""
    if aval.sharding is not None:
        return aval.sharding
    mesh = jax.sharding.get_abstract_mesh()
    key = (mesh, aval.ndim)
    s = _UNSPLIT.get(key)
    if s is None:  # (a tracer's ``.aval`` asks for it on every read)
        if len(_UNSPLIT) > 256:
            _UNSPLIT.clear()
        s = _UNSPLIT[key] = NamedSharding(mesh, PartitionSpec(*[None] * aval.ndim))
    return s


#: ``full_sharding`` of an untyped aval, by (abstract mesh, rank)
_UNSPLIT: dict[tuple, NamedSharding] = {}


# --------------------------------------------------------------------------- rules
# (attached by the primitives' modules: ``reshape_p.sharding_rule = reshape_rule``)


def merge_specs(specs: Sequence[tuple], ndim: int) -> tuple | None:
    """The spec of an elementwise result from its full-rank operands' specs: per
    dimension, the one axis they split it over (JAX's rule: ``4@X,1`` + ``1,8@Y``
    broadcast gives ``4@X,8@Y``); where they disagree, the most split operand's whole
    spec (``explicit_sharding.unify`` lowers it so). ``None`` when there is none."""
    if not specs:
        return None
    out = []
    for d in range(ndim):
        named = {s[d] for s in specs if s[d] is not None}
        if len(named) > 1:
            return max(specs, key=_splits)
        out.append(named.pop() if named else None)
    used = [e for e in out if e is not None]
    if len(used) != len(set(used)):
        return max(specs, key=_splits)
    return tuple(out)


def elementwise_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    ndim = outs[0].ndim
    spec = merge_specs([spec_of(a) for a in avals if a.ndim == ndim and a.sharding], ndim)
    return [outs[0] if spec is None else typed(outs[0], spec, mesh_of(avals))]


def broadcast_rule(
    avals: list[Aval], outs: list[Aval], *, shape: tuple, broadcast_dimensions: tuple, **_: Any
) -> list[Aval]:
    """``broadcast_in_dim``: an operand dimension keeps its split where its size stays."""
    x = avals[0]
    if x.sharding is None:
        return outs
    spec: list[Any] = [None] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] == shape[d]:
            spec[d] = spec_of(x)[i]
    return [typed(outs[0], spec, x.sharding.mesh)]


def transpose_rule(avals: list[Aval], outs: list[Aval], *, permutation: tuple) -> list[Aval]:
    x = avals[0]
    if x.sharding is None:
        return outs
    s = spec_of(x)
    return [typed(outs[0], [s[p] for p in permutation], x.sharding.mesh)]


class _ReshapeUntypable(Exception):
    """A reshape of split values JAX's rule has no type for."""


def _one_axis_split(old: Sequence[int], new: Sequence[int]) -> list | None:
    """Per dimension of ``old``: its size where ``new`` keeps it, or the list of sizes it
    is cut into in ``new`` (one dimension at most; trailing unit dimensions of both kept
    aside); ``None`` where ``new`` is not such a cut of ``old`` (JAX's
    ``_split_on_one_axis``; cutting two dimensions is :class:`_ReshapeUntypable`)."""
    if len(new) <= len(old):
        return None
    old, new = list(old), list(new)
    units = 0
    while old[-1] == 1 and new[-1] == 1:
        units, old, new = units + 1, old[:-1], new[:-1]
    out: list = []
    cuts = 0
    i = j = 0
    while j < len(new):
        if old[i] == new[j]:
            out.append(old[i])
        else:
            cuts += 1
            if cuts > 1:
                raise _ReshapeUntypable
            piece = [new[j]]
            nj, ni = j + 1, i + 1
            while math.prod(piece) != old[i] or (nj < len(new) and new[nj] == 1):
                if math.prod(piece) > old[i]:
                    return None
                if math.prod(piece) == old[i] and ni < len(old) and new[nj] == old[ni]:
                    break
                j += 1
                if j >= len(new):
                    return None
                piece.append(new[j])
                nj += 1
            out.append(piece)
        i, j = i + 1, j + 1
    return out + [1] * units


def _split_entries(mesh: Any, axes: Sequence[Any], sizes: Sequence[int]) -> list:
    """The mesh ``axes`` (in order) spread over dimensions of ``sizes``, each taking axes
    while its size divides (JAX's ``split_partitions``)."""
    it = iter(axes)
    shape = dict(mesh.shape)
    entries = []
    for n in sizes:
        taken: list = []
        while n > 1:
            a = next(it, None)
            if a is None:
                break
            n, rem = divmod(n, shape[a])
            if rem:
                raise _ReshapeUntypable
            taken.append(a)
        entries.append(None if not taken else taken[0] if len(taken) == 1 else tuple(taken))
    if next(it, None) is not None:
        raise _ReshapeUntypable
    return entries


def _flat_axes(entries: Sequence[Any]) -> list:
    return [a for e in entries for a in (e if isinstance(e, tuple) else (e,))]


def _reshape_spec(x: Aval, new: tuple[int, ...]) -> list:
    """The spec JAX's rule gives ``reshape(x, new)`` (:class:`_ReshapeUntypable` where it
    raises): unit dimensions added or dropped move nothing; one dimension cut into
    several spreads its axes over the pieces; several merged into one take their axes
    if the split ones lead."""
    spec, mesh = spec_of(x), x.sharding.mesh
    if [n for n in x.shape if n != 1] == [n for n in new if n != 1]:
        kept = iter(e for n, e in zip(x.shape, spec) if n != 1)
        return [None if n == 1 else next(kept) for n in new]
    cut = _one_axis_split(x.shape, new)
    if cut is not None:
        out: list = []
        for c, e in zip(cut, spec):
            if not isinstance(c, list):
                out.append(e)
            elif e is None:
                out.extend([None] * len(c))
            else:
                out.extend(_split_entries(mesh, _flat_axes([e]), c))
        return out
    merged = _one_axis_split(new, x.shape) if len(new) < len(x.shape) else None
    if merged is None:
        raise _ReshapeUntypable
    it = iter(spec)
    out = []
    for n, m in zip(new, merged):
        if not isinstance(m, list):
            out.append(next(it))
            continue
        group = [next(it) for _ in m]
        if all(e is None for e in group):
            out.append(None)
            continue
        # (unsplit dimensions may only trail the split ones)
        flat = [a for e in group for a in ((None,) if e is None else _flat_axes([e]))]
        while flat and flat[-1] is None:
            flat.pop()
        if None in flat:
            raise _ReshapeUntypable
        out.extend(_split_entries(mesh, flat, [n]))
    return out


def reshape_rule(
    avals: list[Aval], outs: list[Aval], *, new_sizes: tuple, out_sharding: Any = None
) -> list[Aval]:
    """``reshape``, as JAX's rule types it (:func:`_reshape_spec`); a reshape it has no
    type for is JAX's ``ShardingTypeError`` asking for ``out_sharding``."""
    if out_sharding is not None:
        return [outs[0].update(sharding=typed_sharding(out_sharding, outs[0].ndim))]
    x = avals[0]
    if x.sharding is None or not any(e is not None for e in spec_of(x)):
        return outs
    try:
        spec = _reshape_spec(x, tuple(new_sizes))
    except _ReshapeUntypable:
        raise ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via "
            "the `out_sharding` argument of jax.lax.reshape. Got operand type: "
            f"{x.str_short()}, new sizes: {tuple(new_sizes)}"
        ) from None
    return [typed(outs[0], spec, x.sharding.mesh)]


def _axes_size(mesh: Any, entry: Any) -> int:
    names = entry if isinstance(entry, tuple) else (entry,)
    sizes = dict(mesh.shape)
    out = 1
    for a in names:
        out *= sizes[a]
    return out


def varying_out_shape(x: Aval, shape: Sequence[int], name: str) -> tuple:
    """The spec of a result of ``shape`` cut or padded from ``x`` (a slice, a pad, a
    split's piece): ``x``'s, as JAX types it; a split dimension whose new size does not
    divide over its axes is JAX's ``ShardingTypeError`` (uneven splits have no type)."""
    spec = spec_of(x)
    if x.sharding is None:
        return spec
    mesh = x.sharding.mesh
    for e, n, m in zip(spec, shape, x.shape, strict=True):
        if e is not None and n != m and n % _axes_size(mesh, e) != 0:
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({n}) is not divisible by mesh axes "
                f"({_axes_size(mesh, e)}) with spec ({_entry_str(e)}) is not implemented. Got "
                f"input type={x.str_short()} and output shape={tuple(shape)}"
            )
    return spec


def _entry_str(e: Any) -> str:
    return ",".join(e) if isinstance(e, tuple) else str(e)


def slice_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """``slice``: the operand's splits (:func:`varying_out_shape`)."""
    x, out = avals[0], outs[0]
    if x.sharding is None:
        return outs
    return [typed(out, varying_out_shape(x, out.shape, "slicing"), x.sharding.mesh)]


def pad_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """``pad``: the operand's splits (:func:`varying_out_shape`)."""
    x, out = avals[0], outs[0]
    if x.sharding is None:
        return outs
    return [typed(out, varying_out_shape(x, out.shape, "padding"), x.sharding.mesh)]


def concatenate_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """``concatenate``: the operands' common sharding, as JAX's rule; typed operands split
    otherwise than each other are JAX's ``ShardingTypeError``. (An untyped operand, a
    constant, joins any: JAX would type it replicated.)"""
    typed_ = [a for a in avals if a.sharding is not None]
    if not typed_:
        return outs
    spec, mesh = spec_of(typed_[0]), typed_[0].sharding.mesh
    if any(spec_of(a) != spec or a.sharding.mesh != mesh for a in typed_[1:]):
        shown = ", ".join(str(a.sharding) for a in typed_)
        raise ShardingTypeError(
            f"All operands should have the same sharding. Got shardings {shown}"
        )
    return [typed(outs[0], spec, mesh)]


def same_size_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """Reversing (and any op whose dimensions keep their sizes): a dimension keeps its
    operands' split where its size is unchanged (the first operand's, merged with the
    others')."""
    out = outs[0]
    same = [a for a in avals if a.ndim == out.ndim and a.sharding is not None]
    if not same:
        return outs
    spec = []
    for d in range(out.ndim):
        named = {spec_of(a)[d] for a in same if a.shape[d] == out.shape[d]} - {None}
        spec.append(named.pop() if len(named) == 1 else None)
    return [typed(out, spec, mesh_of(same))]


def dot_general_rule(
    avals: list[Aval], outs: list[Aval], *, dimension_numbers: Any, out_sharding: Any = None, **_
) -> list[Aval]:
    """``dot_general``: the batch dimensions' and both operands' free dimensions' splits
    (``out_sharding`` when the equation names one)."""
    if out_sharding is not None:
        return [outs[0].update(sharding=typed_sharding(out_sharding, outs[0].ndim))]
    x, y = avals
    if x.sharding is None and y.sharding is None:
        return outs
    sx, sy = spec_of(x), spec_of(y)
    (lc, rc), (lb, rb) = dimension_numbers
    batch = [sx[i] if sx[i] is not None else sy[j] for i, j in zip(lb, rb)]
    free_x = [sx[i] for i in range(x.ndim) if i not in lc and i not in lb]
    free_y = [sy[j] for j in range(y.ndim) if j not in rc and j not in rb]
    spec = [*batch, *free_x, *free_y]
    used = [e for e in spec if e is not None]
    if len(used) != len(set(used)):
        return outs
    return [typed(outs[0], spec, mesh_of(avals))]


def take_rule(avals: list[Aval], outs: list[Aval], *, axis: int, **_: Any) -> list[Aval]:
    """``gather`` along ``axis`` (a take): the operand's other dimensions keep their
    splits, the indices' dimensions take the indices' splits."""
    x, idx = avals
    if x.sharding is None and idx.sharding is None:
        return outs
    sx, si = spec_of(x), spec_of(idx)
    spec = [*sx[:axis], *si, *sx[axis + 1 :]]
    used = [e for e in spec if e is not None]
    if len(used) != len(set(used)):
        return outs
    return [typed(outs[0], spec, mesh_of(avals))]


def drop_axis_rule(avals: list[Aval], outs: list[Aval], *, axis: int, **_: Any) -> list[Aval]:
    """A reduction along one ``axis`` (``argmax``): that dimension's split dropped."""
    x = avals[0]
    if x.sharding is None:
        return outs
    spec = [e for i, e in enumerate(spec_of(x)) if i != axis]
    return [typed(outs[0], spec, x.sharding.mesh)]


def ambiguous_contraction(x: Aval, y: Aval, dimension_numbers: Any) -> tuple | None:
    """The contracting dimensions' specs of a dot both of whose operands split a
    contracting dimension over the same axis (JAX then needs ``out_sharding``), else
    ``None``."""
    if x.sharding is None or y.sharding is None:
        return None
    sx, sy = spec_of(x), spec_of(y)
    (lc, rc), _ = dimension_numbers
    if any(sx[i] is not None and sx[i] == sy[j] for i, j in zip(lc, rc)):
        return tuple(sx[i] for i in lc), tuple(sy[j] for j in rc)
    return None


def like_sharding(x: Any, shape: Any = None, weak_type: bool = False) -> Any:
    """The sharding JAX's ``*_like`` functions give their result when none is asked for:
    ``x``'s own, where ``x`` is a concrete array placed over a concrete mesh or devices
    (or a ``ShapeDtypeStruct`` holding such a sharding), committed, not weakly typed, and
    the result keeps its shape (or ``x`` is replicated); else ``None`` (the default
    placement). Traced values are placed by the program."""
    if isinstance(x, jax.core.Tracer) or weak_type:
        return None
    s = getattr(x, "sharding", None)
    if not isinstance(s, jax.sharding.Sharding) or not getattr(x, "_committed", True):
        return None
    if isinstance(s, NamedSharding) and not isinstance(s.mesh, jax.sharding.Mesh):
        # (over an abstract mesh: placed on the context's mesh of those axes, if any)
        mesh = jax.sharding.get_mesh()
        if mesh.empty or mesh.abstract_mesh != s.mesh:
            return None
        s = NamedSharding(mesh, s.spec)
    same = shape is None or tuple(shape) == tuple(x.shape)
    return s if same or s.is_fully_replicated else None


def varying_shape_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """An operation whose result may differ in size from its first operand along each
    dimension (a window reduction, a dynamic slice): the operand's splits, as JAX types it,
    where each changed dimension's size still divides over its axes (JAX refuses the rest:
    untyped, its lowering raises)."""
    x, out = avals[0], outs[0]
    if x.sharding is None or x.ndim != out.ndim:
        return outs
    mesh = x.sharding.mesh
    for e, n, m in zip(spec_of(x), out.shape, x.shape, strict=True):
        if e is not None and n != m and n % _axes_size(mesh, e) != 0:
            return outs
    return [typed(out, spec_of(x), mesh)]


def operand_rule(avals: list[Aval], outs: list[Aval], **params: Any) -> list[Aval]:
    """The first operand's type (``dynamic_update_slice``: JAX requires the update typed
    alike and refuses the rest in its lowering)."""
    return [outs[0].update(sharding=avals[0].sharding)]


def conv_rule(
    avals: list[Aval], outs: list[Aval], *, dimension_numbers: Any, **params: Any
) -> list[Aval]:
    """``conv_general_dilated``, as JAX types it: a given ``out_sharding`` is the result's
    type; otherwise, with the kernel unsplit and the input's feature dimension unsplit,
    the input's splits by position (:func:`varying_out_shape`), and anything else JAX's
    ``ShardingTypeError`` asking for ``out_sharding``."""
    placed = params.get("out_sharding")
    if placed is not None:
        parts = tuple(placed.spec.partitions)
        return [typed(outs[0], parts + (None,) * (outs[0].ndim - len(parts)), placed.mesh)]
    lhs, rhs = avals
    if lhs.sharding is None and rhs.sharding is None:
        return outs
    if rhs.sharding is not None or spec_of(lhs)[dimension_numbers[0][1]] is not None:
        raise ShardingTypeError(
            "Please specify the output sharding via `out_sharding` parameter of "
            "`conv_general_dilated`"
        )
    spec = varying_out_shape(lhs, outs[0].shape, "conv_general_dilated")
    return [typed(outs[0], spec, lhs.sharding.mesh)]


#: how a traced or concrete value is resharded to a ``NamedSharding`` (installed by
#: ``funcgrad.primitives.sharding``, above core: a ``reshard`` equation)
_RESHARD: list[Any] = [None]


#: the reshard primitive itself (for programs built equation by equation)
_RESHARD_PRIM: list[Any] = [None]


def set_reshard(fn: Any, prim: Any = None) -> None:
    """Install the reshard that :func:`cast_cotangents` uses (and its primitive)."""
    _RESHARD[0] = fn
    _RESHARD_PRIM[0] = prim


def reshard_eqn(atom: Any, sharding: Any, out: Any) -> Any:
    """An equation resharding ``atom`` to ``sharding`` into the variable ``out`` (a
    gradient's constant seed placed as the cotangent type it stands for)."""
    return Eqn(_RESHARD_PRIM[0], (atom,), (out,), {"sharding": sharding, "kind": "reshard"}, None)


def cast_input_cotangents(inputs: Sequence[Any], cts: Sequence[Any]) -> Sequence[Any]:
    """A differentiated program's input cotangents typed as its inputs (JAX's cotangent
    has its primal's type): :func:`cast_cotangents`, and an untyped input's cotangent
    that came split over the context mesh's explicit axes resharded unsplit (an input is
    untyped when nothing splits it: JAX types it replicated, as ``x + y`` of a replicated
    ``x`` and a split ``y`` gives ``x`` a replicated gradient)."""
    out = list(cast_cotangents(inputs, cts))
    mesh = jax.sharding.get_abstract_mesh()
    if not has_explicit_axes(mesh):
        return out
    for i, (v, ct) in enumerate(zip(inputs, out)):
        a = getattr(v, "aval", None)
        if a is None or a.sharding is not None or ct is None or is_zero(ct):
            continue
        ca = getattr(ct, "aval", None)
        if not isinstance(ca, Aval) or ca.sharding is None or ca.shape != a.shape:
            continue
        if ca.sharding.mesh != mesh or not any(e is not None for e in spec_of(ca)):
            continue
        out[i] = _RESHARD[0](ct, NamedSharding(mesh, PartitionSpec(*([None] * a.ndim))))
    return out


def cast_cotangents(inputs: Sequence[Any], cts: Sequence[Any]) -> Sequence[Any]:
    """An equation's input cotangents, each resharded to its primal's cotangent type (its
    unreduced and reduced axes swapped: :func:`cotangent_sharding`) where the primal
    is typed and the cotangent (of the same shape) is typed otherwise, as JAX's transposes
    give a cotangent its primal's sharding (a sum's transpose broadcasts into the operand's
    split). An untyped primal's cotangent stays as it comes: funcgrad's IR leaves
    implicit reshards of operands to the lowering, so its untyped operand may be one JAX
    types with its partner's split."""
    out = list(cts)
    for i, (v, ct) in enumerate(zip(inputs, cts)):
        a = getattr(v, "aval", None)
        if a is None or a.sharding is None or ct is None or is_zero(ct):
            continue
        ca = getattr(ct, "aval", None)
        if not isinstance(ca, Aval):
            if not isinstance(ct, jax.Array):
                continue
            ca = aval_of(ct)  # (a concrete cotangent: typed by its placement)
        # (only over the context's mesh, as a reshard must be: not across auto_axes)
        want = cotangent_sharding(a.sharding)
        if ca.shape != a.shape or ca.sharding == want:
            continue
        if a.sharding.mesh != jax.sharding.get_abstract_mesh():
            continue
        out[i] = _RESHARD[0](ct, want)
    return out
