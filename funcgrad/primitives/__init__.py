"""Primitive families. Importing this package registers every primitive."""

import inspect
from collections.abc import Callable
from typing import Any

from funcgrad.core import ad_util
from funcgrad.core.primitive import COMPOSITES, REGISTRY, Composite, Primitive
from funcgrad.primitives import (  # noqa: F401
    bits,
    calls,
    checks,
    collectives,
    composites,
    conv,
    custom_calls,
    custom_vmap,
    decomp,
    decomp_condensed,
    effects,
    eig,
    elementwise,
    fft,
    indexing,
    linalg,
    linear_solve,
    ragged,
    reduce_general,
    reductions,
    scatter,
    shape,
    sharding,
    sort,
    special,
    split,
    windowed,
)

# the array operations that tangent addition, zero materialisation and batch-axis
# moves are built from (core.ad_util sits below the primitives and knows none by name)
ad_util.register_array_ops(
    add=elementwise.add,
    full=shape.full,
    transpose=shape.transpose,
    broadcast_in_dim=shape.broadcast_in_dim,
    reduce_sum=reductions.reduce_sum,
)


def public_forms(namespace: str) -> dict[str, Primitive | Composite]:
    """The public forms the primitives and the declared composites declare in
    ``namespace`` (``"numpy"``, ``"lax"``, ``"nn"``: ``public=`` on their rows), name ->
    row; that namespace generates them, so each is written once, on its row."""
    rows = (*REGISTRY.values(), *COMPOSITES.values())
    return {n: p for p in rows for n in p.public.get(namespace, ())}


def declared_row(name: str) -> Primitive | Composite:
    """The primitive or declared composite named ``name`` (a test sample's ``domain``)."""
    return REGISTRY[name] if name in REGISTRY else COMPOSITES[name]


def named_operands(f: Callable[..., Any], row: Primitive | Composite) -> Callable[..., Any]:
    """``f`` (a form of ``row`` taking its operands ``x``, ``y``) with the parameter names
    the row declares (``operands``: ``igamma``'s ``a``, ``x``), passable by name."""
    if row.operands is None:
        return f
    sig = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in row.operands]
    )

    def named(*args: Any, **kwargs: Any) -> Any:
        return f(*sig.bind(*args, **kwargs).args)

    named.__name__ = named.__qualname__ = f.__name__
    named.__doc__ = f.__doc__
    named.__signature__ = sig  # type: ignore[attr-defined]
    return named


def public_doc(prim: Primitive | Composite, namespace: str) -> str:
    """The first words of the docstring of ``prim``'s forms in ``namespace``: the row's
    ``docs[namespace]`` where that namespace has its own, else its ``doc``."""
    return prim.docs.get(namespace) or prim.doc or prim.name
