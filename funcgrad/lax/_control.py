"""``lax.map``, ``lax.associative_scan``, ``lax.platform_dependent``,
``lax.optimization_barrier`` and the ordering tokens ``create_token``/``after_all``
(control flow itself lives in ``funcgrad.control_flow``
and is re-exported by ``funcgrad.lax``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from funcgrad.api import vmap
from funcgrad.control_flow import scan
from funcgrad.core.axes import normalize_axis
from funcgrad.core.interp import to_aval
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import calls as _calls
from funcgrad.primitives import shape as sh
from funcgrad.tree_util import register_pytree_node, tree_flatten, tree_unflatten

__all__ = [
    "after_all",
    "associative_scan",
    "create_token",
    "map",
    "optimization_barrier",
    "platform_dependent",
]

#: the names ``platform_dependent`` accepts for a branch, per backend funcgrad runs on
_PLATFORM_NAMES = {"cpu": ("cpu",), "gpu": ("cuda", "rocm", "gpu"), "tpu": ("tpu",)}


def platform_dependent(
    *args: Any, default: Callable | None = None, **per_platform: Callable
) -> Any:
    """``per_platform[p](*args)`` for the platform ``p`` funcgrad runs on (``cpu``,
    ``cuda``/``rocm``, ``tpu``), else ``default(*args)``, as ``jax.lax.platform_dependent``.

    funcgrad compiles for one backend, known when it traces, so the branch is chosen
    then; the other branches are not traced.

    Example:
        >>> import funcgrad.lax as lax
        >>> float(lax.platform_dependent(2.0, cpu=lambda x: x + 1, default=lambda x: x))
        3.0
    """
    backend = jax.default_backend()
    for name in _PLATFORM_NAMES.get(backend, (backend,)):
        if name in per_platform:
            return per_platform[name](*args)
    if default is None:
        raise NotImplementedError(
            f"platform_dependent: translation rule for platform {backend!r} not found for "
            f"platform {backend} (no branch for it and no default; branches for "
            f"{sorted(per_platform)}){here()}"
        )
    return default(*args)


def optimization_barrier(operand: Any, /) -> Any:
    """Return ``operand`` (a pytree) unchanged, keeping XLA from moving computations
    across this point (e.g. merging a rematerialisation into the forward pass)."""
    leaves, tree = tree_flatten(operand)
    if not leaves:
        return operand
    outs = _calls.optimization_barrier(*[prep(x, "optimization_barrier") for x in leaves])
    return tree_unflatten(tree, list(outs))


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:
    """``f`` applied to each slice of ``xs`` along the leading axis, stacked (a ``scan``);
    with ``batch_size``, ``vmap`` over chunks of that size inside the scan."""
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    leaves, tree = jax.tree_util.tree_flatten(xs)
    n = to_aval(leaves[0]).shape[0]
    bs = int(batch_size)
    if bs < 0:
        raise ValueError(f"map: batch_size must not be negative, got {batch_size}{here()}")
    nfull = (n // bs) * bs if bs else 0  # batch_size=0: one full batch (a vmap), as JAX
    outs = []
    if nfull:
        chunks = [sh.reshape(_head(x, nfull), (n // bs, bs, *to_aval(x).shape[1:])) for x in leaves]
        ys = scan(lambda c, x: (c, vmap(f)(jax.tree_util.tree_unflatten(tree, x))), (), chunks)[1]
        outs.append(
            jax.tree_util.tree_map(lambda y: sh.reshape(y, (nfull, *to_aval(y).shape[2:])), ys)
        )
    if nfull < n:
        rest = [_tail(x, nfull) for x in leaves]
        outs.append(vmap(f)(jax.tree_util.tree_unflatten(tree, rest)))
    if len(outs) == 1:
        return outs[0]
    return jax.tree_util.tree_map(lambda a, b: sh.concatenate(a, b, dimension=0), *outs)


def _head(x: Any, n: int) -> Any:
    shape = to_aval(x).shape
    return sh.slice(x, (0,) * len(shape), (n, *shape[1:]))


def _tail(x: Any, n: int) -> Any:
    shape = to_aval(x).shape
    return sh.slice(x, (n, *(0,) * (len(shape) - 1)), shape)


def _take(x: Any, axis: int, start: int, stop: int | None, step: int = 1) -> Any:
    shape = to_aval(x).shape
    lo = [0] * len(shape)
    hi = list(shape)
    st = [1] * len(shape)
    lo[axis] = start
    hi[axis] = shape[axis] if stop is None else stop
    st[axis] = step
    return sh.slice(x, tuple(lo), tuple(hi), tuple(st))


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """``a0 b0 a1 b1 ...`` along ``axis``; ``a`` may be one longer than ``b``."""
    na, nb = to_aval(a).shape[axis], to_aval(b).shape[axis]
    head = _take(a, axis, 0, nb)
    both = sh.concatenate(
        sh.expand_dims(head, (axis + 1,)), sh.expand_dims(b, (axis + 1,)), dimension=axis + 1
    )
    shape = to_aval(both).shape
    out = sh.reshape(both, (*shape[:axis], 2 * nb, *shape[axis + 2 :]))
    if na > nb:
        out = sh.concatenate(out, _take(a, axis, nb, None), dimension=axis)
    return out


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations ``fn(...fn(fn(e0, e1), e2)..., ek)`` along ``axis`` for an
    associative ``fn`` on pytrees of arrays, in logarithmic depth (odd/even recursion)."""
    if not callable(fn):
        raise TypeError(f"lax.associative_scan: fn argument should be callable.{here()}")
    leaves, tree = jax.tree_util.tree_flatten(elems)
    if not leaves:
        raise ValueError(f"associative_scan: elems must contain arrays{here()}")
    leaves = [prep(x, "associative_scan") for x in leaves]
    nd = to_aval(leaves[0]).ndim
    axis = normalize_axis(axis, nd, "associative_scan")
    n = to_aval(leaves[0]).shape[axis]
    if any(to_aval(x).shape[axis] != n for x in leaves):
        raise ValueError(
            f"associative_scan: every elem needs the same size along axis {axis}{here()}"
        )

    def combine(a: list, b: list) -> list:
        out = fn(jax.tree_util.tree_unflatten(tree, a), jax.tree_util.tree_unflatten(tree, b))
        flat, t2 = jax.tree_util.tree_flatten(out)
        if t2 != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems{here()}")
        return flat

    def scan(xs: list) -> list:
        m = to_aval(xs[0]).shape[axis]
        if m < 2:
            return xs
        pairs = combine(
            [_take(x, axis, 0, m - 1, 2) for x in xs], [_take(x, axis, 1, None, 2) for x in xs]
        )
        odd = scan(pairs)
        if m % 2 == 0:
            even = combine(
                [_take(o, axis, 0, to_aval(o).shape[axis] - 1) for o in odd],
                [_take(x, axis, 2, None, 2) for x in xs],
            )
        else:
            even = combine(odd, [_take(x, axis, 2, None, 2) for x in xs])
        even = [sh.concatenate(_take(x, axis, 0, 1), e, dimension=axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    if reverse:
        leaves = [sh.rev(x, (axis,)) for x in leaves]
    out = scan(leaves)
    if reverse:
        out = [sh.rev(x, (axis,)) for x in out]
    return jax.tree_util.tree_unflatten(tree, out)


class Token:
    """An ordering token (:func:`create_token`, :func:`after_all`). It carries no value:
    funcgrad orders effects by data dependence, so a token is a pytree with no leaves,
    passing through ``jit``, ``vmap`` and the derivative transforms as structure (a
    jitted function returning one gives a new ``Token``, as JAX's)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Token()"


register_pytree_node(Token, lambda t: ((), None), lambda aux, children: Token())


def create_token(_: Any = None) -> Token:
    """A new ordering token; the argument is ignored (``jax.lax.create_token``'s
    signature).

    Example:
        >>> import funcgrad as fg
        >>> fg.jit(lambda x, t: (x + 1, t))(1.0, fg.lax.create_token())[1]
        Token()
    """
    return Token()


def after_all(*operands: Token) -> Token:
    """A token after all of ``operands`` (tokens), as ``jax.lax.after_all``.

    Example:
        >>> import funcgrad as fg
        >>> fg.lax.after_all(fg.lax.create_token(), fg.lax.create_token())
        Token()
    """
    for t in operands:
        if not isinstance(t, Token):
            raise TypeError(f"Arguments to after_all must be tokens, got {type(t).__name__}")
    return Token()
