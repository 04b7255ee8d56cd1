"""``fg.shard_map``: write per-device code over a device mesh, with collectives.

The user's function is traced once on one device's blocks, with the mesh's axis names
bound (:mod:`funcgrad.primitives.collectives`), into the body of one ``shard_map``
equation (:mod:`funcgrad.primitives.shard_map`), whose rules differentiate and batch it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax import tree_util
from jax.sharding import AbstractMesh, Mesh, PartitionSpec

from funcgrad.api._tracing import broadcast_prefix, check_callable
from funcgrad.core import compile_cache, sharding_types
from funcgrad.core.errors import DerivedSource, user_frame, where
from funcgrad.core.interp import Tracer, is_tracing, new_builder, to_aval
from funcgrad.core.ir import SHARDING_TYPES, Aval, Program, Var
from funcgrad.primitives import collectives as col
from funcgrad.primitives import shard_map as smp
from funcgrad.primitives.shard_map import Spec
from funcgrad.tree_util import tree_flatten, tree_unflatten


def _normalize(spec: Any, aval: Aval, mesh: Mesh, what: str, fn: str) -> Spec:
    """A ``PartitionSpec`` (or ``None``: replicated) as one tuple of mesh axis names per
    dimension of ``aval``."""
    if spec is None:
        spec = PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what} must be PartitionSpec instances (or None), got {spec!r}")
    if getattr(spec, "unreduced", None) or getattr(spec, "reduced", None):
        raise NotImplementedError(
            f"shard_map {what} {spec}: unreduced/reduced mesh axes (JAX's partial sums held "
            "across devices) are not supported by funcgrad"
        )
    if len(spec) > aval.ndim:
        kind = what.split("[", 1)[0]
        hint = (
            f" For scalar values (rank 0), consider using an {kind} entry of `P()`."
            if aval.ndim == 0
            else ""
        )
        raise ValueError(
            f"shard_map applied to the function '{fn}' was given a spec longer than its "
            f"value: {what} is {spec}, which has length {len(spec)}, but the value has "
            f"shape {aval.shape}, which has rank {aval.ndim} (and {aval.ndim} < "
            f"{len(spec)}).{hint}"
        )
    out: list[tuple] = []
    seen: set = set()
    for entry in spec:
        names = () if entry is None else tuple(entry) if isinstance(entry, tuple) else (entry,)
        for n in names:
            if n not in mesh.shape:
                raise ValueError(
                    f"shard_map {what} {spec} names the axis {n!r}, which the mesh with axes "
                    f"{tuple(mesh.axis_names)} does not have"
                )
            if n in seen:
                raise ValueError(f"shard_map {what} {spec} uses the mesh axis {n!r} twice")
            seen.add(n)
        out.append(names)
    return tuple(out) + ((),) * (aval.ndim - len(out))


def _specs(prefix: Any, tree: Any, what: str) -> list:
    try:
        return broadcast_prefix(prefix, tree, "shard_map", what)
    except ValueError as e:
        at = _mismatch(prefix, tree, "")
        if at is None:
            raise
        raise ValueError(f"shard_map {what}{at} does not fit its value's structure: {e}") from None


def _mismatch(prefix: Any, tree: Any, path: str) -> str | None:
    """The key path (``[0]['a']``) of the first container of ``prefix`` whose structure
    differs from ``tree``'s there, or ``None``."""
    if not isinstance(prefix, (list, tuple, dict)) or isinstance(prefix, PartitionSpec):
        return None
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            return path
        pairs = [(f"[{k!r}]", prefix[k], tree[k]) for k in prefix]
    else:
        if type(tree) is not type(prefix) or len(tree) != len(prefix):
            return path
        pairs = [(f"[{k}]", p, t) for k, (p, t) in enumerate(zip(prefix, tree))]
    for key, p, t in pairs:
        found = _mismatch(p, t, path + key)
        if found is not None:
            return found
    return None


class _Infer:
    """``in_specs``'s default: each argument's split read off its type (JAX's ``Infer``)."""

    def __repr__(self) -> str:
        return "Infer"


_INFER = _Infer()


def shard_map(
    f: Callable | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = _INFER,
    mesh: Mesh | None = None,
    axis_names: Any = frozenset(),
    check_vma: bool = True,
) -> Any:
    """Map ``f`` over the blocks of its arguments on a device mesh (``jax.shard_map``).

    Args:
        f: the per-device function: it sees each argument's block on one device and may
            use the collectives of :mod:`funcgrad.lax` over the mesh's axis names.
        out_specs: a ``PartitionSpec`` per output (a pytree prefix of the outputs): how
            the per-device outputs assemble into global arrays; a mesh axis it leaves out
            means the output is the same on every device along it.
        in_specs: a ``PartitionSpec`` per argument (a pytree prefix of the tuple of
            positional arguments: one ``PartitionSpec`` applies to all): how each
            argument is cut; a ``None`` entry passes its arguments to ``f`` as they are
            (static: any Python object), ``in_specs=None`` all of them; by default each
            argument's split over the mesh's explicit axes (its type).
        mesh: the ``jax.sharding.Mesh`` of devices; by default the mesh of
            ``set_mesh`` when the function is called.
        axis_names: the mesh axes ``f`` is manual over; only all of them (the default).
        check_vma: check that every output declared replicated over a mesh axis does not
            vary along it. funcgrad differentiates collectives as JAX does with
            ``check_vma=False``; with ``True``, reverse mode through ``psum`` inside ``f``
            (where JAX's rules differ) is an error (docs/design.md).

    Returns:
        The mapped function on global arrays; usable under ``jit``, ``grad`` and ``vmap``.

    Raises:
        TypeError: ``mesh`` is not a ``Mesh`` or ``in_specs`` is missing.
        ValueError: a spec names an unknown axis, does not fit its value, splits a
            dimension unevenly, or claims replication that the body does not ensure.

    Example:
        >>> import numpy as np, jax, funcgrad as fg
        >>> from jax.sharding import AbstractMesh, Mesh, PartitionSpec as P
        >>> mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
        >>> f = fg.shard_map(lambda x: fg.lax.psum(x, "i"), mesh=mesh, in_specs=P("i"),
        ...                  out_specs=P())
        >>> f(np.arange(3.0))
        Array([0., 1., 2.], dtype=float32)
    """
    if f is None:
        return functools.partial(
            shard_map,
            out_specs=out_specs,
            in_specs=in_specs,
            mesh=mesh,
            axis_names=axis_names,
            check_vma=check_vma,
        )
    check_callable(f)
    if mesh is not None:
        _check_mesh(mesh, axis_names)
    name = getattr(f, "__name__", "fun")
    given_mesh, given_specs = mesh, in_specs

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        mesh = given_mesh
        if mesh is None:  # the mesh of set_mesh, as JAX's (its abstract mesh inside jit)
            try:
                mesh = jax.sharding.get_mesh()
            except ValueError:
                mesh = jax.sharding.get_abstract_mesh()
            if mesh.empty:
                raise ValueError(
                    "shard_map requires a non-empty mesh: none was given as mesh= and none "
                    "is set by set_mesh. The context mesh cannot be empty"
                )
            _check_mesh(mesh, axis_names)
        elif mesh.empty:
            raise ValueError(f"shard_map requires a non-empty mesh. Got {mesh}")
        all_leaves, in_tree = tree_flatten(args)
        in_specs = given_specs
        if in_specs is _INFER:
            in_specs = _typed_specs(args, mesh)
        flat_specs = _specs(in_specs, args, "in_specs")
        # a None spec: the leaf is static, passed to f as it is
        dyn = [k for k, s in enumerate(flat_specs) if s is not None]
        leaves = [all_leaves[k] for k in dyn]
        avals = [to_aval(all_leaves[k]) for k in dyn]
        specs_in = [
            _normalize(flat_specs[k], a, mesh, f"in_specs{_path(args, k)}", name)
            for k, a in zip(dyn, avals)
        ]
        local = [
            smp.local_aval(a, s, mesh, f"argument {_path(args, k)}", name)
            for k, a, s in zip(dyn, avals, specs_in)
        ]
        holder: list = []

        def per_device(toks: list, *xs: Any) -> list:
            full = list(all_leaves)
            for k, x in zip(dyn, xs):
                full[k] = x
            with col.bind_axes(smp.frames(mesh, toks, check_vma)):
                out = f(*tree_unflatten(in_tree, full))
            out_leaves, out_tree = tree_flatten(out)
            holder.extend([out, out_tree])
            return out_leaves

        body = smp.trace_body(mesh, per_device, local)
        out, out_tree = holder
        specs_out = [
            _normalize(s, a, mesh, f"out_specs{_path(out, k)}", name)
            for k, (s, a) in enumerate(zip(_specs(out_specs, out, "out_specs"), body.out_avals))
        ]
        ntok = len(mesh.axis_names)
        body, consts = smp.close_body(body, ntok)
        specs_in = [*[((),) * to_aval(c).ndim for c in consts], *specs_in]
        if check_vma:
            _refuse_reverse_mode_of_replicated(body, mesh, specs_in, name)
            _check_replication(body, ntok, mesh, specs_in, specs_out, out, name)
        operands = [*consts, *leaves]
        outs = _run(operands, body, mesh, specs_in, specs_out, check_vma)
        return tree_unflatten(out_tree, outs)

    return mapped


def _check_mesh(mesh: Any, axis_names: Any) -> None:
    if not isinstance(mesh, (Mesh, AbstractMesh)):
        raise TypeError(
            f"shard_map requires a jax.sharding.Mesh as mesh= (or one set by set_mesh), got "
            f"{mesh!r}"
        )
    if axis_names and set(axis_names) != set(mesh.axis_names):
        raise NotImplementedError(
            f"shard_map axis_names={set(axis_names)}: funcgrad maps over every mesh axis "
            f"({tuple(mesh.axis_names)})"
        )


def _typed_specs(args: tuple, mesh: Mesh) -> tuple:
    """``in_specs`` from the arguments' types: each one's split over the mesh's explicit
    axes (JAX's default); without explicit axes there is nothing to read them from."""
    if not sharding_types.has_explicit_axes(mesh):
        raise TypeError(
            "shard_map: in_specs is required when the mesh has no explicit axes (the "
            "arguments' types then say nothing of how they are split)"
        )
    if not SHARDING_TYPES[0] and any(isinstance(x, Tracer) for x in tree_util.tree_leaves(args)):
        # traced values carry their splits only once funcgrad types them (fg.set_mesh,
        # fg.make_mesh...); read as unsplit, they would be taken as replicated
        raise ValueError(
            "shard_map: in_specs can only be inferred from the arguments' types once "
            "funcgrad types values with their shardings; the mesh with explicit axes was "
            "not set through funcgrad (use fg.set_mesh, or pass in_specs)"
        )
    return tuple(
        tree_util.tree_map(
            lambda x: PartitionSpec(*sharding_types.spec_of(sharding_types.typeof(x, to_aval(x)))),
            a,
        )
        for a in args
    )


def _path(tree: Any, k: int) -> str:
    return tree_util.keystr(tree_util.tree_flatten_with_path(tree)[0][k][0])


def _run(operands: list, body: Program, mesh: Mesh, specs_in, specs_out, check_vma) -> list:
    params = {
        "body": body,
        "mesh": mesh,
        "in_specs": tuple(specs_in),
        "out_specs": tuple(specs_out),
        "check_vma": check_vma,
    }
    if is_tracing() or any(isinstance(x, Tracer) for x in operands):
        return smp.shard_map_p.bind(*operands, **params)
    if isinstance(mesh, AbstractMesh):
        params["mesh"] = _mesh_of_operands(operands, mesh)
    # eagerly: the one-equation program, compiled (cached by its structure), so that it
    # runs on arrays spread over several processes too
    with new_builder("shard_map") as b:
        ins = [b.new_arg(to_aval(x)) for x in operands]
        prog = b.build(smp.shard_map_p.bind(*ins, **params))
    return compile_cache.compiled(prog, name="shard_map")(*operands)


def _mesh_of_operands(operands: list, mesh: AbstractMesh) -> Mesh:
    """The devices of an eager ``shard_map`` given an abstract mesh: those of its operands'
    ``NamedSharding``s, which must have the mesh's shape (JAX's eager rule and errors)."""
    found: Any = mesh
    for x in operands:
        s = getattr(x, "sharding", None)
        if isinstance(s, jax.sharding.NamedSharding) and not s.mesh.is_scalar:
            if s.mesh.shape_tuple != mesh.shape_tuple:
                raise ValueError(
                    f"Mesh shape of the input {s.mesh.shape_tuple} does not match the mesh "
                    f"shape passed to shard_map  {mesh.shape_tuple} for shape "
                    f"{to_aval(x).str_short()}"
                )
            found = s.mesh
    if isinstance(found, AbstractMesh):
        raise ValueError(
            "Please pass `jax.Array`s with a `NamedSharding` as input to `shard_map` when "
            "passing `AbstractMesh` to the mesh argument."
        )
    return found


# --------------------------------------------------------------------------- check_vma


def varying_axes(prog: Program, vary: Sequence[frozenset]) -> list[frozenset]:
    """For each output of ``prog``, the mesh axes along which it may differ between
    devices, given those of its inputs (``vary``): values computed from varying ones
    vary; ``psum``/``pmax``/``pmin``/``all_gather`` make their axes invariant. Calls,
    ``cond`` branches and loop bodies are followed (a loop's carries to a fixed point);
    other sub-programs are taken conservatively (every output varies as all inputs)."""
    env: dict[Var, frozenset] = dict(zip(prog.invars, vary))
    invariant = (col.psum_p, col.pmax_p, col.pmin_p, col.all_gather_p)
    for e in prog.eqns:
        ins = [env.get(a, frozenset()) if type(a) is Var else frozenset() for a in e.inputs]
        if e.prim in invariant:
            outs = [frozenset().union(*ins) - frozenset(e.params["axes"])]
        else:
            outs = _through_subprograms(e, ins)
        env.update(zip(e.outvars, outs))
    return [env.get(a, frozenset()) if type(a) is Var else frozenset() for a in prog.outvars]


def _through_subprograms(e: Any, ins: list[frozenset]) -> list[frozenset]:
    p = e.params
    union = frozenset().union(*ins)
    sub = p.get("program")
    if e.prim.name == "scan":  # consts, carries, xs -> carries, ys
        nc, nk = p["num_consts"], p["num_carry"]
        carry = ins[nc : nc + nk]
        while True:
            outs = varying_axes(sub, [*ins[:nc], *carry, *ins[nc + nk :]])
            grown = [a | b for a, b in zip(carry, outs[:nk])]
            if grown == carry:
                return outs
            carry = grown
    if e.prim.name == "while":  # cond consts, body consts, carries -> carries
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        carry = ins[cn + bn :]
        while True:
            pred = varying_axes(p["cond_program"], [*ins[:cn], *carry])[0]
            outs = varying_axes(p["body_program"], [*ins[cn : cn + bn], *carry])
            grown = [a | b | pred for a, b in zip(carry, outs)]
            if grown == carry:
                return carry
            carry = grown
    if e.prim.name == "cond":  # index, operands -> the union over the branches
        outs = [varying_axes(b, ins[1:]) for b in p["branches"]]
        return [frozenset(ins[0]).union(*o) for o in zip(*outs)]
    if isinstance(sub, Program) and len(sub.invars) == len(e.inputs):
        return varying_axes(sub, ins)
    return [union] * len(e.outvars)


def _reverse_mode_inside(prog: Program) -> bool:
    """Whether ``prog`` (or a sub-program) holds equations of a reverse-mode pass (their
    source is the forward equation's, :class:`DerivedSource`)."""
    for e in prog.eqns:
        if isinstance(e.source, DerivedSource):
            return True
        for v in e.params.values():
            subs = v if isinstance(v, tuple) else (v,)
            if any(isinstance(q, Program) and _reverse_mode_inside(q) for q in subs):
                return True
    return False


def _refuse_reverse_mode_of_replicated(
    body: Program, mesh: Mesh, specs_in: list, name: str
) -> None:
    """With ``check_vma=True`` JAX sums the gradient of a replicated value taken inside the
    body over the devices (its varying-axes types make the value's use by per-device
    data a ``pvary``, whose transpose is a ``psum``); funcgrad has no such types and
    would return each device's own gradient, so the combination is an error."""
    big = {n for n in mesh.axis_names if mesh.shape[n] > 1}
    replicated = any(big & set(smp.unmentioned(mesh, s)) for s in specs_in)
    if replicated and _reverse_mode_inside(body):
        raise NotImplementedError(
            f"shard_map applied to the function '{name}' with check_vma=True differentiates "
            "in reverse mode inside its body while some operand is replicated over a mesh "
            "axis: JAX's result there (the gradient of a replicated value summed over the "
            "devices) comes from varying-axes types, which funcgrad does not implement. Pass "
            "check_vma=False (JAX's rules without them: each device gets its own gradient, "
            "e.g. averaged with pmean), or differentiate the shard_map from outside"
            f"{where(user_frame())}"
        )


def _check_replication(
    body: Program, ntok: int, mesh: Mesh, specs_in: list, specs_out: list, out: Any, name: str
) -> None:
    tokens = [frozenset([n]) for n in mesh.axis_names]
    vary = [frozenset(n for names in s for n in names) for s in specs_in]
    for k, (v, s) in enumerate(zip(varying_axes(body, tokens + vary), specs_out)):
        missing = [n for n in smp.unmentioned(mesh, s) if n in v]
        if missing:
            # the axis sets as JAX's message spells them: {x,y}, in the mesh's order
            split = {n for names in s for n in names}
            need, got = _axis_set(mesh, split), _axis_set(mesh, v)
            raise ValueError(
                f"shard_map applied to the function '{name}' was given out_specs which require "
                f"replication which can't be statically inferred given the mesh: "
                f"out_specs{_path(out, k)} is {smp.partition_spec(s)} which implies that the "
                f"corresponding output value is only varying across mesh axes {need} and not "
                f"{_axis_set(mesh, missing)}, but it was inferred to be possibly varying over "
                f"{got}. Mention the axes in out_specs, reduce over them (psum, pmean, "
                "all_gather), or pass check_vma=False to skip this check"
                f"{where(user_frame())}"
            )


def _axis_set(mesh: Mesh, names: Any) -> str:
    return "{" + ",".join(str(n) for n in mesh.axis_names if n in set(names)) + "}"
