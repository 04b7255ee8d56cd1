"""``vmap``: trace once, rewrite with :mod:`funcgrad.batching`, evaluate."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import tree_util

from funcgrad import batching
from funcgrad.api import _levels
from funcgrad.api._tracing import _check_leaf, broadcast_prefix, check_callable
from funcgrad.api._vmap_errors import check_mapped_splits, inconsistent_sizes
from funcgrad.control_flow import scan
from funcgrad.core import sharding_types, tiers
from funcgrad.core.errors import user_frame, where
from funcgrad.core.interp import UNKNOWN, Tracer, bind, is_tracing, new_builder, to_aval
from funcgrad.core.ir import SHARDING_TYPES, Program
from funcgrad.primitives import collectives as col
from funcgrad.primitives import shape as sh
from funcgrad.primitives.sharding import sharding_constraint_p, spmd_axis
from funcgrad.tree_util import tree_flatten, tree_leaves, tree_unflatten

_PY_SCALARS = (bool, int, float, complex)


def _axis_spec_ok(spec: Any) -> bool:
    return all(type(x) is int for x in tree_leaves(spec))


def _leaf_path(tree: Any, k: int) -> str:
    """``keystr`` of the ``k``-th leaf of ``tree`` (for error messages)."""
    return tree_util.keystr(tree_util.tree_flatten_with_path(tree)[0][k][0])


def check_chunk_size(chunk_size: Any, who: str) -> None:
    """``chunk_size`` must be ``None`` or a positive ``int``."""
    if chunk_size is None:
        return
    if type(chunk_size) is not int and not isinstance(chunk_size, np.integer):
        raise TypeError(
            f"{who}: chunk_size must be None or a positive int, got "
            f"{type(chunk_size).__name__} {chunk_size!r}"
        )
    if chunk_size < 1:
        raise ValueError(f"{who}: chunk_size must be None or a positive int, got {chunk_size}")


def _chunked(
    prog: Program, args: list, dims: list[int | None], size: int, k: int
) -> tuple[list[Any], list[int | None]]:
    """``prog`` batched over ``args`` (batch axes ``dims``) ``k`` examples at a time:
    a ``scan`` over the full chunks, one batched call on the remainder; outputs come
    back batched at axis 0 (or unbatched: ``None``)."""
    if not is_tracing():  # one program, so that the loop is compiled as a whole
        with new_builder("vmap") as b:
            avals = [to_aval(x) for x in args]
            outs, ods = _chunked(prog, [b.new_arg(a) for a in avals], dims, size, k)
            cprog = b.build(outs)
        return tiers.run(cprog, *args), ods
    n, rest = divmod(size, k)
    mapped = [i for i, d in enumerate(dims) if d is not None]
    front = [batching.move_dim(args[i], dims[i], 0, size) for i in mapped]
    cdims = [None if d is None else 0 for d in dims]
    ods: list[int | None] = []

    def run(parts: list) -> list:
        full = list(args)
        for i, x in zip(mapped, parts):
            full[i] = x
        outs, od = batching.batch_eval(prog, full, cdims)
        ods[:] = od
        return [o if d is None else batching.move_dim(o, d, 0, k) for o, d in zip(outs, od)]

    xs = [_reshape_lead(_slice_lead(x, 0, n * k), (n, k)) for x in front]
    ys = scan(lambda c, x: (c, run(x)), (), xs, length=n)[1]
    outs = [_reshape_lead(y, (n * k,)) if d is not None else _first(y) for y, d in zip(ys, ods)]
    if rest:  # batchedness depends only on the input dims: the same as in the scan
        tail = run([_slice_lead(x, n * k, size) for x in front])
        outs = [
            o if d is None else sh.concatenate(o, t, dimension=0)
            for o, t, d in zip(outs, tail, ods)
        ]
    return outs, [None if d is None else 0 for d in ods]


def _slice_lead(x: Any, lo: int, hi: int) -> Any:
    shape = to_aval(x).shape
    return sh.slice(x, (lo,) + (0,) * (len(shape) - 1), (hi, *shape[1:]))


def _reshape_lead(x: Any, lead: tuple[int, ...]) -> Any:
    """``x`` with its first one or two axes reshaped to ``lead``."""
    shape = to_aval(x).shape
    drop = 2 if len(lead) == 1 else 1
    return sh.reshape(x, (*lead, *shape[drop:]))


def _first(x: Any) -> Any:
    return sh.reshape(_slice_lead(x, 0, 1), to_aval(x).shape[1:])


def _with_token(prog: Program, args: list, dims: list, size: int) -> tuple[Program, list, list]:
    """``prog`` (whose last input is the axis token) with its arguments: the token's value
    is the example index, an ``iota`` batched at axis 0; an unused token is dropped."""
    token = prog.invars[-1]
    atoms = [*prog.outvars, *(a for e in prog.eqns for a in e.inputs)]
    used = any(a is token for a in atoms)
    if not used:
        return prog.replace(invars=prog.invars[:-1]), args, dims
    return prog, [*args, sh.iota(np.int32, size)], [*dims, 0]


def _prefix_axes(spec: Any, tree: Any, what: str) -> list:
    try:
        return broadcast_prefix(spec, tree, "vmap", what)
    except ValueError as e:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value; "
            f"Mismatch details:\n  {e}"
        ) from None


def _check_explicit_axis(axes: Any, spmd_axis_name: Any) -> None:
    """JAX's refusal of a ``spmd_axis_name`` beside mapped dimensions split over other
    explicit mesh axes (``axes``, from :func:`check_mapped_splits`)."""
    if axes is None or spmd_axis_name is None:
        return
    spmd = spmd_axis_name if isinstance(spmd_axis_name, tuple) else (spmd_axis_name,)
    if jax.config.jax_remove_size_one_mesh_axis_from_type:  # (types drop size-1 axes)
        shape = jax.sharding.get_abstract_mesh().shape
        spmd = tuple(a for a in spmd if shape.get(a) != 1)
    if spmd != axes:
        raise ValueError(
            "Only one of spmd_axis_name or arrays sharded on `Explicit` mesh axis type is "
            f"allowed. Got spmd_axis_name={spmd!r} and arrays sharded on "
            f"explicit_mesh_axis={axes!r}"
        )


def _split_batch(x: Any, dim: int, axes: tuple) -> Any:
    """An output broadcast along its batch dimension ``dim`` (it did not depend on the
    mapped values) split there over the explicit mesh ``axes`` the mapped dimensions
    were split over, as JAX types it."""
    s = to_aval(x).sharding
    parts = list(s.spec.partitions) if s is not None else [None] * to_aval(x).ndim
    parts[dim] = axes[0] if len(axes) == 1 else axes
    if s is None:
        target = jax.sharding.NamedSharding(
            jax.sharding.get_abstract_mesh(), jax.sharding.PartitionSpec(*parts)
        )
    else:
        target = jax.sharding.NamedSharding(s.mesh, s.spec.update(partitions=tuple(parts)))
    return bind(sharding_constraint_p, x, sharding=target, kind="reshard")


def _check_outputs(leaves: list) -> None:
    """JAX's error for an output that is no array type (a string, an object)."""
    for x in leaves:
        if not isinstance(x, Tracer):
            try:
                to_aval(x)
            except TypeError as e:
                raise TypeError(
                    f"Output from batched function {x!r} with type {type(x)} is not a valid "
                    "JAX type"
                ) from e


def vmap(
    fun: Callable,
    in_axes: int | Sequence[Any] | None = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
    *,
    chunk_size: int | None = None,
    axis_name: Any = None,
    spmd_axis_name: Any = None,
) -> Callable:
    """Vectorise ``fun`` over an axis of its arguments.

    Args:
        fun: the function to map; it sees one slice of each mapped argument.
        in_axes: for each positional argument, the axis to map over, or ``None`` for an
            argument passed unchanged to every call: an int (every argument), ``None``,
            or a tuple with one entry per positional argument (pytree prefixes allowed).
            Keyword arguments are always mapped over axis 0.
        out_axes: where the batch axis goes in each output (an int, or a pytree prefix
            of the outputs); ``None`` requires that output to be unbatched.
        axis_size: the batch size, needed only when no argument is mapped.
        chunk_size: funcgrad's own (after ``torch.func``): run the batched program on
            ``chunk_size`` examples at a time, in one compiled ``scan`` over the full
            chunks plus one call on the remainder, to cap memory. Results equal the
            unchunked ones; ``None`` maps everything at once.
        axis_name: a name for the mapped axis: inside ``fun``, the collectives of
            :mod:`funcgrad.lax` (``psum``, ``all_gather``, ``axis_index``...) over this
            name act across the mapped examples, as in JAX.
        spmd_axis_name: mesh axes (a name or a tuple of names) the batch axis is split
            over in the sharding constraints ``fun`` makes (``with_sharding_constraint``),
            as JAX's; ``None``: not split.

    Returns:
        The batched function: the same arguments with a batch axis, the outputs with a
        batch axis at ``out_axes``. It is one batched program, not a Python loop.

    Raises:
        TypeError: ``in_axes`` is not an int, ``None`` or a tuple, or ``fun`` is not
            callable.
        ValueError: ``in_axes`` does not match the arguments, mapped axes have different
            sizes, an output declared unbatched (``out_axes=None``) is batched, or
            ``chunk_size`` is not ``None`` or a positive int.

    An unmapped (``None``) Python scalar or non-array object reaches ``fun`` unchanged,
    as in JAX.

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> fg.vmap(fnp.dot, in_axes=(0, None))(fnp.ones((4, 3)), fnp.ones(3)).shape
        (4,)
    """
    check_callable(fun)
    check_chunk_size(chunk_size, "vmap")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes!r}."
        )
    if not _axis_spec_ok(in_axes):
        raise TypeError(
            "vmap in_axes must be an int, None, or (nested) container with those types as "
            f"leaves, but got {in_axes!r}."
        )
    if not _axis_spec_ok(out_axes):
        raise TypeError(
            "vmap out_axes must be an int, None, or (nested) container with those types as "
            f"leaves, but got {out_axes!r}."
        )

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            msg = (
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                "the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}."
            )
            if kwargs:
                msg += (
                    f" Note that the function was called with keyword arguments {list(kwargs)}, "
                    "which the entries of a tuple in_axes never correspond to: keyword "
                    "arguments are always mapped along their leading axis (axis 0)."
                )
            raise ValueError(msg + where(user_frame()))
        leaves, in_tree = tree_flatten((args, kwargs))
        # keyword arguments are always mapped over their leading axis (as JAX)
        axes = _prefix_axes(in_axes, args, "in_axes") + [0] * len(tree_leaves(kwargs))
        dims: list[int | None] = []
        static: list[bool] = []  # unmapped Python scalars / non-arrays: passed through as-is
        sizes: dict[int, list[int]] = {}
        for i, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                dims.append(None)
                is_static = type(x) in _PY_SCALARS
                if not is_static:
                    try:
                        to_aval(x)
                    except TypeError:
                        is_static = True
                static.append(is_static)
                continue
            aval = _check_leaf(x, "vmap")
            static.append(False)
            if not -aval.ndim <= ax < aval.ndim:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {ax}, which implies "
                    f"that its rank should be at least {ax + 1 if ax >= 0 else -ax}, but is only "
                    f"{aval.ndim} (its shape is {aval.shape})"
                )
            d = ax % aval.ndim
            dims.append(d)
            sizes.setdefault(aval.shape[d], []).append(i)
        if len(sizes) > 1:
            raise ValueError(inconsistent_sizes(fun, args, kwargs, leaves, dims))
        if sizes:
            size = next(iter(sizes))
            if axis_size is not None and axis_size != size:
                raise ValueError(
                    f"vmap got inconsistent sizes for array axes to be mapped: the axis_size "
                    f"argument was {axis_size}, the mapped axes have size {size}"
                )
        elif axis_size is None:
            raise ValueError(
                "vmap must have at least one non-None value in in_axes, or an axis_size"
            )
        else:
            size = axis_size
        arg_leaves = [x for x, st in zip(leaves, static) if not st]
        arg_dims = [d for d, st in zip(dims, static) if not st]
        ema = None  # the explicit mesh axes the mapped dimensions are split over
        if SHARDING_TYPES[0]:
            ema = check_mapped_splits(arg_leaves, arg_dims)
            _check_explicit_axis(ema, spmd_axis_name)
        avals = [batching.unbatched_aval(to_aval(x), d) for x, d in zip(arg_leaves, arg_dims)]
        with new_builder("vmap") as b:
            # an unmapped argument keeps its value (Python control flow on it works)
            ins = [
                b.new_arg(a, x if d is None else UNKNOWN)
                for a, x, d in zip(avals, arg_leaves, arg_dims)
            ]
            for t, x, d in zip(ins, arg_leaves, arg_dims):
                if d is not None:  # (what differentiates x perturbs t: api._levels)
                    _levels.maps(b, t, x)
            it = iter(ins)
            a2, k2 = tree_unflatten(
                in_tree, [x if st else next(it) for x, st in zip(leaves, static)]
            )
            if axis_name is None:
                out = fun(*a2, **k2)
            else:  # the name's token: the example index, an input batched as an iota
                token = b.new_arg(col.TOKEN_AVAL)
                with col.bind_axes([col.AxisFrame(axis_name, size, token)]):
                    out = fun(*a2, **k2)
            out_leaves, out_tree = tree_flatten(out)
            _check_outputs(out_leaves)
            prog = b.build(out_leaves)
        if axis_name is not None:
            prog, arg_leaves, arg_dims = _with_token(prog, arg_leaves, arg_dims, size)
            if len(arg_leaves) > len(avals) and chunk_size is not None and chunk_size < size:
                raise NotImplementedError(
                    f"vmap with chunk_size={chunk_size} and collectives over axis_name="
                    f"{axis_name!r}: a collective would see one chunk at a time"
                )
        with (
            col.batching_axis(axis_name),
            spmd_axis(spmd_axis_name),
            sharding_types.vmap_explicit_axes(ema),
        ):
            if chunk_size is not None and chunk_size < size:
                outs, ods = _chunked(prog, arg_leaves, arg_dims, size, chunk_size)
            elif is_tracing():
                outs, ods = batching.batch_eval(prog, arg_leaves, arg_dims)
            else:  # eagerly: one (cached, compiled once it recurs) batched program
                bprog, ods = batching.batch_program(prog, arg_dims, size)
                outs = tiers.run(bprog, *arg_leaves)
        oaxes = _prefix_axes(out_axes, out, "out_axes")
        in_pos = {v: i for i, v in enumerate(prog.invars)}
        final = []
        for k, (o, d, t) in enumerate(zip(outs, ods, oaxes)):
            if t is None:
                if d is not None and axis_name is not None:
                    raise ValueError(
                        f"vmap has mapped output (axis_name={axis_name}) but out_axes is None "
                        f"(at vmap out_axes{_leaf_path(out, k)}: the output is batched on axis "
                        f"{d}){where(user_frame())}"
                    )
                if d is not None:
                    raise ValueError(
                        f"at vmap out_axes{_leaf_path(out, k)}, got axis spec None but output "
                        f"was batched on axis {d}{where(user_frame())}"
                    )
                # an input returned unchanged is that input (JAX's forwarding)
                j = in_pos.get(prog.outvars[k]) if len(prog.outvars) == len(outs) else None
                final.append(arg_leaves[j] if j is not None and j < len(arg_leaves) else o)
                continue
            nd = to_aval(o).ndim + (d is None)
            if not -nd <= t < nd:
                raise ValueError(
                    f"vmap out_axes{_leaf_path(out, k)}: axis {t} is out of bounds for array of "
                    f"dimension {nd}{where(user_frame())}"
                )
            moved = batching.move_dim(o, d, t % nd, size)
            final.append(
                moved if ema is None or d is not None else _split_batch(moved, t % nd, ema)
            )
        return tree_unflatten(out_tree, final)

    name = getattr(fun, "__name__", repr(fun))
    doc = f"Vectorized version of {name}, mapped over the axes given by in_axes."
    if getattr(fun, "__doc__", None):
        doc += f"\n\nOriginal documentation:\n\n{fun.__doc__}"
    vmapped.__doc__ = doc
    return vmapped
