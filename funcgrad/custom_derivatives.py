"""JAX's ``jax.custom_derivatives`` names, and ``custom_gradient``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from funcgrad.core.ad_util import close
from funcgrad.core.interp import eval_program, new_builder, to_aval
from funcgrad.core.ir import Program
from funcgrad.custom import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_vjp,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from funcgrad.toplevel import closure_convert
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]


def custom_gradient(fun: Callable) -> Callable:
    """JAX's ``custom_gradient``: ``fun(*args)`` returns ``(value, vjp_fn)`` where
    ``vjp_fn(ct)`` gives the cotangents of the arguments (one array or a tuple, one per
    argument); the result is a function returning ``value`` whose reverse-mode
    derivative is ``vjp_fn``. ``vjp_fn`` may close over intermediate values: as in JAX
    it is traced in the forward pass, and the values it reads are the residuals."""

    def primal(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple:
        res = fun(*args)
        if not (isinstance(res, (tuple, list)) and len(res) == 2 and callable(res[1])):
            raise TypeError(
                "custom_gradient: the function must return a pair (value, vjp_fn) with a "
                f"callable vjp_fn, got {type(res).__name__}"
            )
        value, vjp_fn = res
        v_leaves, v_tree = tree_flatten(value)
        with new_builder("custom_gradient") as b:
            cts = [b.new_arg(to_aval(v).strip_weak()) for v in v_leaves]
            out_leaves, out_tree = tree_flatten(vjp_fn(tree_unflatten(v_tree, cts)))
            prog = b.build(out_leaves)
        prog, consts = close(prog)
        return value, (_GradientRule(prog, out_tree), list(consts))

    def bwd(res: tuple, ct: Any) -> tuple:
        rule, consts = res
        cts = tree_unflatten(rule.tree, eval_program(rule.prog, *consts, *tree_flatten(ct)[0]))
        tree = rule.tree
        return (cts,) if tree.num_leaves == 1 and tree.num_nodes == 1 else tuple(cts)

    wrapped = custom_vjp(primal)
    wrapped.defvjp(fwd, bwd)

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            bound = inspect.signature(fun).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
            if bound.kwargs:
                raise TypeError("custom_gradient: keyword-only arguments are not supported")
        return wrapped(*args)

    return call


class _GradientRule:
    """The ``vjp_fn`` of a ``custom_gradient`` traced at the cotangents' types, carried as
    a residual beside the values it reads (no array leaves of its own)."""

    def __init__(self, prog: Program, tree: Any) -> None:
        self.prog = prog
        self.tree = tree
