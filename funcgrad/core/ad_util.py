"""What differentiation rules and transforms both need, below both (JAX's ``ad_util``).

Symbolic zeros, tangent addition, materialising a zero, moving a batch axis and
closing a program over its constants are used by the primitives' rules *and* by
the transforms (:mod:`funcgrad.ad`, :mod:`funcgrad.batching`) and the user API.
They live here, in ``core``, so that neither layer has to import the other for
them.

Four of them need array operations that are primitives (``add``, ``full``,
``transpose``, ``broadcast_in_dim``). ``core`` knows no primitive by name, so the
primitive package registers those operations with :func:`register_array_ops`
when it is imported (``funcgrad/primitives/__init__.py``), the way JAX's ``lax``
fills ``ad_util``'s tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.core.interp import to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.zeros import Zero, is_zero

__all__ = [
    "Zero",
    "add_tangents",
    "bdim_to_front",
    "close",
    "instantiate",
    "is_zero",
    "moveaxis",
    "reduce_sum",
    "register_array_ops",
    "zero_of",
    "zeros_like_aval",
]


class _ArrayOps:
    """The primitive-backed operations this module calls (set by the primitives)."""

    add: Callable[[Any, Any], Any] | None = None
    full: Callable[..., Any] | None = None
    transpose: Callable[[Any, tuple], Any] | None = None
    broadcast_in_dim: Callable[..., Any] | None = None
    reduce_sum: Callable[[Any, tuple], Any] | None = None


_ops = _ArrayOps()


def register_array_ops(
    *,
    add: Callable[[Any, Any], Any],
    full: Callable[..., Any],
    transpose: Callable[[Any, tuple], Any],
    broadcast_in_dim: Callable[..., Any],
    reduce_sum: Callable[[Any, tuple], Any],
) -> None:
    """Install the primitive wrappers this module builds on (called once, by
    ``funcgrad.primitives`` at import)."""
    _ops.add, _ops.full = add, full
    _ops.transpose, _ops.broadcast_in_dim = transpose, broadcast_in_dim
    _ops.reduce_sum = reduce_sum


def reduce_sum(x: Any, axes: tuple) -> Any:
    """Sum over ``axes`` (for rules of primitives below the reductions, e.g. the
    transposes of broadcasting)."""
    return _op("reduce_sum")(x, axes)


def _op(name: str) -> Callable[..., Any]:
    fn = getattr(_ops, name)
    if fn is None:
        raise RuntimeError(
            f"funcgrad.core.ad_util: {name!r} is not registered yet (import funcgrad first)"
        )
    return fn


def zeros_like_aval(aval: Aval) -> Any:
    """A materialised zero array of ``aval`` built with funcgrad ops."""
    return _op("full")(aval.shape, 0, aval.dtype)


def instantiate(t: Any, aval: Aval) -> Any:
    """Materialise a symbolic zero."""
    return zeros_like_aval(aval) if is_zero(t) else t


def add_tangents(a: Any, b: Any) -> Any:
    """Sum two tangents, either of which may be a symbolic zero."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    return _op("add")(a, b)


def zero_of(x: Any) -> Zero:
    """The symbolic zero tangent of ``x``."""
    return Zero(to_aval(x).strip_weak())


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """Move one axis of ``x`` (funcgrad ``transpose``)."""
    if src == dst:
        return x
    nd = len(to_aval(x).shape)
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return _op("transpose")(x, tuple(perm))


def bdim_to_front(x: Any, d: int | None, size: int) -> Any:
    """Batched ``x`` with its batch axis at 0 (broadcast if unbatched)."""
    if d is None:
        aval = to_aval(x)
        return _op("broadcast_in_dim")(x, (size, *aval.shape), tuple(range(1, aval.ndim + 1)))
    return moveaxis(x, d, 0)


def close(prog: Program) -> tuple[Program, tuple]:
    """(program with constvars turned into leading invars, the const values)."""
    if not prog.constvars:
        return prog, ()
    return Program(prog.constvars + prog.invars, (), prog.eqns, prog.outvars, ()), prog.consts
