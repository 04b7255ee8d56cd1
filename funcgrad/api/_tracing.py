"""Tracing and argument checks shared by the user-facing transforms; ``make_ir``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import dtypes as jax_dtypes
from jax import tree_util

from funcgrad.api import _levels
from funcgrad.core import dtypes, sharding_types
from funcgrad.core.interp import UNKNOWN, is_tracing, new_builder, to_aval
from funcgrad.core.ir import SHARDING_TYPES, Aval, Program
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh
from funcgrad.tree_util import tree_flatten, tree_unflatten

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


def fun_name(fun: Any) -> str:
    """``fun``'s name for messages (a ``functools.partial``'s function's name)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", None) or repr(fun)


def _check_leaf(x: Any, name: str) -> Aval:
    try:
        a = to_aval(x)
        dtypes.kind(a.dtype)  # a KeyError for dtypes no array has (object, str)
        return a
    except (TypeError, KeyError):
        raise TypeError(
            f"Argument '{x}' of type {type(x)} is not a valid JAX type ({name}: arguments "
            "must be arrays, Python scalars or pytrees of them)"
        ) from None


def trace_pytree(
    fun: Callable,
    args: tuple,
    kwargs: dict | None,
    transform: str,
    known: bool = False,
    differentiates: bool = False,
) -> tuple[Program, Any]:
    """Trace ``fun(*args, **kwargs)`` (pytrees of arrays) into a Program; returns
    (program, out_tree). With ``known`` the function may read the arguments' values;
    ``differentiates`` marks the trace as an eager differentiation of every argument
    (:mod:`funcgrad.api._levels`)."""
    leaves, in_tree = tree_flatten((args, kwargs or {}))
    if not SHARDING_TYPES[0]:  # (a mesh with explicit axes set through JAX itself)
        sharding_types.maybe_activate(jax.sharding.get_abstract_mesh())
    avals = [_check_leaf(x, transform) for x in leaves]
    with new_builder(transform) as b:
        tracers = [b.new_arg(a, x if known else UNKNOWN) for a, x in zip(avals, leaves)]
        if differentiates:
            _levels.differentiates(b, tracers)
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
            need = max(i + 1 if i >= 0 else -i for i in t)
            raise TypeError(
                f"differentiating with respect to argnums={argnums!r} requires at least "
                f"{need} positional arguments to be passed by the caller, but got only "
                f"{nargs} positional arguments. ({name})"
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
        dt = _check_leaf(x, name).dtype
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
        return sh.full(aval.shape, 0, aval.dtype)
    return np.zeros(aval.shape, float0)


def _like(g: Any, x: Any) -> Any:
    """The gradient ``g`` of input ``x`` typed as ``x`` is (JAX: a Python scalar's gradient
    is weakly typed) and, outside transforms, a ``jax.Array`` even when constant."""
    a, ga = to_aval(x), to_aval(g)
    if (ga.dtype, ga.weak_type) != (a.dtype, a.weak_type) or type(g) in (bool, int, float):
        g = ew.convert_element_type(g, a.dtype, a.weak_type)
    if isinstance(g, (np.ndarray, np.generic)) and not is_tracing():
        g = jax.device_put(g)
    return g


def make_ir(fun: Callable, static_argnums: int | Sequence[int] = ()) -> Callable[..., Program]:
    """Trace ``fun`` and return its program instead of running it.

    Args:
        fun: the function to trace (any transforms inside it are applied).
        static_argnums: positional arguments passed as Python values rather than traced.

    Returns:
        A function with ``fun``'s arguments returning the traced :class:`Program`;
        ``print`` it to read it (see the tutorial *Reading and transforming the IR*).
        ``make_jaxpr`` (JAX's name) returns the same program.

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> print(fg.make_ir(lambda x: fnp.sin(x) * 2.0)(1.0))
        { lambda a:f32[]. let
            b:f32[] = sin a
            c:f32[] = mul b 2.0
          in (c) }
    """
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


def broadcast_prefix(prefix: Any, full: Any, name: str, what: str) -> list[Any]:
    """Expand a pytree prefix (e.g. ``in_axes``) to one entry per leaf of ``full``.

    ``None`` entries in the prefix are leaves (they apply to a whole subtree).
    """
    out: list[Any] = []

    def add(p: Any, sub: Any) -> None:
        out.extend([p] * len(tree_util.tree_leaves(sub)))

    try:
        tree_util.tree_map(add, prefix, full, is_leaf=lambda x: x is None)
    except ValueError as e:
        raise ValueError(
            f"{name}: {what} {prefix!r} is not a pytree prefix of the arguments "
            f"with structure {tree_util.tree_structure(full)}: {e}"
        ) from None
    return out
