"""The user-facing transforms: grad, vjp, jvp, linearize, vmap, jacobians, make_ir.

Each traces the user function into a :class:`~funcgrad.core.ir.Program`,
rewrites it with :mod:`funcgrad.ad` or :mod:`funcgrad.batching`, and
evaluates the result under the current interpreter, so transforms nest.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import dtypes as jax_dtypes
from jax import tree_util

from funcgrad import ad, batching
from funcgrad.core import dtypes
from funcgrad.core.errors import user_frame, where
from funcgrad.core.interp import UNKNOWN, is_tracing, new_builder, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.zeros import is_zero
from funcgrad.lowering import run_program
from funcgrad.primitives.calls import close, run_backward
from funcgrad.tree import broadcast_prefix, tree_flatten, tree_leaves, tree_unflatten

float0 = jax_dtypes.float0


def check_callable(fun: Any) -> None:
    """JAX's early rejection of what a transform cannot take: a non-callable,
    a ``staticmethod`` object or a generator function (``TypeError``)."""
    if isinstance(fun, staticmethod):
        raise TypeError(f"staticmethod arguments are not supported, got {fun}")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun}")


@tree_util.register_pytree_node_class
class TreeFunction:
    """A function closed over arrays that are its pytree leaves (like JAX's
    ``tree_util.Partial``): what :func:`vjp` and :func:`linearize` return, so it can
    be passed into and returned from ``jit``. ``fn(leaves, *args)`` does the work."""

    __slots__ = ("_fn", "_leaves")

    def __init__(self, fn: Callable, leaves: Sequence[Any]) -> None:
        self._fn = fn
        self._leaves = list(leaves)

    def __call__(self, *args: Any) -> Any:
        return self._fn(self._leaves, *args)

    def tree_flatten(self) -> tuple[list, Callable]:
        return self._leaves, self._fn

    @classmethod
    def tree_unflatten(cls, fn: Callable, leaves: Sequence[Any]) -> TreeFunction:
        return cls(fn, leaves)

    def __repr__(self) -> str:
        return f"TreeFunction({getattr(self._fn, '__qualname__', self._fn)})"


# --------------------------------------------------------------------------- tracing


def _check_leaf(x: Any, name: str) -> Aval:
    try:
        return to_aval(x)
    except TypeError:
        raise TypeError(
            f"{name}: argument {x!r} of type {type(x).__name__} is not an array; "
            "arguments must be arrays, Python scalars or pytrees of them"
        ) from None


def trace_pytree(
    fun: Callable, args: tuple, kwargs: dict | None, transform: str, known: bool = False
) -> tuple[Program, Any]:
    """Trace ``fun(*args, **kwargs)`` (pytrees of arrays) into a Program; returns
    (program, out_tree). With ``known`` the function may read the arguments' values."""
    leaves, in_tree = tree_flatten((args, kwargs or {}))
    avals = [_check_leaf(x, transform) for x in leaves]
    with new_builder(transform) as b:
        tracers = [b.new_arg(a, x if known else UNKNOWN) for a, x in zip(avals, leaves)]
        a2, k2 = tree_unflatten(in_tree, tracers)
        out = fun(*a2, **k2)
        out_leaves, out_tree = tree_flatten(out)
        for o in out_leaves:
            _check_leaf(o, f"{transform} output")
        prog = b.build(out_leaves)
    return prog, out_tree


def _argnums_tuple(argnums: int | Sequence[int], nargs: int, name: str) -> tuple[int, ...]:
    t = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in t:
        if not -nargs <= i < nargs:
            raise ValueError(
                f"{name}: argnums {argnums!r} out of range for a function called with "
                f"{nargs} positional arguments"
            )
    return tuple(i % nargs for i in t)


def _split_diff(fun: Callable, args: tuple, argnums: tuple[int, ...], kwargs: dict) -> Callable:
    """``f(*diff_args)`` with the other positional args fixed."""

    def f(*diff: Any) -> Any:
        full = list(args)
        for i, d in zip(argnums, diff):
            full[i] = d
        return fun(*full, **kwargs)

    return f


def _check_diff_dtypes(leaves: list, allow_int: bool, name: str, holomorphic: bool = False) -> None:
    for x in leaves:
        dt = to_aval(x).dtype
        if holomorphic:
            if dtypes.kind(dt) != 3:
                raise TypeError(
                    f"{name} with holomorphic=True requires inputs with complex dtype, "
                    f"but got {dt.name}."
                )
            continue
        if name == "jacfwd" and not dtypes.is_float(dt):
            raise TypeError(
                "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
                "holomorphic=True. For differentiation of non-holomorphic functions involving "
                "complex inputs or integer inputs, use funcgrad.jvp directly."
            )
        if not dtypes.is_inexact(dt) and not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dt.name}. If you want to use "
                "integer-valued inputs, use vjp or set allow_int to True."
            )


def _check_out_dtype(dt: np.dtype, name: str, holomorphic: bool) -> None:
    """JAX's output dtype rule for ``grad``/``jacrev`` (and ``jacfwd`` with holomorphic):
    complex outputs only with ``holomorphic=True``, which requires them."""
    if holomorphic:
        if dtypes.kind(dt) != 3:
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, "
                f"but got {dt.name}."
            )
        return
    if dtypes.kind(dt) == 3:
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use funcgrad.vjp directly."
        )
    if not dtypes.is_float(dt):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For differentiation of functions with integer "
            "outputs, use funcgrad.vjp directly."
        )


def _complex_mismatch(a: np.dtype, b: np.dtype) -> bool:
    """One dtype complex and the other not: a (co)tangent that even a weakly typed Python
    scalar cannot stand for (JAX rejects a real cotangent of a complex output)."""
    return (dtypes.kind(a) == 3) != (dtypes.kind(b) == 3)


def _zeros_ct(aval: Aval) -> Any:
    if dtypes.is_inexact(aval.dtype):
        from funcgrad.primitives.shape import full

        return full(aval.shape, 0, aval.dtype)
    return np.zeros(aval.shape, float0)


# --------------------------------------------------------------------------- reverse mode


def value_and_grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """``(value, grad)`` of a scalar function; ``((value, aux), grad)`` with ``has_aux``.

    ``holomorphic=True`` differentiates a complex function of complex inputs (its
    derivative ``f'(z)``); without it the output must be real (see ``grad``)."""
    return _value_and_grad(fun, argnums, has_aux, allow_int, want_value=True, holo=holomorphic)


def _value_and_grad(
    fun: Callable,
    argnums: int | Sequence[int],
    has_aux: bool,
    allow_int: bool,
    want_value: bool,
    holo: bool = False,
) -> Callable:
    """value_and_grad; without ``want_value`` the value is not an output of the
    program (``grad``), so nothing outside the gradient is kept alive for it."""
    check_callable(fun)

    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "grad")
        f = _split_diff(fun, args, nums, kwargs)
        diff_args = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(diff_args)
        _check_diff_dtypes(leaves, allow_int, "grad", holo)

        def flat(*xs: Any) -> list:
            out = f(*tree_unflatten(in_tree, list(xs)))
            if has_aux:
                if not (isinstance(out, (tuple, list)) and len(out) == 2):
                    raise TypeError(
                        "grad with has_aux=True requires the function to return a pair "
                        f"(output, aux), got {type(out).__name__}"
                    )
                out, aux = out
            else:
                aux = None
            out_leaves, out_tree = tree_flatten(out)
            if len(out_leaves) != 1:
                raise TypeError(
                    f"grad requires a scalar output, got a pytree {out_tree} of "
                    f"{len(out_leaves)} leaves"
                )
            aval = _check_leaf(out_leaves[0], "grad output")
            if aval.shape != ():
                raise TypeError(
                    "Gradient only defined for scalar-output functions. Output had shape "
                    f"{aval.shape} and dtype {aval.dtype.name}."
                )
            _check_out_dtype(aval.dtype, "grad", holo)
            aux_leaves, aux_tree = tree_flatten(aux)
            holder["aux_tree"] = aux_tree
            return [out_leaves[0], *aux_leaves]

        holder: dict[str, Any] = {}
        avals = [to_aval(x) for x in leaves]
        with new_builder("grad") as b:
            prog = b.build(flat(*[b.new_arg(a, x) for a, x in zip(avals, leaves)]))
        n_out = len(prog.outvars)
        vp = ad.vjp_program(prog, ct_mask=[True] + [False] * (n_out - 1), known=leaves)
        keep = [want_value] + [True] * (n_out - 1)
        res = run_program(ad.seeded_program(vp, n_out, 1, keep), *leaves)
        n_kept = sum(keep)
        outs, cts = [None] * (1 - want_value) + res[:n_kept], res[n_kept:]
        grads = [
            _zeros_ct(to_aval(x)) if not dtypes.is_inexact(to_aval(x).dtype) else _like(g, x)
            for x, g in zip(leaves, cts)
        ]
        g = tree_unflatten(in_tree, grads)
        g = g[0] if isinstance(argnums, int) else g
        value = outs[0]
        if has_aux:
            return (value, tree_unflatten(holder["aux_tree"], outs[1:])), g
        return value, g

    return value_and_grad_f


def _like(g: Any, x: Any) -> Any:
    """The gradient ``g`` of input ``x`` typed as ``x`` is (JAX: a Python scalar's gradient
    is weakly typed) and, outside transforms, a ``jax.Array`` even when constant."""
    from funcgrad.numpy._core import convert, out

    a, ga = to_aval(x), to_aval(g)
    if (ga.dtype, ga.weak_type) != (a.dtype, a.weak_type):
        g = convert(g, a.dtype, a.weak_type)
    return out(g)


def grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Gradient of a scalar-output function with respect to ``argnums``.

    As in JAX, for a real ``f`` of complex ``z = x + iy`` it is ``df/dx - i df/dy`` (the
    conjugate of the Wirtinger-style gradient); a complex output needs ``holomorphic=True``
    (then the result is ``f'(z)``, and the inputs must be complex)."""
    vg = _value_and_grad(fun, argnums, has_aux, allow_int, want_value=False, holo=holomorphic)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        (val, g) = vg(*args, **kwargs)
        if has_aux:
            return g, val[1]
        return g

    return grad_f


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(out, vjp_fn)`` (and ``aux``); ``vjp_fn(ct)`` returns one cotangent per primal.

    ``vjp_fn`` is a pytree whose leaves are the residuals, so it can pass through ``jit``.
    """
    check_callable(fun)
    leaves, in_tree = tree_flatten(primals)
    holder: dict[str, Any] = {}

    def flat(*xs: Any) -> list:
        out = fun(*tree_unflatten(in_tree, list(xs)))
        aux = None
        if has_aux:
            out, aux = out
        out_leaves, out_tree = tree_flatten(out)
        aux_leaves, aux_tree = tree_flatten(aux)
        holder.update(out_tree=out_tree, n=len(out_leaves), aux_tree=aux_tree)
        return out_leaves + aux_leaves

    avals = [_check_leaf(x, "vjp") for x in leaves]
    with new_builder("vjp") as b:
        prog = b.build(flat(*[b.new_arg(a, x) for a, x in zip(avals, leaves)]))
    n = holder["n"]
    n_out = len(prog.outvars)
    # custom_vjp bwd rules run when vjp_fn is applied (calls.run_backward), as in JAX
    vp = ad.vjp_program(
        prog, ct_mask=[True] * n + [False] * (n_out - n), known=leaves, defer_custom_bwd=True
    )
    res = run_program(vp.fwd, *leaves)
    outs, residuals = res[:n], res[n_out:]
    out_avals = [v.aval for v in prog.outvars[:n]]
    out_tree = holder["out_tree"]
    bwd, bwd_consts = close(vp.bwd)
    n_consts = len(bwd_consts)

    def vjp_fn(saved: list, ct: Any) -> tuple:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(
                f"vjp: cotangent tree structure {ct_tree} does not match the output "
                f"structure {out_tree}"
            )
        for i, (c, a) in enumerate(zip(ct_leaves, out_avals)):
            ca = _check_leaf(c, "vjp cotangent")
            if ca.shape != a.shape or (
                dtypes.is_inexact(a.dtype)
                and ca.dtype != a.dtype
                and (not ca.weak_type or _complex_mismatch(ca.dtype, a.dtype))
            ):
                raise ValueError(
                    f"vjp: cotangent {i} has shape {ca.shape} and dtype {ca.dtype.name}, but "
                    f"the primal output has shape {a.shape} and dtype {a.dtype.name}"
                )
        cts = run_backward(bwd, *saved[:n_consts], *saved[n_consts:], *ct_leaves)
        cts = [_zeros_ct(a) if not dtypes.is_inexact(a.dtype) else g for a, g in zip(avals, cts)]
        return tuple(tree_unflatten(in_tree, cts))

    out = tree_unflatten(out_tree, outs)
    fn = TreeFunction(vjp_fn, [*bwd_consts, *residuals])
    if has_aux:
        return out, fn, tree_unflatten(holder["aux_tree"], res[n:n_out])
    return out, fn


# --------------------------------------------------------------------------- forward mode


def _check_tangents(primals: tuple, tangents: tuple, name: str) -> tuple[list, list, Any]:
    p_leaves, p_tree = tree_flatten(primals)
    t_leaves = _check_tangent_avals([to_aval(p) for p in p_leaves], p_tree, tangents, name)
    return p_leaves, t_leaves, p_tree


def _check_tangent_avals(p_avals: list[Aval], p_tree: Any, tangents: tuple, name: str) -> list:
    t_leaves, t_tree = tree_flatten(tangents)
    if p_tree != t_tree:
        raise ValueError(
            f"{name}: primal and tangent arguments must have the same tree structure; "
            f"got {p_tree} and {t_tree}"
        )
    for pa, t in zip(p_avals, t_leaves):
        ta = to_aval(t)
        if pa.shape != ta.shape:
            raise ValueError(
                f"{name}: primal and tangent shapes differ: primal {pa} vs tangent {ta}"
            )
        if (
            dtypes.is_inexact(pa.dtype)
            and ta.dtype != pa.dtype
            and (not ta.weak_type or _complex_mismatch(ta.dtype, pa.dtype))
        ):
            raise TypeError(
                f"{name}: primal and tangent dtypes differ: primal {pa} vs tangent {ta}"
            )
    return t_leaves


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False):
    """``(out, tangent_out)`` of ``fun`` at ``primals`` along ``tangents``."""
    check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists")
    p_leaves, t_leaves, p_tree = _check_tangents(tuple(primals), tuple(tangents), "jvp")
    holder: dict[str, Any] = {}

    def flat(*xs: Any) -> list:
        out = fun(*tree_unflatten(p_tree, list(xs)))
        aux = None
        if has_aux:
            out, aux = out
        ol, ot = tree_flatten(out)
        al, at = tree_flatten(aux)
        holder.update(out_tree=ot, n=len(ol), aux_tree=at)
        return ol + al

    avals = [_check_leaf(x, "jvp") for x in p_leaves]
    with new_builder("jvp") as b:
        prog = b.build(flat(*[b.new_arg(a, x) for a, x in zip(avals, p_leaves)]))
    tans = [t if dtypes.is_inexact(a.dtype) else ad.Zero(a) for t, a in zip(t_leaves, avals)]
    if is_tracing():
        outs, touts = ad.jvp_eval(prog, p_leaves, tans)
    else:  # eagerly: one (cached, compiled once it recurs) forward-mode program
        nz = [not is_zero(t) for t in tans]
        jprog, out_nz = ad.jvp_program(prog, nz, known=p_leaves, known_tangents=tans)
        res = run_program(jprog, *p_leaves, *[t for t, z in zip(tans, nz) if z])
        it = iter(res[len(prog.outvars) :])
        outs = res[: len(prog.outvars)]
        touts = [next(it) if z else ad.Zero(o.aval) for z, o in zip(out_nz, prog.outvars)]
    n = holder["n"]
    touts = [(_zeros_ct(o.aval) if is_zero(t) else t) for t, o in zip(touts[:n], prog.outvars[:n])]
    out = tree_unflatten(holder["out_tree"], outs[:n])
    tout = tree_unflatten(holder["out_tree"], touts)
    if has_aux:
        return out, tout, tree_unflatten(holder["aux_tree"], outs[n:])
    return out, tout


def linearize(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(out, jvp_fn)``: the primal computed once, and its linear tangent map
    (a pytree over its residuals, so it can pass through ``jit``); with ``has_aux``
    ``fun`` returns ``(out, aux)`` and the result is ``(out, jvp_fn, aux)``."""
    check_callable(fun)
    if has_aux:

        def pair(*xs: Any) -> Any:
            res = fun(*xs)
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    "linearize with has_aux=True: the function must return a pair (out, aux), "
                    f"got {type(res).__name__}"
                )
            return tuple(res)

        (out, aux), lin = linearize(pair, *primals)
        inner = lin._fn
        return out, TreeFunction(lambda saved, *t: inner(saved, *t)[0], lin._leaves), aux
    prog, out_tree = trace_pytree(fun, primals, None, "linearize", known=True)
    leaves, _in_tree = tree_flatten(primals)
    nonzero = [dtypes.is_inexact(a.dtype) for a in prog.in_avals]
    jprog, out_nz = ad.jvp_program(prog, nonzero, known=leaves)
    n_t = sum(nonzero)
    known, lin, unknown = ad.partial_eval(
        jprog, [False] * len(leaves) + [True] * n_t, list(leaves) + [None] * n_t
    )
    n_out = len(prog.outvars)
    outs = known[:n_out]
    if any(o is None for o in outs):
        # a call-like equation mixes primal and tangent outputs, so partial
        # evaluation staged it whole: compute the primal outputs directly
        outs = run_program(prog, *leaves)
    # which of the linear program's outputs are the tangent outputs
    lin_pos = [i for i, u in enumerate(unknown) if u]
    tangent_slots = [
        lin_pos.index(n_out + k) if (n_out + k) in lin_pos else None for k in range(sum(out_nz))
    ]
    known_tangents = known[n_out:]
    out_avals = [v.aval for v in prog.outvars]
    in_avals, in_tree = list(prog.in_avals), tree_flatten(primals)[1]
    lin, lin_consts = close(lin)
    n_consts = len(lin_consts)

    def jvp_fn(saved: list, *tangents: Any) -> Any:
        t_leaves = _check_tangent_avals(in_avals, in_tree, tangents, "linearize")
        t_in = [t for t, nz in zip(t_leaves, nonzero) if nz]
        lin_outs = run_program(lin, *saved[:n_consts], *t_in)
        known_tangents = saved[n_consts:]
        touts, k = [], 0
        for a, nz in zip(out_avals, out_nz):
            if not nz:
                touts.append(_zeros_ct(a))
                continue
            slot = tangent_slots[k]
            touts.append(lin_outs[slot] if slot is not None else known_tangents[k])
            k += 1
        return tree_unflatten(out_tree, touts)

    return tree_unflatten(out_tree, outs), TreeFunction(jvp_fn, [*lin_consts, *known_tangents])


# --------------------------------------------------------------------------- vmap


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


# --------------------------------------------------------------------------- jacobians


def _std_basis(leaves: list) -> tuple[Any, list[int]]:
    """An identity matrix split per leaf: returns (list of basis leaves, sizes)."""
    from funcgrad import numpy as fnp

    sizes = [int(np.prod(to_aval(x).shape, dtype=np.int64)) for x in leaves]
    n = sum(sizes)
    dtype = dtypes.result_type(*[(to_aval(x).dtype, False) for x in leaves])[0]
    eye = fnp.eye(n, dtype=dtype)
    out, start = [], 0
    for x, s in zip(leaves, sizes):
        blk = eye[:, start : start + s]
        out.append(fnp.reshape(blk.astype(to_aval(x).dtype), (n, *to_aval(x).shape)))
        start += s
    return out, sizes


def jacfwd(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Jacobian by forward mode: ``vmap`` of ``jvp`` over the input basis.

    As in JAX, inputs must be real floating unless ``holomorphic=True`` (then inputs and
    outputs must be complex)."""
    check_callable(fun)
    from funcgrad import numpy as fnp

    def jac(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        f = _split_diff(fun, args, nums, {})
        diff = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(diff)
        _check_diff_dtypes(leaves, False, "jacfwd", holomorphic)
        basis, _ = _std_basis(leaves)

        def push(*t: Any) -> Any:
            r = jvp(f, diff, tree_unflatten(in_tree, list(t)), has_aux=has_aux)
            if holomorphic:
                for o in tree_leaves(r[0]):
                    _check_out_dtype(to_aval(o).dtype, "jacfwd", True)
            return (r[1], r[2]) if has_aux else r[1]

        res = vmap(push, in_axes=0, out_axes=(0, None) if has_aux else 0)(*basis)
        tout, aux = res if has_aux else (res, None)
        t_leaves, out_tree = tree_flatten(tout)
        in_shapes = [to_aval(x).shape for x in leaves]
        jac_leaves = []
        for t in t_leaves:
            out_shape = to_aval(t).shape[1:]
            parts, start = [], 0
            for s in in_shapes:
                sz = int(np.prod(s, dtype=np.int64))
                blk = t[start : start + sz]
                blk = fnp.reshape(blk, (*s, *out_shape))
                nd_in = len(s)
                perm = tuple(range(nd_in, nd_in + len(out_shape))) + tuple(range(nd_in))
                parts.append(fnp.transpose(blk, perm))
                start += sz
            jac_leaves.append(_pack(parts, in_tree, argnums))
        out = tree_unflatten(out_tree, jac_leaves)
        return (out, aux) if has_aux else out

    return jac


def _pack(parts: list, in_tree: Any, argnums: Any) -> Any:
    t = tree_unflatten(in_tree, parts)
    return t[0] if isinstance(argnums, int) else t


def jacrev(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Jacobian by reverse mode: ``vmap`` of ``vjp`` over the output basis.

    As in JAX, outputs must be real floating unless ``holomorphic=True`` (then inputs and
    outputs must be complex); complex inputs of a real function give ``df/dx - i df/dy``."""
    check_callable(fun)
    from funcgrad import numpy as fnp

    def jac(*args: Any) -> Any:
        nums = _argnums_tuple(argnums, len(args), "jacrev")
        f = _split_diff(fun, args, nums, {})
        diff = tuple(args[i] for i in nums)
        leaves, in_tree = tree_flatten(diff)
        _check_diff_dtypes(leaves, False, "jacrev", holomorphic)
        if has_aux:
            out, vjp_fn, aux = vjp(f, *diff, has_aux=True)
        else:
            out, vjp_fn = vjp(f, *diff)
            aux = None
        o_leaves, out_tree = tree_flatten(out)
        for o in o_leaves:
            _check_out_dtype(to_aval(o).dtype, "jacrev", holomorphic)
        basis, _ = _std_basis(o_leaves)

        def pull(*c: Any) -> Any:
            return vjp_fn(tree_unflatten(out_tree, list(c)))

        cts = vmap(pull)(*basis)
        ct_leaves = tree_flatten(cts)[0]  # per input leaf, shape (n_out_total, *in_shape)
        out_shapes = [to_aval(o).shape for o in o_leaves]
        jac_leaves = []
        start = 0
        for s in out_shapes:
            sz = int(np.prod(s, dtype=np.int64))
            parts = [
                fnp.reshape(c[start : start + sz], (*s, *to_aval(c).shape[1:])) for c in ct_leaves
            ]
            jac_leaves.append(_pack(parts, in_tree, argnums))
            start += sz
        res = tree_unflatten(out_tree, jac_leaves)
        return (res, aux) if has_aux else res

    return jac


def hessian(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Hessian as ``jacfwd(jacrev(fun))`` (``has_aux`` and ``holomorphic`` passed to both)."""
    inner = jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic)
    return jacfwd(inner, argnums, has_aux=has_aux, holomorphic=holomorphic)


def make_ir(fun: Callable, static_argnums: int | Sequence[int] = ()) -> Callable[..., Program]:
    """``make_ir(f)(*args)`` returns the traced :class:`Program` (print it to read it)."""
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def wrapped(*args: Any, **kwargs: Any) -> Program:
        dyn_idx = [i for i in range(len(args)) if i not in statics]

        def f(*dyn: Any, **kw: Any) -> Any:
            full = list(args)
            for i, d in zip(dyn_idx, dyn):
                full[i] = d
            return fun(*full, **kw)

        prog, _ = trace_pytree(f, tuple(args[i] for i in dyn_idx), kwargs, "make_ir")
        return prog

    return wrapped
