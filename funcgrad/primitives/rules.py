"""Shared helpers for writing primitive rules (zeros, dims, examples)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import taylor
from funcgrad.core import dtypes
from funcgrad.core.ad_util import (  # noqa: F401  (re-exported: rules are written with these)
    add_tangents,
    bdim_to_front,
    instantiate,
    moveaxis,
    zero_of,
    zeros_like_aval,
)
from funcgrad.core.interp import to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import REGISTRY, Primitive


def float_tangent_dtype(dtype: np.dtype) -> bool:
    return dtypes.is_inexact(dtype)


def batch_size(args: list, dims: list) -> int:
    for a, d in zip(args, dims):
        if d is not None:
            return to_aval(a).shape[d]
    raise ValueError("no batched argument")


def empty_batch(prim: Primitive, args: list, dims: list, params: dict) -> tuple[Any, int]:
    """The batch of no examples: zeros of one example's output (``prim``'s abstract
    evaluation) behind a leading 0, for batching rules that fold the batch axis into
    another one and so divide by its size."""
    avals = []
    for a, d in zip(args, dims):
        av = to_aval(a)
        if d is not None:
            av = Aval((*av.shape[:d], *av.shape[d + 1 :]), av.dtype, av.weak_type)
        avals.append(av)
    one = prim.abstract_eval(*avals, **params)
    return zeros_like_aval(Aval((0, *one.shape), one.dtype, one.weak_type)), 0


def rand(rng: np.random.Generator, shape: tuple, dtype: str = "float64", lo=-2.0, hi=2.0):
    """Random test input (float in [lo, hi), or ints / bools)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.uniform(lo, hi, size=shape).astype(dt)
    if dt.kind == "c":  # real and imaginary parts each in [lo, hi)
        re, im = rng.uniform(lo, hi, size=(2, *shape))
        return (re + 1j * im).astype(dt)
    if dt.kind in "iu":
        return rng.integers(int(lo), int(hi) + 1, size=shape).astype(dt)
    if dt.kind == "b":
        return rng.random(size=shape) < 0.5
    raise TypeError(dt)


def join_dtypes(
    name: str, *avals: Aval, described: str | Callable[[], str] | None = None
) -> tuple[np.dtype, bool]:
    """Result dtype and weak type of a primitive whose operands share one dtype
    (:func:`funcgrad.core.dtypes.join_strict`: a weakly typed operand takes the others'
    dtype when it fits). ``described`` names the operands in errors (default: their avals);
    a function returning it is called only for an error (tracing formats no text)."""
    try:
        return dtypes.join_strict(*((a.dtype, a.weak_type) for a in avals))
    except dtypes.DtypeJoinError as e:
        if described is None:
            desc = ", ".join(str(a) for a in avals)
        else:
            desc = described() if callable(described) else described
        if e.reason == "weak":
            raise TypeError(
                f"{name}: weakly typed operand {avals[e.index]} does not fit dtype {e.dtype}, "
                f"got {desc}"
            ) from None
        raise TypeError(
            f"{name} requires operands of one dtype, got {desc}; convert one of them first"
        ) from None


def def_vectorized_unary(prim: Primitive) -> Primitive:
    """Give ``prim`` (one operand, acting on each element, or each trailing group of
    elements, independently) its batching rule: bind it to the batched operand with the
    same params; the batch axis stays where it is. Returns ``prim``."""

    def batch(args: list, dims: list, **params: Any) -> tuple[Any, int | None]:
        return prim.bind(args[0], **params), dims[0]

    prim.batch = batch
    return prim


def def_linear(prim: Primitive) -> Primitive:
    """Give ``prim`` (linear in all its operands jointly) its JVP: the output tangent is
    ``prim`` applied, with the same params, to the input tangents; with several operands a
    symbolic zero tangent is materialised at its operand's shape in the output's dtype
    (the JVP runs only when some tangent is nonzero); its jet rule likewise. Returns ``prim``."""

    def jvp(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
        out = prim.bind(*primals, **params)
        if len(tangents) == 1:
            return out, prim.bind(tangents[0], **params)
        dtype = to_aval(out).dtype
        ts = [instantiate(t, Aval(to_aval(x).shape, dtype)) for x, t in zip(primals, tangents)]
        return out, prim.bind(*ts, **params)

    prim.jvp = jvp
    prim.jet = taylor.linear_jet(prim)  # (each order's coefficients mapped alike)
    return prim


#: dtype categories a primitive accepts, by ``dtypes.kind`` (0 bool, 1 integer, 2 real
#: floating, 3 complex), and how an error names them
_DTYPE_CATEGORIES: dict[str, tuple[Callable[[int, np.dtype], bool], str]] = {
    "inexact": (lambda k, d: k in (2, 3), "a floating (or complex) dtype"),
    "real_float": (lambda k, d: k == 2, "a real floating dtype"),
    "noncomplex": (lambda k, d: k in (1, 2), "a real (non-complex) numeric dtype"),
    "ordered": (lambda k, d: k in (0, 1, 2), "a bool, integer or real floating dtype"),
    "num": (lambda k, d: k in (1, 2, 3), "a numeric dtype"),
    "signed": (lambda k, d: k in (2, 3) or (k == 1 and d.kind == "i"), "a signed numeric dtype"),
    "int": (lambda k, d: k == 1, "an integer dtype"),
    "intbool": (lambda k, d: k in (0, 1), "an integer or bool dtype"),
    "any": (lambda k, d: True, ""),
}


def check_dtype(name: str, aval: Aval, allowed: str) -> None:
    """Raise ``TypeError`` unless ``aval``'s dtype is in the category ``allowed``
    (one of ``_DTYPE_CATEGORIES``: the one dtype check every primitive family uses)."""
    ok, need = _DTYPE_CATEGORIES[allowed]
    if not ok(dtypes.kind(aval.dtype), aval.dtype):
        raise TypeError(  # (JAX's sentence first)
            f"{name} does not accept dtype {aval.dtype.name}: {name} requires {need}, got an "
            f"operand of type {aval}"
        )


# --------------------------------------------------------------------------- late binding
# The derivative and batching rules of the elementwise primitives need structural ones
# (broadcast_in_dim, reduce_sum, polygamma), whose own rules are written with
# elementwise primitives. The layers stay floors (elementwise below shape, reductions and
# special) because these rules bind the higher primitive by its registered name: the
# registry is complete once funcgrad.primitives is imported, before any rule runs.


def bind_named(name: str, *args: Any, **params: Any) -> Any:
    """Bind the primitive registered as ``name`` (see the comment above)."""
    return REGISTRY[name].bind(*args, **params)


def broadcast(x: Any, shape: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    """``broadcast_in_dim(x, shape, dims)``, ``x`` itself when that changes nothing."""
    shape, dims = tuple(map(int, shape)), tuple(map(int, dims))
    if (
        not isinstance(x, (bool, int, float, complex))
        and to_aval(x).shape == shape
        and dims == tuple(range(len(shape)))
    ):
        return x
    return bind_named("broadcast_in_dim", x, shape=shape, broadcast_dimensions=dims)
