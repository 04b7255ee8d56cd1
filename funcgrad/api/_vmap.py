"""``vmap``: trace once, rewrite with :mod:`funcgrad.batching`, evaluate."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from jax import tree_util

from funcgrad import batching
from funcgrad.api._util import _check_leaf, check_callable
from funcgrad.core.errors import user_frame, where
from funcgrad.core.interp import UNKNOWN, is_tracing, new_builder, to_aval
from funcgrad.lowering import run_program
from funcgrad.tree import broadcast_prefix, tree_flatten, tree_leaves, tree_unflatten

_PY_SCALARS = (bool, int, float, complex)


def _axis_spec_ok(spec: Any) -> bool:
    return all(type(x) is int for x in tree_leaves(spec))


def _leaf_path(tree: Any, k: int) -> str:
    """``keystr`` of the ``k``-th leaf of ``tree`` (for error messages)."""
    return tree_util.keystr(tree_util.tree_flatten_with_path(tree)[0][k][0])


def _prefix_axes(spec: Any, tree: Any, what: str) -> list:
    try:
        return broadcast_prefix(spec, tree, "vmap", what)
    except ValueError as e:
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value; {e}"
        ) from None


def vmap(
    fun: Callable,
    in_axes: int | Sequence[Any] | None = 0,
    out_axes: Any = 0,
    axis_size: int | None = None,
) -> Callable:
    """Vectorise ``fun`` over the ``in_axes`` of its positional arguments.

    As JAX: keyword arguments are always mapped over axis 0; an unmapped
    (``None``) Python scalar or non-array object reaches ``fun`` unchanged;
    ``out_axes=None`` requires that output to be unbatched.
    """
    check_callable(fun)
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
            desc = "; ".join(
                f"argument leaves {idx} have size {s}" for s, idx in sorted(sizes.items())
            )
            raise ValueError(f"vmap got inconsistent sizes for array axes to be mapped: {desc}")
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
        avals = [batching.unbatched_aval(to_aval(x), d) for x, d in zip(arg_leaves, arg_dims)]
        with new_builder("vmap") as b:
            # an unmapped argument keeps its value (Python control flow on it works)
            it = iter(
                [
                    b.new_arg(a, x if d is None else UNKNOWN)
                    for a, x, d in zip(avals, arg_leaves, arg_dims)
                ]
            )
            a2, k2 = tree_unflatten(
                in_tree, [x if st else next(it) for x, st in zip(leaves, static)]
            )
            out = fun(*a2, **k2)
            out_leaves, out_tree = tree_flatten(out)
            prog = b.build(out_leaves)
        if is_tracing():
            outs, ods = batching.batch_eval(prog, arg_leaves, arg_dims)
        else:  # eagerly: one (cached, compiled once it recurs) batched program
            bprog, ods = batching.batch_program(prog, arg_dims, size)
            outs = run_program(bprog, *arg_leaves)
        oaxes = _prefix_axes(out_axes, out, "out_axes")
        final = []
        for k, (o, d, t) in enumerate(zip(outs, ods, oaxes)):
            if t is None:
                if d is not None:
                    raise ValueError(
                        f"at vmap out_axes{_leaf_path(out, k)}, got axis spec None but output "
                        f"was batched on axis {d}{where(user_frame())}"
                    )
                final.append(o)
                continue
            nd = to_aval(o).ndim + (d is None)
            if not -nd <= t < nd:
                raise ValueError(
                    f"vmap out_axes{_leaf_path(out, k)}: axis {t} is out of bounds for array of "
                    f"dimension {nd}{where(user_frame())}"
                )
            final.append(batching.move_dim(o, d, t % nd, size))
        return tree_unflatten(out_tree, final)

    name = getattr(fun, "__name__", repr(fun))
    doc = f"Vectorized version of {name}, mapped over the axes given by in_axes."
    if getattr(fun, "__doc__", None):
        doc += f"\n\nOriginal documentation:\n\n{fun.__doc__}"
    vmapped.__doc__ = doc
    return vmapped
