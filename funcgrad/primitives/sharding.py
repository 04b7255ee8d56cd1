"""``sharding_constraint``: a value's sharding over a device mesh, inside a program.

funcgrad's IR carries shapes and dtypes, not shardings: where a program pins a value's
sharding (``lax.with_sharding_constraint``, ``sharding.reshard``) the equation holds
the sharding as a parameter and its lowering hands it to JAX (``with_sharding_constraint``
for XLA's propagation, ``reshard`` for JAX's explicit mesh axes), which XLA's SPMD
partitioner then honours. The value is unchanged, so every rule is the identity's:

* abstract eval and the host tier: the operand (one device: nothing to place);
* JVP: the tangent constrained the same way; VJP: a constraint's cotangent constrained
  the same way (as JAX's); a reshard's cotangent passes as it comes, since the operand's
  own sharding, which JAX's transpose reshards it back to, is not in funcgrad's IR;
* batching: the batch axis inserted into a ``NamedSharding``'s spec, unsplit, or split
  over the mesh axes a ``vmap``'s ``spmd_axis_name`` names (JAX's).

``device_put`` is ``jax.device_put`` inside a program (``fg.device_put`` of a traced
value): its lowering is JAX's own (a copy to the device or sharding; under ``jit`` on
CPU, JAX's lowering keeps the value where the program's partitioning puts it), the
result typed with a ``NamedSharding``'s explicit axes; it is linear, and its cotangent
is put back on ``src`` (from ``device``), as JAX's transpose does, so a gradient returns
to where its input was placed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jax
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

from funcgrad.core import partial_sums, sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval, typed_sharding
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand

FAMILY = "sharding"

#: the two kinds of equation: XLA's propagation constraint, or JAX's explicit reshard
KINDS = ("constraint", "reshard")

sharding_constraint_p = Primitive("sharding_constraint", family=FAMILY)


@sharding_constraint_p.def_abstract_eval
def _abstract_eval(x: Aval, *, sharding: Any, kind: str) -> Aval:
    return x


def _lower(x: Any, *, sharding: Any, kind: str) -> Any:
    if kind == "reshard":
        return jax.sharding.reshard(x, sharding)
    return lax.with_sharding_constraint(x, sharding)


def _sharding_rule(avals: list, outs: list, *, sharding: Any, kind: str) -> list:
    """A reshard types its result with its sharding (a spec over the current mesh); a
    constraint (automatic axes) keeps its operand's type."""
    if kind != "reshard":
        return [outs[0].update(sharding=avals[0].sharding)]
    if isinstance(sharding, PartitionSpec):
        sharding = NamedSharding(jax.sharding.get_abstract_mesh(), sharding)
    partial_sums.check_reshard(avals[0].sharding, sharding)
    return [outs[0].update(sharding=typed_sharding(sharding, outs[0].ndim))]


sharding_constraint_p.lower = _lower
sharding_constraint_p.sharding_rule = _sharding_rule
sharding_constraint_p.host = lambda x, **params: x  # (the host tier: one device)
rules.def_linear(sharding_constraint_p)


@sharding_constraint_p.def_vjp
def _vjp(ct: Any, x: Any, *, out: Any, sharding: Any, kind: str) -> tuple:
    if kind == "reshard":
        # resharded back to the operand's type, as JAX's transpose (untyped: as it comes),
        # its unreduced and reduced axes swapped (a partial sum's cotangent is replicated)
        back = sharding_types.cotangent_sharding(to_aval(x).sharding)
        if back is None or isinstance(ct, Zero):
            return (ct,)
        return (bind(sharding_constraint_p, ct, sharding=back, kind=kind),)
    return (bind(sharding_constraint_p, ct, sharding=sharding, kind=kind),)


class _Spmd(threading.local):
    def __init__(self) -> None:
        #: the ``spmd_axis_name`` of each ``vmap`` whose batching rewrite is running,
        #: innermost last (``None`` for a ``vmap`` without one)
        self.names: list[Any] = []


_SPMD = _Spmd()


@contextmanager
def spmd_axis(name: Any) -> Iterator[None]:
    """Within the block a ``vmap`` rewrite batches with ``spmd_axis_name=name``: the
    sharding constraints it batches (``with_sharding_constraint``; not a reshard) split
    the batch axis over those mesh axes, as JAX's (``None``: the batch axis unsplit)."""
    _SPMD.names.append(name)
    try:
        yield
    finally:
        _SPMD.names.pop()


def current_spmd_axis() -> Any:
    """The ``spmd_axis_name`` of the innermost ``vmap`` rewrite running (``None``: none,
    or one without it)."""
    return _SPMD.names[-1] if _SPMD.names else None


def _batched_spec(spec: PartitionSpec, ndim: int, dim: int, spmd: Any) -> PartitionSpec:
    """``spec`` with an entry ``spmd`` inserted at ``dim`` (its unreduced and reduced
    axes kept)."""
    parts = list(spec.partitions) + [None] * (ndim - len(spec.partitions))
    parts.insert(dim, spmd)
    return spec.update(partitions=tuple(parts))


def batched_sharding(sharding: Any, ndim: int, dim: int, spmd: Any = None) -> Any:
    """``sharding`` of an ``ndim``-dimensional value with a batch axis inserted at
    ``dim``, split over the mesh axes ``spmd`` (a ``vmap``'s ``spmd_axis_name``) or not
    split (a ``NamedSharding``'s spec, or a bare ``PartitionSpec``, gains ``spmd`` there;
    a single device's sharding is the same)."""
    if isinstance(sharding, NamedSharding):
        return NamedSharding(
            sharding.mesh,
            _batched_spec(sharding.spec, ndim, dim, spmd),
            memory_kind=sharding.memory_kind,
        )
    if isinstance(sharding, PartitionSpec):  # (over the context's mesh)
        return _batched_spec(sharding, ndim, dim, spmd)
    if isinstance(sharding, SingleDeviceSharding):
        return sharding
    raise NotImplementedError(
        f"vmap of a sharding constraint: only NamedSharding and SingleDeviceSharding can "
        f"take a batch axis, got {type(sharding).__name__}"
    )


@sharding_constraint_p.def_batch
def _batch(args: list, dims: list, *, sharding: Any, kind: str) -> tuple:
    (x,), (d,) = args, dims
    # (a reshard's batch axis is split as the vmap's mapped dimensions are, as JAX's
    # batching of ``reshard``; a constraint's is split over the ``vmap``'s spmd axes)
    if kind == "constraint":
        spmd = _SPMD.names[-1] if _SPMD.names else None
    else:
        mesh = getattr(sharding, "mesh", jax.sharding.get_abstract_mesh())
        spmd = sharding_types.vmap_entry(mesh)
    s = batched_sharding(sharding, x.ndim - 1, d, spmd)
    return bind(sharding_constraint_p, x, sharding=s, kind=kind), d


@sharding_constraint_p.def_examples
def _examples(rng: Any) -> list[Example]:
    one = SingleDeviceSharding(jax.devices()[0])
    mesh = jax.sharding.Mesh(jax.devices()[:1], ("i",))
    named = NamedSharding(mesh, PartitionSpec("i"))
    return [
        Example([rand(rng, (3,))], {"sharding": one, "kind": "constraint"}),
        Example([rand(rng, (2, 3))], {"sharding": named, "kind": "constraint"}),
    ]


device_put_p = Primitive("device_put", family=FAMILY)


@device_put_p.def_abstract_eval
def _device_put_abstract_eval(x: Aval, *, device: Any, src: Any) -> Aval:
    return x


def _device_put_lower(x: Any, *, device: Any, src: Any) -> Any:
    return jax.device_put(x, device, src=src)


def _device_put_sharding_rule(avals: list, outs: list, *, device: Any, src: Any) -> list:
    """A value put on a ``NamedSharding`` (or a spec over the current mesh) is typed with
    its explicit axes; on a device or another sharding, untyped; with no device, as it
    was."""
    if device is None:
        return [outs[0].update(sharding=avals[0].sharding)]
    if isinstance(device, PartitionSpec):
        device = NamedSharding(jax.sharding.get_abstract_mesh(), device)
    return [outs[0].update(sharding=typed_sharding(device, outs[0].ndim))]


device_put_p.lower = _device_put_lower
device_put_p.sharding_rule = _device_put_sharding_rule
rules.def_linear(device_put_p)


@device_put_p.def_vjp
def _device_put_vjp(ct: Any, x: Any, *, out: Any, device: Any, src: Any) -> tuple:
    # put back where it came from (JAX's transpose swaps ``device`` and ``src``)
    if isinstance(ct, Zero):
        return (ct,)
    return (bind(device_put_p, ct, device=src, src=device),)


def _batched_target(target: Any, ndim: int, dim: int) -> Any:
    if isinstance(target, PartitionSpec):
        return _batched_spec(target, ndim, dim, None)
    if isinstance(target, NamedSharding):
        return batched_sharding(target, ndim, dim)
    return target  # (a device, a single device's sharding, None: the same)


@device_put_p.def_batch
def _device_put_batch(args: list, dims: list, *, device: Any, src: Any) -> tuple:
    (x,), (d,) = args, dims
    n = x.ndim - 1
    return bind(
        device_put_p, x, device=_batched_target(device, n, d), src=_batched_target(src, n, d)
    ), d


@device_put_p.def_examples
def _device_put_examples(rng: Any) -> list[Example]:
    dev = jax.devices()[0]
    mesh = jax.sharding.Mesh(jax.devices()[:1], ("i",))
    named = NamedSharding(mesh, PartitionSpec("i"))
    return [
        Example([rand(rng, (3,))], {"device": dev, "src": None}),
        Example([rand(rng, (2, 3))], {"device": named, "src": SingleDeviceSharding(dev)}),
    ]


sharding_types.set_reshard(
    lambda x, s: bind(sharding_constraint_p, x, sharding=s, kind="reshard"), sharding_constraint_p
)


def typed_as(x: Any, sharding: Any) -> Any:
    """``x`` resharded to the explicit-axes ``sharding`` (a spec for any shape) unless it is
    typed so already, or ``sharding`` is untyped: JAX's transposes and scatters type the
    zeros they build as the value they stand beside (a cotangent as its primal), which
    funcgrad's constants, untyped, need a reshard for."""
    if sharding is None or to_aval(x).sharding == sharding:
        return x
    return bind(sharding_constraint_p, x, sharding=sharding, kind="reshard")


def device_put(x: Any, device: Any, src: Any = None) -> Any:
    """``x`` (one traced array) put on ``device`` (see the module docstring)."""
    return bind(device_put_p, x, device=device, src=src)


def sharding_constraint(x: Any, sharding: Any, kind: str = "constraint") -> Any:
    """``x`` with its sharding pinned to ``sharding`` (see the module docstring)."""
    if kind not in KINDS:
        raise ValueError(f"sharding_constraint: kind must be one of {KINDS}, got {kind!r}")
    return bind(sharding_constraint_p, x, sharding=sharding, kind=kind)


def split_dim_as(x: Any, dim: int, like: NamedSharding) -> Any:
    """``x`` resharded with its dimension ``dim`` split as ``like``'s is (a batch axis an
    unbatched operand gains beside batched ones, as JAX types it); ``x`` itself where
    ``like`` leaves that dimension unsplit or ``x`` uses those axes elsewhere."""
    entry = like.spec.partitions[dim] if dim < len(like.spec.partitions) else None
    if entry is None:
        return x
    spec = list(sharding_types.spec_of(to_aval(x)))
    names = set(entry if isinstance(entry, tuple) else (entry,))
    if any(e is not None and names & set(e if isinstance(e, tuple) else (e,)) for e in spec):
        return x
    spec[dim] = entry
    return bind(
        sharding_constraint_p,
        x,
        sharding=NamedSharding(like.mesh, PartitionSpec(*spec)),
        kind="reshard",
    )


def placed(x: Any, device: Any) -> Any:
    """Traced ``x`` converted onto ``device`` (a device or sharding), as ``jnp.array``/
    ``jnp.asarray`` with ``device=`` inside a program (JAX's conversion with a sharding):
    a ``reshard`` onto a ``NamedSharding`` naming explicit axes, else a constraint."""
    if isinstance(device, jax.Device):
        device = SingleDeviceSharding(device)
    kind = "reshard" if typed_sharding(device, to_aval(x).ndim) is not None else "constraint"
    return bind(sharding_constraint_p, x, sharding=device, kind=kind)
