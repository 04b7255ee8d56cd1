"""``lax.composite``: a function marked as one named operation for the compiler.

The decomposition is traced once per call into a sub-program held by one ``composite``
equation, with the composite's ``name``, ``version`` and attributes (the keyword
arguments, static values passed to the decomposition too). Lowered, it is JAX's
``stablehlo.composite`` op; evaluated, it is its decomposition. As in JAX, it has no
derivative and no batching rule, and values it closes over must be concrete.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core.ad_util import close
from funcgrad.core.errors import LeakedTracerError
from funcgrad.core.interp import Tracer, bind, new_builder, to_aval
from funcgrad.core.ir import Program
from funcgrad.numpy._core import as_array
from funcgrad.primitives.calls import CompositeAttribute, composite_p
from funcgrad.tree_util import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["composite"]


def _leak(name: str, what: str, note: str = "") -> LeakedTracerError:
    return LeakedTracerError(
        f"Found a JAX Tracer as {what} in the decomposition for the composite op '{name}'. "
        "This means that the decomposition function closes over a value that is involved "
        "in a JAX transformation. Any values that aren't explicitly known at compile time "
        f"must be explicitly passed as arguments to the composite.{note}"
    )


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """``decomposition`` as one operation named ``name`` (``jax.lax.composite``): positional
    arguments are its operands, keyword arguments static attributes (also passed to
    ``decomposition``); use as ``@functools.partial(lax.composite, name="my.op")``."""
    if not isinstance(name, str):
        raise TypeError(f"composite: name must be a string, got {name!r}")

    @functools.wraps(decomposition)
    def call(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(v, Tracer) for v in tree_leaves(list(kwargs.values()))):
            note = (
                "\n\nNote: If you are passing jax arrays as attributes, use numpy arrays instead."
            )
            raise _leak(name, "an attribute", note)
        flat, in_tree = tree_flatten(args)
        flat = [as_array(a, "composite") for a in flat]
        avals = [to_aval(a) for a in flat]
        with new_builder("composite") as b:
            inner = tree_unflatten(in_tree, [b.new_arg(a) for a in avals])
            leaves, out_tree = tree_flatten(decomposition(*inner, **kwargs))
            program = b.build(leaves)
        program, consts = close(program)
        if any(isinstance(c, Tracer) for c in consts):
            raise _leak(name, "a constant")
        # scalar constants stay in the decomposition (JAX's literals); arrays are operands
        order = sorted(range(len(consts)), key=lambda i: np.size(consts[i]) != 1)
        n = sum(1 for c in consts if np.size(c) == 1)
        ins = program.invars
        program = Program(
            [ins[i] for i in order] + list(ins[len(consts) :]),
            (),
            program.eqns,
            program.outvars,
            (),
        )
        consts = [consts[i] for i in order]
        attributes = tuple((k, CompositeAttribute(v)) for k, v in kwargs.items())
        outs = bind(
            composite_p,
            *consts[n:],
            *flat,
            program=program,
            name=name,
            attributes=attributes,
            version=int(version),
            inline=tuple(CompositeAttribute(np.asarray(c)) for c in consts[:n]),
        )
        return tree_unflatten(out_tree, outs)

    return call
