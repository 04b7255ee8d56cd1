"""The checks a ``jit`` makes of how it is built and called, in JAX's words: its
deprecated ``device``/``backend``, unconstrained dimensions in its shardings, a non-array
dynamic argument, ``compiler_options`` on
a nested jit, and a placed jit's operands known as committed arrays inside a transform
(:func:`check_known_operands`)."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax import tree_util

from funcgrad.core import compile_cache
from funcgrad.core.errors import user_frame, where
from funcgrad.core.interp import Tracer, known_value, leaked, to_aval
from funcgrad.core.ir import Program

#: transforms under which JAX evaluates a nested jit as a call of its own (its
#: ``compiler_options`` allowed); under the others JAX stages it into an outer program
_EVALUATING = frozenset({"vmap", "jvp"})


def signature(fun: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):  # some builtins have none
        return None


def _bad_leaf(x: Any) -> bool:
    try:
        to_aval(x)
    except TypeError:
        return True
    return False


def dynamic_error(
    name: str, statics: set, names: tuple, args: tuple, kwargs: dict, fun: Any = None
) -> TypeError | None:
    """JAX's ``TypeError`` for a non-array dynamic argument (a ``str``, ...), if any: the
    argument's path (by parameter name) and type, then funcgrad's hint."""
    dyn = (
        {i: a for i, a in enumerate(args) if i not in statics},
        {k: v for k, v in kwargs.items() if k not in names},
    )
    for path, leaf in tree_util.tree_flatten_with_path(dyn)[0]:
        if isinstance(leaf, Tracer) and not leaf._builder.alive:
            return leaked(leaf)
        if _bad_leaf(leaf):
            kind = "positional argument" if path[0].idx == 0 else "keyword argument"
            label = f"{kind} {path[1].key!r}{tree_util.keystr(path[2:])}"
            arg = path[1].key
            if isinstance(arg, int):
                params = list(getattr(signature(fun), "parameters", ())) if fun else []
                arg = params[arg] if arg < len(params) else f"args[{arg}]"
            return TypeError(
                f"Error interpreting argument to {fun if fun is not None else name} as an "
                f"abstract array. The problematic value is of type {type(leaf)} and was "
                f"passed to the function at path {arg}{tree_util.keystr(path[2:])}.\n"
                "This typically means that a jit-wrapped function was called with a "
                "non-array argument, and this argument was not marked as static using the "
                "static_argnums or static_argnames parameters of jax.jit. (jit-compiled "
                f"function {name}: {label} is {leaf!r}; dynamic arguments must be arrays, "
                f"Python scalars or pytrees of them){where(user_frame())}"
            )
    return None


def device_or_backend(device: Any, backend: Any, in_shardings: Any, out_shardings: Any) -> tuple:
    """``jit``'s deprecated ``device``/``backend``, checked as JAX checks them (with its
    warning): at most one of them, and neither beside shardings."""
    if device is None and backend is None:
        return None, None
    warnings.warn(
        "backend and device argument on jit is deprecated. You can use "
        '`jax.device_put(..., jax.local_devices(backend="cpu")[0])` on the inputs to the '
        "jitted function to get the same behavior.",
        DeprecationWarning,
        stacklevel=4,
    )
    if device is not None and backend is not None:
        raise ValueError(
            f"can't specify both a device and a backend for jit, got {device=} and {backend=}"
        )
    for name, given in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        if given is not None:
            raise ValueError(
                f"If backend or device is specified on jit, then {name} should not be specified."
            )
    return device, backend


def check_nested_options(name: str, compiler_options: tuple, stack: Sequence[Any]) -> None:
    """JAX's error for a jit given ``compiler_options`` called inside a transform that
    stages it into an outer program (``jit``, ``grad``; ``stack``: the tracing builders)."""
    if compiler_options and any(b.transform not in _EVALUATING for b in stack):
        src = user_frame()
        raise ValueError(
            "`compiler_options` can only be passed to top-level `jax.jit`. Got "
            f"compiler_options={dict(compiler_options)} specified on a nested jit with name: "
            f"{name} and source info: {'unknown' if src is None else f'{src[0]}:{src[1]}'}"
        )


def check_known_operands(
    program: Program, consts: Sequence[Any], leaves: Sequence[Any], placed: dict, name: str
) -> None:
    """Inside a transform that knows its inputs (eager ``grad``, ``vjp``...), a placed
    jit's operands known as committed arrays are checked as JAX checks them where it
    evaluates that jit by itself (its errors for an operand placed otherwise than
    ``in_shardings``, or on other devices), by lowering the call on them (nothing is
    compiled). The call's value may never be computed (``grad`` of a linear function
    needs none), so the check cannot wait for the call to run."""
    vals = [known_value(x) for x in leaves]
    if not any(getattr(v, "_committed", False) for v in vals):
        return
    args = [
        v if isinstance(v, jax.Array) else jax.ShapeDtypeStruct(to_aval(x).shape, to_aval(x).dtype)
        for v, x in zip(vals, leaves)
    ]
    compile_cache.compiled(program, name=name, **placed).lower(*consts, *args)


def check_unconstrained(in_shardings: Any, out_shardings: Any) -> None:
    """JAX's refusal of ``PartitionSpec.UNCONSTRAINED`` in a jit's shardings (it belongs
    to ``with_sharding_constraint``)."""
    P = jax.sharding.PartitionSpec
    for name, given in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        leaves = tree_util.tree_leaves(
            given, is_leaf=lambda v: isinstance(v, (jax.sharding.Sharding, P))
        )
        for s in leaves:
            spec = s.spec if isinstance(s, jax.sharding.NamedSharding) else s
            if isinstance(spec, P) and P.UNCONSTRAINED in spec.partitions:
                raise ValueError(f"Unconstrained dims are not allowed when passed to {name}: {s}")
