"""Reverse mode: ``grad``, ``value_and_grad`` and ``vjp``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import ad, passes
from funcgrad.api import _levels
from funcgrad.api._pullback import VJP
from funcgrad.api._tracing import (
    _argnums_tuple,
    _check_diff_dtypes,
    _check_leaf,
    _check_out_dtype,
    _like,
    _split_diff,
    _zeros_ct,
    check_callable,
    fun_name,
)
from funcgrad.core import compile_cache, dtypes, tiers
from funcgrad.core.ad_util import close
from funcgrad.core.interp import new_builder, to_aval
from funcgrad.core.ir import Program
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives.calls import fuse_calls
from funcgrad.primitives.custom_calls import run_backward
from funcgrad.tree_util import tree_flatten, tree_unflatten


def value_and_grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Like :func:`grad`, but the function returns the value and the gradient together.

    Args:
        fun: a function returning a real scalar, or ``(scalar, aux)`` with ``has_aux``.
        argnums: which positional argument(s) to differentiate with respect to.
        has_aux: ``fun`` returns ``(value, aux)``.
        allow_int: allow integer inputs (their gradient is a ``float0`` zero).
        holomorphic: ``fun`` is a complex function of complex inputs (its derivative
            ``f'(z)``); without it the output must be real.

    Returns:
        A function returning ``(value, gradient)``, or ``((value, aux), gradient)`` with
        ``has_aux``. The forward pass runs once for both.

    Raises:
        TypeError: as :func:`grad`.
    """
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
                        "expected function with aux output to return a two-element tuple, "
                        f"but got type {type(out)} (grad with has_aux=True: the function "
                        "returns a pair (output, aux))"
                    )
                out, aux = out
            else:
                aux = None
            out_leaves, out_tree = tree_flatten(out)
            if len(out_leaves) != 1:
                raise TypeError(
                    "Gradient only defined for scalar-output functions. Output was "
                    f"{out}. (grad: a pytree {out_tree} of {len(out_leaves)} leaves)"
                )
            aval = _check_leaf(out_leaves[0], "grad output")
            if aval.shape != ():
                # raised once the program is differentiated: as JAX's, an equation without
                # a derivative (a callback) is the error a user sees first
                holder["not_scalar"] = (
                    "Gradient only defined for scalar-output functions. Output had shape "
                    f"{aval.shape} and dtype {aval.dtype.name}."
                )
            else:
                _check_out_dtype(aval.dtype, "grad", holo)
            aux_leaves, aux_tree = tree_flatten(aux)
            holder["aux_tree"] = aux_tree
            return [out_leaves[0], *aux_leaves]

        holder: dict[str, Any] = {}
        avals = [to_aval(x) for x in leaves]
        with new_builder("grad") as b:
            ins = [b.new_arg(a, x) for a, x in zip(avals, leaves)]
            _levels.differentiates(b, ins)
            prog = b.build(flat(*ins))
        if "not_scalar" in holder:
            ad.vjp_program(prog)
            raise TypeError(holder["not_scalar"])
        n_out = len(prog.outvars)
        keep = [want_value] + [True] * (n_out - 1)
        res = _run_seeded(prog, leaves, keep)
        n_kept = sum(keep)
        outs, cts = [None] * (1 - want_value) + res[:n_kept], res[n_kept:]
        grads = [
            _zeros_ct(to_aval(x)) if not dtypes.is_inexact(to_aval(x).dtype) else _like(g, x)
            for x, g in zip(leaves, cts)
        ]
        grads = [_strong_if_complex(g, x) if not holo else g for x, g in zip(leaves, grads)]
        g = tree_unflatten(in_tree, grads)
        g = g[0] if isinstance(argnums, int) else g
        value = outs[0]
        if has_aux:
            return (value, tree_unflatten(holder["aux_tree"], outs[1:])), g
        return value, g

    return value_and_grad_f


def _strong_if_complex(g: Any, x: Any) -> Any:
    """A real-valued function's gradient at a weakly typed complex input (a Python
    complex), strongly typed as JAX gives it: there the gradient comes back through
    the transpose of taking the real or imaginary part, which JAX builds with a
    strongly typed zero part."""
    a = to_aval(x)
    if a.weak_type and dtypes.kind(a.dtype) == 3:
        return ew.convert_element_type(g, a.dtype, False)
    return g


#: eager grad's seeded VJP programs by the structure of the traced program (its
#: constants made inputs): see :func:`_run_seeded`
_SEEDED: dict[tuple, Program] = {}
_MAX_SEEDED = 512


def _plain(prog: Program) -> bool:
    """Whether ``prog``'s VJP depends on its structure alone: no sub-programs, callables
    (custom rules, control flow, callbacks) or effects among its equations' params."""
    for e in prog.eqns:
        if e.prim.effectful:
            return False
        for v in e.params.values():
            if isinstance(v, Program) or callable(v):
                return False
            if type(v) in (tuple, list) and any(isinstance(x, Program) or callable(x) for x in v):
                return False
    return True


def _run_seeded(prog: Program, leaves: list, keep: list[bool]) -> list:
    """Run ``prog``'s forward and its backward seeded with 1 (eager ``grad``): the kept
    outputs, then the cotangents of ``prog``'s inputs.

    ``grad`` traces its function at every call (it may read Python state), but the
    transformation of a traced structure met before is reused: a plain program's
    constants become inputs, and its seeded VJP, built once without known values
    (as ``jit`` would), is cached by that structure (~half an eager step's time)."""
    n_out, n_in = len(prog.outvars), len(prog.invars)
    ct_mask = [True] + [False] * (n_out - 1)
    if not _plain(prog):
        vp = ad.vjp_program(prog, ct_mask=ct_mask, known=leaves)
        return tiers.run(fuse_calls(ad.seeded_program(vp, n_out, 1, keep)), *leaves)
    opened = Program(
        invars=(*prog.invars, *prog.constvars), constvars=(), eqns=prog.eqns, outvars=prog.outvars
    )
    # (the user lines the equations came from are part of the key: error messages and
    # debugging name them, and the structural key leaves them out)
    key = (opened.hashed_key(), tuple(e.source for e in prog.eqns), tuple(keep), n_in)
    seeded = _SEEDED.get(key)
    if seeded is None:
        active = [True] * n_in + [False] * len(prog.constvars)
        vp = ad.vjp_program(opened, ct_mask=ct_mask, active=active)
        seeded = ad.seeded_program(vp, n_out, 1, keep)
        # the constants' cotangents are nobody's: dropped with what only they needed
        used = [True] * (sum(keep) + n_in) + [False] * len(prog.constvars)
        seeded = fuse_calls(passes.prune_constvars(passes.dce(seeded, used)))
        if len(_SEEDED) >= _MAX_SEEDED:
            _SEEDED.clear()
        _SEEDED[key] = seeded
    return tiers.run(seeded, *leaves, *prog.consts)


compile_cache.register("eager_grad", size=lambda: len(_SEEDED), clear=_SEEDED.clear)


def grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    allow_int: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Gradient of a scalar-output function with respect to ``argnums``.

    Args:
        fun: a function of arrays (or pytrees of arrays) returning a real scalar, or
            ``(scalar, aux)`` with ``has_aux``.
        argnums: which positional argument(s) to differentiate with respect to; a
            sequence gives a tuple of gradients.
        has_aux: ``fun`` returns ``(value, aux)``; the gradient function then returns
            ``(gradient, aux)``.
        allow_int: allow integer inputs (their gradient is a ``float0`` zero) instead of
            raising.
        holomorphic: ``fun`` is a complex function of complex inputs; the result is
            ``f'(z)``.

    Returns:
        A function with ``fun``'s arguments returning the gradient, shaped like the
        argument(s) selected by ``argnums``.

    Raises:
        TypeError: ``fun`` is not callable; its output is not a scalar, or is complex
            without ``holomorphic``; an input is an integer without ``allow_int`` (JAX's
            messages).

    As in JAX, for a real ``f`` of complex ``z = x + iy`` the gradient is
    ``df/dx - i df/dy`` (the conjugate of the Wirtinger-style gradient). Unlike JAX,
    the function is traced once into funcgrad's IR and the whole program is
    transformed; outside ``jit`` it may still read its own values in Python (``if x >
    0:``, ``float(x)``).

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> fg.grad(lambda x: fnp.sum(x ** 2))(fnp.arange(3.0))
        Array([0., 2., 4.], dtype=float32)
    """
    vg = _value_and_grad(fun, argnums, has_aux, allow_int, want_value=False, holo=holomorphic)

    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        (val, g) = vg(*args, **kwargs)
        if has_aux:
            return g, val[1]
        return g

    return grad_f


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """Evaluate ``fun`` and return a function that pulls cotangents back (reverse mode).

    Args:
        fun: a function of the ``primals`` (arrays or pytrees of arrays).
        *primals: the point at which to evaluate and differentiate.
        has_aux: ``fun`` returns ``(out, aux)``; ``aux`` is returned as is.

    Returns:
        ``(out, vjp_fn)``, or ``(out, vjp_fn, aux)`` with ``has_aux``. ``vjp_fn(ct)``,
        with ``ct`` shaped like ``out``, returns a tuple with one cotangent per primal.
        ``vjp_fn`` is a pytree whose leaves are the saved residuals, so it can be passed
        into and out of ``jit``-compiled functions (as JAX's ``tree_util.Partial``).

    Raises:
        ValueError: ``vjp_fn`` receives a cotangent whose shape or dtype differs from
            ``out``'s.
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
        ins = [b.new_arg(a, x) for a, x in zip(avals, leaves)]
        _levels.differentiates(b, ins)
        prog = b.build(flat(*ins))
    n = holder["n"]
    n_out = len(prog.outvars)
    # custom_vjp bwd rules run when vjp_fn is applied (calls.run_backward), as in JAX
    vp = ad.vjp_program(
        prog, ct_mask=[True] * n + [False] * (n_out - n), known=leaves, defer_custom_bwd=True
    )
    res = tiers.run(vp.fwd, *leaves)
    outs, residuals = res[:n], res[n_out:]
    out_avals = [v.aval for v in prog.outvars[:n]]
    bwd, bwd_consts = close(vp.bwd)
    # which residuals are primal inputs passed through (JAX's ``args_res``)
    pos = {v: i for i, v in enumerate(vp.fwd.invars)}
    primal_of = [None] * len(bwd_consts) + [pos.get(v) for v in vp.fwd.outvars[n_out:]]

    def backward(saved: list, ct_leaves: list) -> tuple:
        cts = run_backward(bwd, *saved, *ct_leaves)
        cts = [_zeros_ct(a) if not dtypes.is_inexact(a.dtype) else g for a, g in zip(avals, cts)]
        return tuple(tree_unflatten(in_tree, cts))

    out = tree_unflatten(holder["out_tree"], outs)
    fn = VJP.build(
        backward,
        leaves,
        in_tree,
        [*bwd_consts, *residuals],
        primal_of,
        out_avals,
        holder["out_tree"],
        fun_name(fun),
    )
    if has_aux:
        return out, fn, tree_unflatten(holder["aux_tree"], res[n:n_out])
    return out, fn
