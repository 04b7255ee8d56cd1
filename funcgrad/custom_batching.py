"""JAX's ``jax.custom_batching``: functions with a hand-written ``vmap`` rule.

``custom_vmap`` traces the function once per call and binds one
``custom_vmap_call`` equation (:mod:`funcgrad.primitives.custom_vmap`) holding its
program and the rule, so the rule travels with the equation through ``jit``,
``jvp`` and nested ``vmap`` as JAX's does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from funcgrad._rule_closures import CustomFunction
from funcgrad.api._tracing import fun_name
from funcgrad.core.errors import LeakedTracerError
from funcgrad.core.interp import bind, is_tracing
from funcgrad.custom import forward_attr, positional_args, trace_function
from funcgrad.lax import map as lax_map
from funcgrad.primitives.custom_vmap import custom_vmap_call_p
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_vmap", "sequential_vmap"]


def _tree_str(tree: Any) -> str:
    return str(tree).replace("PyTreeDef", "")


class _FlatRule:
    """The user's rule over the call's flat operands (the function's closed-over
    constants first, which must stay unbatched)."""

    def __init__(self, rule: Callable, name: str, n_consts: int, in_tree: Any, out_tree: Any):
        self.rule = rule
        self.__name__ = getattr(rule, "__name__", "<unnamed rule>")
        self.fun_name = name
        self.n_consts = n_consts
        self.in_tree = in_tree
        self.out_tree = out_tree

    def __repr__(self) -> str:  # the user's rule: printed programs name it, as JAX's
        return repr(self.rule)

    def _key(self) -> tuple:
        return (self.rule, self.n_consts, self.in_tree, self.out_tree)

    def __eq__(self, other: object) -> bool:  # equal rules: one program structure (caches)
        return type(other) is _FlatRule and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __call__(self, size: int, in_batched: list, args: list) -> tuple:
        k = self.n_consts
        if any(in_batched[:k]):
            raise LeakedTracerError(
                f"custom_vmap function {self.fun_name} closes over a value that this vmap "
                "batches; pass it to the function as an explicit argument so its rule "
                "sees it batched"
            )
        xs = tree_unflatten(self.in_tree, args[k:])
        batched = tree_unflatten(self.in_tree, list(in_batched[k:]))
        res = self.rule(size, list(batched), *xs)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(
                f"custom vmap rule ({self.__name__}) must return a pair (batched output, "
                f"output batching specification), got {type(res).__name__}"
            )
        out, out_batched = res
        outs, tree = tree_flatten(out)
        flags, flag_tree = tree_flatten(out_batched)
        if tree != flag_tree:
            raise ValueError(
                "structure of output value and output batching specification returned by "
                f"custom vmap rule ({self.__name__}) do not match.\n"
                f"Output values: {_tree_str(tree)}\nBatching spec: {_tree_str(flag_tree)}"
            )
        if tree != self.out_tree:
            raise ValueError(
                f"structure of output returned by custom vmap rule ({self.__name__}) does "
                "not match that of original custom-vmapped function.\n"
                f"Original output: {_tree_str(self.out_tree)}\nRule output: {_tree_str(tree)}"
            )
        return outs, flags


class custom_vmap(CustomFunction):
    """A function with a hand-written batching rule, as JAX's
    ``jax.custom_batching.custom_vmap``.

    Set the rule with ``f.def_vmap(rule)``: ``rule(axis_size, in_batched, *args)``
    receives the batch size, a list with one pytree of booleans per argument (which
    leaves carry a leading batch axis) and the arguments, and returns
    ``(out, out_batched)``, ``out_batched`` a pytree of booleans of ``out``'s
    structure. Outside ``vmap`` the function itself runs; under ``jvp`` the rule is
    differentiated, so ``vmap`` of ``jvp`` (and ``jacfwd``) keeps using it. Reverse
    mode is not defined, as in JAX: wrap the function in ``custom_vjp`` for that.

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> @fg.custom_batching.custom_vmap
        ... def f(x, y):
        ...     return x + y
        >>> @f.def_vmap
        ... def rule(axis_size, in_batched, xs, ys):
        ...     return xs * ys, True
        >>> fg.vmap(f)(fnp.arange(3), fnp.arange(1, 4))
        Array([0, 2, 6], dtype=int32)
    """

    def __init__(self, fun: Callable) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable | None = None

    __getattr__ = forward_attr

    def def_vmap(self, vmap_rule: Callable) -> Callable:
        """Set the batching rule ``rule(axis_size, in_batched, *args) -> (out,
        out_batched)``; returns it unchanged."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function; under ``vmap`` its rule is used.

        Raises:
            AttributeError: no rule was set with ``def_vmap`` (JAX's message).
            TypeError: the arguments do not bind to the function's parameters.
        """
        name = fun_name(self.fun)
        args = positional_args(self.fun, "custom_vmap", args, kwargs)
        if self.vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using def_vmap."
            )
        if not is_tracing():
            return self.fun(*args)
        leaves, in_tree = tree_flatten(args)
        prog, consts, out_tree = trace_function(self.fun, leaves, in_tree, "custom_vmap")
        rule = _FlatRule(self.vmap_rule, name, len(consts), in_tree, out_tree)
        outs = bind(custom_vmap_call_p, *consts, *leaves, program=prog, rule=rule)
        return tree_unflatten(out_tree, outs)


def sequential_vmap(f: Callable) -> custom_vmap:
    """``f`` as a :class:`custom_vmap` whose batching rule loops over the batch
    (``lax.map``), calling ``f`` once per example with its unbatched arguments
    shared: for functions that have no batched form.

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> f = fg.custom_batching.sequential_vmap(lambda x: x + 1)
        >>> fg.vmap(f)(fnp.arange(3))
        Array([1, 2, 3], dtype=int32)
    """
    g = custom_vmap(f)

    @g.def_vmap
    def rule(axis_size: int, in_batched: list, *args: Any) -> tuple:
        mapped = tree_map(lambda b, x: x if b else None, in_batched, list(args))
        shared = tree_map(lambda b, x: None if b else x, in_batched, list(args))

        def one(m: Any) -> Any:
            return g(*tree_map(lambda b, x, y: x if b else y, in_batched, m, shared))

        out = lax_map(one, mapped)
        return out, tree_map(lambda _: True, out)

    return g
