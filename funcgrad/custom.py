"""User-defined derivative rules (``custom_jvp``, ``custom_vjp``) and ``checkpoint``.

Each traces the wrapped function into a program and binds one call
primitive holding it, so the custom rule travels with the equation through
every transform.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.core.interp import UNKNOWN, bind, new_builder, to_aval
from funcgrad.primitives.calls import checkpoint_p, close, custom_jvp_call_p, custom_vjp_call_p
from funcgrad.tree import tree_flatten, tree_unflatten


def _trace(fun: Callable, leaves: list, in_tree: Any, name: str, known: bool = True) -> tuple:
    """Trace ``fun``; with ``known`` (custom_jvp/custom_vjp, as in JAX) the function
    may read its arguments' values when they are known (outside jit)."""
    with new_builder(name) as b:
        args = tree_unflatten(
            in_tree, [b.new_arg(to_aval(x), x if known else UNKNOWN) for x in leaves]
        )
        out = fun(*args)
        out_leaves, out_tree = tree_flatten(out)
        prog = b.build(out_leaves)
    prog, consts = close(prog)
    return prog, consts, out_tree


def _split_nondiff(args: tuple, nondiff: tuple[int, ...]) -> tuple[list, tuple]:
    static = [args[i] for i in nondiff]
    dyn = tuple(a for i, a in enumerate(args) if i not in nondiff)
    return static, dyn


def _merge(static: list, dyn: Sequence, nondiff: tuple[int, ...]) -> list:
    out, s, d = [], iter(static), iter(dyn)
    for i in range(len(static) + len(dyn)):
        out.append(next(s) if i in nondiff else next(d))
    return out


class custom_jvp:
    """A function with a user-supplied JVP rule: ``f.defjvp(jvp)`` where
    ``jvp(primals, tangents) -> (primal_out, tangent_out)``."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {self.__name__}; call defjvp"
            )
        static, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(dyn)
        fun = lambda *d: self.fun(*_merge(static, d, self.nondiff_argnums))
        prog, consts, out_tree = _trace(fun, leaves, in_tree, "custom_jvp")
        n_consts = len(consts)
        user_jvp = self.jvp

        def jvp_rule(primals: list, tangents: list) -> tuple:
            p = tree_unflatten(in_tree, primals[n_consts:])
            t = tree_unflatten(in_tree, tangents[n_consts:])
            out, tout = user_jvp(*static, tuple(p), tuple(t))
            return tree_flatten(out)[0], tree_flatten(tout)[0]

        outs = bind(custom_jvp_call_p, *consts, *leaves, program=prog, jvp=jvp_rule)
        return tree_unflatten(out_tree, outs)


class custom_vjp:
    """A function with a user-supplied VJP: ``f.defvjp(fwd, bwd)``;
    ``fwd(*args) -> (out, residuals)``, ``bwd(*nondiff, residuals, ct) -> tuple of cts``."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {self.__name__}; call defvjp"
            )
        nd = self.nondiff_argnums
        static, dyn = _split_nondiff(args, nd)
        leaves, in_tree = tree_flatten(dyn)
        fun = lambda *d: self.fun(*_merge(static, d, nd))
        prog, consts, out_tree = _trace(fun, leaves, in_tree, "custom_vjp")
        n_consts = len(consts)
        user_fwd, user_bwd = self.fwd, self.bwd
        in_avals = [to_aval(x) for x in leaves]

        def fwd_rule(primals: list) -> tuple:
            p = tree_unflatten(in_tree, primals[n_consts:])
            out, res = user_fwd(*_merge(static, p, nd))
            out_leaves, tree = tree_flatten(out)
            if tree != out_tree:
                raise TypeError(
                    f"custom_vjp fwd returned an output of structure {tree}, but the "
                    f"function returns {out_tree}"
                )
            return out_leaves, res

        def bwd_rule(res: Any, cts: list) -> list:
            ct = tree_unflatten(out_tree, cts)
            in_cts = user_bwd(*static, res, ct)
            if not isinstance(in_cts, (tuple, list)):
                raise TypeError(
                    "custom_vjp bwd must return a tuple with one cotangent per "
                    f"differentiable argument, got {type(in_cts).__name__}"
                )
            flat: list = []
            for c, sub in zip(in_cts, tuple(dyn)):
                n = len(tree_flatten(sub)[0])
                flat.extend([None] * n if c is None else tree_flatten(c)[0])
            for c, a in zip(flat, in_avals):
                if c is not None and to_aval(c).shape != a.shape:
                    raise ValueError(
                        f"custom_vjp bwd returned a cotangent of shape {to_aval(c).shape} for "
                        f"an input of shape {a.shape}"
                    )
            return [None] * n_consts + flat

        outs = bind(custom_vjp_call_p, *consts, *leaves, program=prog, fwd=fwd_rule, bwd=bwd_rule)
        return tree_unflatten(out_tree, outs)


def checkpoint(fun: Callable) -> Callable:
    """Recompute ``fun``'s forward pass during the backward pass instead of saving residuals."""

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        leaves, in_tree = tree_flatten(args)
        prog, consts, out_tree = _trace(fun, leaves, in_tree, "checkpoint", known=False)
        outs = bind(checkpoint_p, *consts, *leaves, program=prog)
        return tree_unflatten(out_tree, outs)

    return wrapped


remat = checkpoint
