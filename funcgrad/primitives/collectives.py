"""Collectives over named axes: ``psum``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``ppermute``, ``all_to_all``, and the axis environment that gives a
name its meaning.

A name is bound by ``vmap(..., axis_name=)`` (an axis of examples) or by ``shard_map``
(an axis of a device mesh). Whoever binds it pushes an :class:`AxisFrame` while the
user's function is traced: the name, the axis size and a **token**, a scalar ``int32``
value of the trace that *is* the index along the axis (a batched ``iota`` under
``vmap``; ``jax.lax.axis_index`` in the lowered per-device body of ``shard_map``).
Every collective takes the tokens of the axes it names as operands, after its array
operand. That one choice carries the design (docs/design.md, *Collectives*):

* ``axis_index`` is the token itself;
* under ``vmap`` the token of the mapped axis is a batched operand, so the batching
  rule always runs, also for a collective of an unbatched value or one inside a
  ``jit``/``scan``/``cond`` sub-program (the closed-over token becomes an operand of
  the call), and a batching rule tells which axis it maps: the one whose token is
  batched, checked against the name the running ``vmap`` declared
  (:func:`batching_axis`);
* a ``jit`` traced inside a binder closes over the token, a tracer, so its trace is
  never cached and reused where the name means something else.

Derivatives follow JAX's rules for collectives without varying-axes types (JAX's
``check_vma=False``): ``psum`` is linear and its transpose is ``psum``; ``all_gather``
and ``psum_scatter`` transpose to each other; ``ppermute`` to the inverse permutation;
``all_to_all`` to the ``all_to_all`` with split and concat axes exchanged. ``pmax`` and
``pmin`` split the derivative between tied maxima, as ``reduce_max`` does.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Primitive
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as red
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import bdim_to_front, moveaxis

FAMILY = "collectives"

TOKEN_AVAL = Aval((), np.dtype("int32"))

# --------------------------------------------------------------------------- axis environment


@dataclass(frozen=True)
class AxisFrame:
    """A bound axis name: its size and its token (the index along it, a traced value)."""

    name: Hashable
    size: int
    token: Any
    #: bound by a ``shard_map`` with ``check_vma=True``: JAX differentiates collectives over
    #: it with varying-axes types, which funcgrad does not have (see ``_psum_vjp``)
    vma: bool = False


class _Env(threading.local):
    def __init__(self) -> None:
        #: bound names, innermost last (an inner binding of a name shadows an outer one)
        self.frames: list[AxisFrame] = []
        #: the names of the ``vmap``s whose batching rewrite is running, innermost last
        self.batching: list[Hashable] = []


_env = _Env()


@contextmanager
def bind_axes(frames: Sequence[AxisFrame]) -> Iterator[None]:
    """Within the block, collectives may name the axes of ``frames``."""
    n = len(_env.frames)
    _env.frames.extend(frames)
    try:
        yield
    finally:
        del _env.frames[n:]


def bound_tokens() -> list:
    """The tokens of the bound axis names that are values of live traces: a rule traced
    later (a custom derivative's) needs them as inputs to use a collective."""
    return [f.token for f in _env.frames if isinstance(f.token, Tracer) and f.token._builder.alive]


@contextmanager
def batching_axis(name: Hashable) -> Iterator[None]:
    """Within the block a ``vmap`` rewrite maps the axis ``name`` (``None``: an anonymous
    axis): a collective whose token for ``name`` is batched reduces over the batch."""
    _env.batching.append(name)
    try:
        yield
    finally:
        _env.batching.pop()


def axis_names(axis_name: Any) -> tuple:
    """``axis_name`` as a tuple of names (a tuple or list names several axes)."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def lookup(name: Hashable, api: str) -> AxisFrame:
    """The innermost frame binding ``name``; ``NameError`` (JAX's words) when none does."""
    for f in reversed(_env.frames):
        if f.name == name:
            return f
    raise NameError(
        f"Found an unbound axis name: {name}. To fix this, please call {api} under "
        "`fg.shard_map`, or under `fg.vmap` with axis_name="
    )


def frames_for(axis_name: Any, api: str) -> list[AxisFrame]:
    """The frames of the names in ``axis_name`` (a name or a tuple of names)."""
    names = axis_names(axis_name)
    if len(set(names)) != len(names):
        raise ValueError(f"{api}: repeated axis name in {axis_name!r}")
    return [lookup(n, api) for n in names]


# --------------------------------------------------------------------------- shared rule parts


def _check_tokens(name: str, toks: Sequence[Aval], axes: tuple) -> None:
    if len(toks) != len(axes) or any(t.shape != () for t in toks):
        raise TypeError(f"{name}: expected one scalar token per axis of {axes}, got {toks}")


def _unbatch(t: Any, d: int | None) -> Any:
    """A token broadcast along a batch axis (by a rule that batches every operand), as a
    scalar again: its values along that axis are equal."""
    if d is None:
        return t
    return sh.reshape(sh.slice(t, (0,), (1,)), ())


def _split(args: list, dims: list, axes: tuple) -> tuple[Any, int | None, list, int | None]:
    """``(x, x's batch dim, unbatched tokens, k)``: ``k`` is the position in ``axes`` of
    the axis the running ``vmap`` maps (its token is batched), else ``None``."""
    x, *toks = args
    xd, *tds = dims
    cur = _env.batching[-1] if _env.batching else None
    k = None
    for i, (a, d) in enumerate(zip(axes, tds)):
        if d is not None and a == cur and cur is not None:
            k = i
    return x, xd, [_unbatch(t, d) for t, d in zip(toks, tds)], k


def _drop(seq: Sequence, k: int) -> tuple:
    return tuple(seq[:k]) + tuple(seq[k + 1 :])


def _scale(x: Any, n: int) -> Any:
    dt = to_aval(x).dtype
    return ew.mul(x, np.array(n, dt))


# --------------------------------------------------------------------------- psum / pmax / pmin


def _linear_jvp(p: Primitive) -> None:
    """``p``'s JVP: it is linear in its operand, so the tangent takes the same collective
    (the axis tokens pass through unchanged)."""

    @p.def_jvp
    def _jvp(primals: list, tangents: list, **params: Any) -> tuple:
        x, *toks = primals
        return p.bind(x, *toks, **params), p.bind(tangents[0], *toks, **params)


def _reduction(name: str, lower: Callable, reduce: Callable, unbatched: Callable) -> Primitive:
    """An all-reduce over named axes: ``x`` and one token per axis in; ``x``'s aval out."""
    p = Primitive(name, family=FAMILY)

    @p.def_abstract_eval
    def _abstract(x: Aval, *toks: Aval, axes: tuple, sizes: tuple) -> Aval:
        _check_tokens(name, toks, axes)
        return x

    @p.def_lower
    def _lower(x: Any, *toks: Any, axes: tuple, sizes: tuple) -> Any:
        return lower(x, axes)

    @p.def_batch
    def _batch(args: list, dims: list, *, axes: tuple, sizes: tuple) -> tuple:
        x, xd, toks, k = _split(args, dims, axes)
        if k is None:
            return p.bind(x, *toks, axes=axes, sizes=sizes), xd
        out = unbatched(x, sizes[k]) if xd is None else reduce(x, (xd,))
        if len(axes) > 1:
            out = p.bind(out, *_drop(toks, k), axes=_drop(axes, k), sizes=_drop(sizes, k))
        return out, None

    p.def_examples(no_examples)
    return p


def no_examples(rng: np.random.Generator) -> list:
    """No registry examples (see the comment)."""
    # a collective means something only under a binder of its axis, which the registry's
    # generic harness does not provide; tests/test_collectives.py checks every rule
    return []


psum_p = _reduction("psum", lambda x, a: lax.psum(x, a), red.reduce_sum, _scale)
pmax_p = _reduction("pmax", lambda x, a: lax.pmax(x, a), red.reduce_max, lambda x, n: x)
pmin_p = _reduction("pmin", lambda x, a: lax.pmin(x, a), red.reduce_min, lambda x, n: x)


_linear_jvp(psum_p)


@psum_p.def_vjp
def _psum_vjp(ct: Any, x: Any, *toks: Any, out: Any, axes: tuple, sizes: tuple) -> tuple:
    _refuse_vma_transpose(axes)
    return (psum_p.bind(ct, *toks, axes=axes, sizes=sizes), *[None] * len(toks))


def _refuse_vma_transpose(axes: tuple) -> None:
    """Reverse mode through ``psum`` while tracing the body of a ``shard_map`` with
    ``check_vma=True``: JAX's result there (``psum``'s transpose an identity on
    invariant values) differs from the one funcgrad computes (``psum``'s transpose a
    ``psum``, JAX's ``check_vma=False``), so it is an error rather than another number."""
    for name in axes:
        frame = next((f for f in reversed(_env.frames) if f.name == name), None)
        if frame is not None and frame.vma and frame.size > 1:
            raise NotImplementedError(
                f"reverse-mode differentiation of a collective over mesh axis {name!r} inside "
                "a shard_map body with check_vma=True: JAX's rules there use varying-axes "
                "types, which funcgrad does not implement. Pass check_vma=False to "
                "shard_map (JAX's rules without them, where psum's transpose is psum), or "
                "differentiate the shard_map from outside"
            )


def _extremum_share(x: Any, out: Any, toks: list, axes: tuple, sizes: tuple) -> tuple:
    """Where ``x`` attains the all-reduced extremum (1.0/0.0) and how many do."""
    dt = dtypes.canonicalize(to_aval(x).dtype)
    mask = ew.convert_element_type(ew.eq(x, out), dt)
    return mask, psum_p.bind(mask, *toks, axes=axes, sizes=sizes)


def _extremum_rules(p: Primitive) -> None:
    @p.def_jvp
    def _jvp(primals: list, tangents: list, *, axes: tuple, sizes: tuple) -> tuple:
        x, *toks = primals
        out = p.bind(x, *toks, axes=axes, sizes=sizes)
        mask, count = _extremum_share(x, out, toks, axes, sizes)
        t = psum_p.bind(ew.mul(mask, tangents[0]), *toks, axes=axes, sizes=sizes)
        return out, ew.div(t, count)

    @p.def_vjp
    def _vjp(ct: Any, x: Any, *toks: Any, out: Any, axes: tuple, sizes: tuple) -> tuple:
        mask, count = _extremum_share(x, out, list(toks), axes, sizes)
        total = psum_p.bind(ct, *toks, axes=axes, sizes=sizes)
        return (ew.div(ew.mul(mask, total), count), *[None] * len(toks))


_extremum_rules(pmax_p)
_extremum_rules(pmin_p)


def all_reduce(p: Primitive, x: Any, frames: Sequence[AxisFrame]) -> Any:
    """``p`` (``psum_p``, ``pmax_p`` or ``pmin_p``) over the axes of ``frames``."""
    return p.bind(
        x,
        *[f.token for f in frames],
        axes=tuple(f.name for f in frames),
        sizes=tuple(f.size for f in frames),
    )


# --------------------------------------------------------------------------- all_gather


all_gather_p = Primitive("all_gather", family=FAMILY)
all_gather_p.def_examples(no_examples)


@all_gather_p.def_abstract_eval
def _all_gather_abstract(
    x: Aval, tok: Aval, *, axes: tuple, sizes: tuple, axis: int, tiled: bool
) -> Aval:
    _check_tokens("all_gather", [tok], axes)
    shape = list(x.shape)
    if tiled:
        shape[axis] *= sizes[0]
    else:
        shape.insert(axis, sizes[0])
    return x.update(shape=tuple(shape), weak_type=False)


@all_gather_p.def_lower
def _all_gather_lower(x: Any, tok: Any, *, axes: tuple, sizes: tuple, axis: int, tiled: bool):
    return lax.all_gather(x, axes[0], axis=axis, tiled=tiled)


_linear_jvp(all_gather_p)


@all_gather_p.def_vjp
def _all_gather_vjp(ct: Any, x: Any, tok: Any, *, out: Any, axes, sizes, axis, tiled) -> tuple:
    return (
        psum_scatter_p.bind(ct, tok, axes=axes, sizes=sizes, scatter_dimension=axis, tiled=tiled),
        None,
    )


@all_gather_p.def_batch
def _all_gather_batch(args: list, dims: list, *, axes, sizes, axis, tiled) -> tuple:
    x, xd, (tok,), k = _split(args, dims, axes)
    if k is None:
        if xd is None:
            return all_gather_p.bind(x, tok, axes=axes, sizes=sizes, axis=axis, tiled=tiled), None
        x = moveaxis(x, xd, 0)
        return all_gather_p.bind(x, tok, axes=axes, sizes=sizes, axis=axis + 1, tiled=tiled), 0
    n = sizes[0]
    stacked = moveaxis(bdim_to_front(x, xd, n), 0, axis)  # (..., n, x.shape[axis], ...)
    if tiled:
        shape = to_aval(stacked).shape
        stacked = sh.reshape(stacked, (*shape[:axis], n * shape[axis + 1], *shape[axis + 2 :]))
    return stacked, None


def all_gather(x: Any, frame: AxisFrame, *, axis: int, tiled: bool) -> Any:
    """Gather ``x`` from every index of ``frame``'s axis (stacked at ``axis``, or
    concatenated along it when ``tiled``)."""
    return all_gather_p.bind(
        x, frame.token, axes=(frame.name,), sizes=(frame.size,), axis=axis, tiled=tiled
    )


# --------------------------------------------------------------------------- psum_scatter


psum_scatter_p = Primitive("psum_scatter", family=FAMILY)
psum_scatter_p.def_examples(no_examples)


@psum_scatter_p.def_abstract_eval
def _psum_scatter_abstract(
    x: Aval, tok: Aval, *, axes: tuple, sizes: tuple, scatter_dimension: int, tiled: bool
) -> Aval:
    _check_tokens("psum_scatter", [tok], axes)
    n, d = sizes[0], scatter_dimension
    shape = list(x.shape)
    if tiled:
        if shape[d] % n:
            raise ValueError(
                f"psum_scatter: tiled operand scatter dimension size {shape[d]} must be "
                f"divisible by shard_count {n}"
            )
        shape[d] //= n
    else:
        if shape[d] != n:
            raise ValueError(
                f"psum_scatter: operand scatter dimension size {shape[d]} must match shard "
                f"count {n}"
            )
        del shape[d]
    return x.update(shape=tuple(shape), weak_type=False)


@psum_scatter_p.def_lower
def _psum_scatter_lower(x, tok, *, axes, sizes, scatter_dimension, tiled) -> Any:
    return lax.psum_scatter(x, axes[0], scatter_dimension=scatter_dimension, tiled=tiled)


_linear_jvp(psum_scatter_p)


@psum_scatter_p.def_vjp
def _psum_scatter_vjp(ct, x, tok, *, out, axes, sizes, scatter_dimension, tiled) -> tuple:
    return (
        all_gather_p.bind(ct, tok, axes=axes, sizes=sizes, axis=scatter_dimension, tiled=tiled),
        None,
    )


@psum_scatter_p.def_batch
def _psum_scatter_batch(args: list, dims: list, *, axes, sizes, scatter_dimension, tiled):
    x, xd, (tok,), k = _split(args, dims, axes)
    d = scatter_dimension
    if k is None:
        if xd is None:
            out = psum_scatter_p.bind(
                x, tok, axes=axes, sizes=sizes, scatter_dimension=d, tiled=tiled
            )
            return out, None
        x = moveaxis(x, xd, 0)
        out = psum_scatter_p.bind(
            x, tok, axes=axes, sizes=sizes, scatter_dimension=d + 1, tiled=tiled
        )
        return out, 0
    n = sizes[0]
    total = _scale(x, n) if xd is None else red.reduce_sum(x, (xd,))
    if tiled:  # split the scattered dimension into (n, block): the batch axis is n
        shape = to_aval(total).shape
        total = sh.reshape(total, (*shape[:d], n, shape[d] // n, *shape[d + 1 :]))
    return total, d


def psum_scatter(x: Any, frame: AxisFrame, *, scatter_dimension: int, tiled: bool) -> Any:
    """Sum ``x`` over ``frame``'s axis and keep this index's block of ``scatter_dimension``."""
    return psum_scatter_p.bind(
        x,
        frame.token,
        axes=(frame.name,),
        sizes=(frame.size,),
        scatter_dimension=scatter_dimension,
        tiled=tiled,
    )


# --------------------------------------------------------------------------- ppermute


ppermute_p = Primitive("ppermute", family=FAMILY)
ppermute_p.def_examples(no_examples)


@ppermute_p.def_abstract_eval
def _ppermute_abstract(x: Aval, *toks: Aval, axes: tuple, sizes: tuple, perm: tuple) -> Aval:
    _check_tokens("ppermute", toks, axes)
    return x


@ppermute_p.def_lower
def _ppermute_lower(x: Any, *toks: Any, axes: tuple, sizes: tuple, perm: tuple) -> Any:
    return lax.ppermute(x, axes if len(axes) > 1 else axes[0], perm)


_linear_jvp(ppermute_p)


@ppermute_p.def_vjp
def _ppermute_vjp(ct: Any, x: Any, *toks: Any, out, axes, sizes, perm) -> tuple:
    inverse = tuple((d, s) for s, d in perm)
    return (ppermute_p.bind(ct, *toks, axes=axes, sizes=sizes, perm=inverse), *[None] * len(toks))


def _digits(i: int, sizes: Sequence[int]) -> list[int]:
    """The row-major digits of the linear index ``i`` over axes of ``sizes``."""
    out = []
    for n in reversed(sizes):
        i, d = divmod(i, n)
        out.append(d)
    return out[::-1]


def _linear(digits: Sequence[int], sizes: Sequence[int]) -> int:
    i = 0
    for d, n in zip(digits, sizes):
        i = i * n + d
    return i


@ppermute_p.def_batch
def _ppermute_batch(args: list, dims: list, *, axes, sizes, perm) -> tuple:
    x, xd, toks, k = _split(args, dims, axes)
    if k is None:
        return ppermute_p.bind(x, *toks, axes=axes, sizes=sizes, perm=perm), xd
    # the mapped axis moves data between examples; the other axes (if any) between
    # indices of the enclosing binders: index d of the batch receives, for each source
    # example s, what a ppermute over the other axes sends it from s
    n = sizes[k]
    rest_axes, rest_sizes, rest_toks = _drop(axes, k), _drop(sizes, k), _drop(toks, k)
    moves: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for src, dst in perm:
        ds, dd = _digits(src, sizes), _digits(dst, sizes)
        rs = _linear(_drop(ds, k), rest_sizes)
        rd = _linear(_drop(dd, k), rest_sizes)
        moves.setdefault((ds[k], dd[k]), []).append((rs, rd))
    xs = bdim_to_front(x, xd, n)
    shape = to_aval(xs).shape
    parts = []
    for dst in range(n):
        got = None
        for src in range(n):
            pairs = moves.get((src, dst))
            if pairs is None:
                continue
            piece = sh.slice(xs, (src,) + (0,) * (len(shape) - 1), (src + 1, *shape[1:]))
            if rest_axes:
                piece = ppermute_p.bind(
                    piece, *rest_toks, axes=rest_axes, sizes=rest_sizes, perm=tuple(pairs)
                )
            got = piece if got is None else ew.add(got, piece)  # disjoint receivers
        if got is None:  # nothing is sent to this index: zeros, as XLA's collective-permute
            got = sh.full((1, *shape[1:]), 0, to_aval(xs).dtype)
        parts.append(got)
    return sh.concatenate(*parts, dimension=0), 0


def check_perm(perm: Any, size: int) -> tuple[tuple[int, int], ...]:
    """``perm`` as pairs of ints in ``[0, size)`` with distinct sources and destinations."""
    if not isinstance(perm, (list, tuple, np.ndarray)):
        raise TypeError(
            "`perm` passed to `lax.ppermute` must be a list or a tuple. Got perm of type "
            f"{type(perm)}"
        )
    pairs = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    for s, d in pairs:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(f"ppermute: perm {perm} has an index outside the axis of size {size}")
    return pairs


def ppermute(x: Any, frames: Sequence[AxisFrame], perm: tuple[tuple[int, int], ...]) -> Any:
    """Send ``x`` from index ``s`` to index ``d`` for each ``(s, d)`` of ``perm`` (indices
    row-major over the axes of ``frames``)."""
    return ppermute_p.bind(
        x,
        *[f.token for f in frames],
        axes=tuple(f.name for f in frames),
        sizes=tuple(f.size for f in frames),
        perm=perm,
    )


# --------------------------------------------------------------------------- all_to_all


all_to_all_p = Primitive("all_to_all", family=FAMILY)
all_to_all_p.def_examples(no_examples)


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract(
    x: Aval, tok: Aval, *, axes: tuple, sizes: tuple, split_axis: int, concat_axis: int
) -> Aval:
    _check_tokens("all_to_all", [tok], axes)
    n = sizes[0]
    shape = list(x.shape)
    if shape[split_axis] % n:
        raise ValueError(
            f"all_to_all: the split axis {split_axis} has size {shape[split_axis]}, which is "
            f"not divisible by the axis size {n}"
        )
    shape[split_axis] //= n
    shape[concat_axis] *= n
    return x.update(shape=tuple(shape), weak_type=False)


@all_to_all_p.def_lower
def _all_to_all_lower(x, tok, *, axes, sizes, split_axis, concat_axis) -> Any:
    return lax.all_to_all(x, axes[0], split_axis, concat_axis, tiled=True)


_linear_jvp(all_to_all_p)


@all_to_all_p.def_vjp
def _all_to_all_vjp(ct, x, tok, *, out, axes, sizes, split_axis, concat_axis) -> tuple:
    back = all_to_all_p.bind(
        ct, tok, axes=axes, sizes=sizes, split_axis=concat_axis, concat_axis=split_axis
    )
    return back, None


@all_to_all_p.def_batch
def _all_to_all_batch(args: list, dims: list, *, axes, sizes, split_axis, concat_axis):
    x, xd, (tok,), k = _split(args, dims, axes)
    params = {"axes": axes, "sizes": sizes}
    if k is None:
        if xd is None:
            out = all_to_all_p.bind(
                x, tok, split_axis=split_axis, concat_axis=concat_axis, **params
            )
            return out, None
        x = moveaxis(x, xd, 0)
        out = all_to_all_p.bind(
            x, tok, split_axis=split_axis + 1, concat_axis=concat_axis + 1, **params
        )
        return out, 0
    # index b of the batch gets block b of every example's split axis, the blocks
    # concatenated along concat_axis in example order
    n = sizes[0]
    xs = bdim_to_front(x, xd, n)  # (n_src, *s)
    s = to_aval(xs).shape[1:]
    m = s[split_axis] // n
    # split the split axis into (n_dst, m): axes (src, ..., dst, m, ...)
    blocks = sh.reshape(xs, (n, *s[:split_axis], n, m, *s[split_axis + 1 :]))
    blocks = moveaxis(blocks, split_axis + 1, 0)  # (dst, src, *s'), s' of s's rank
    # the source axis goes just before the concat axis (at 1 + concat_axis in (dst, *s'))
    # and merges with it: blocks in source order
    c = 1 + concat_axis
    blocks = moveaxis(blocks, 1, c)
    shape = to_aval(blocks).shape
    out = sh.reshape(blocks, (*shape[:c], shape[c] * shape[c + 1], *shape[c + 2 :]))
    return out, 0


def all_to_all(x: Any, frame: AxisFrame, split_axis: int, concat_axis: int) -> Any:
    """Split ``split_axis`` into blocks, send block ``d`` to index ``d``, and concatenate
    the received blocks along ``concat_axis`` (JAX's ``tiled=True`` form)."""
    return all_to_all_p.bind(
        x,
        frame.token,
        axes=(frame.name,),
        sizes=(frame.size,),
        split_axis=split_axis,
        concat_axis=concat_axis,
    )


# --------------------------------------------------------------------------- axis_index


def axis_index(frames: Sequence[AxisFrame]) -> Any:
    """The index along the axes of ``frames`` (row-major over several): their tokens."""
    out = frames[0].token
    for f in frames[1:]:
        out = ew.add(ew.mul(out, np.int32(f.size)), f.token)
    return out


def axis_size(frames: Sequence[AxisFrame]) -> int:
    """The number of indices along the axes of ``frames``."""
    return math.prod(f.size for f in frames)


def is_traced(x: Any) -> bool:
    """``x`` is a value of a trace (a collective of a concrete value is computed now)."""
    return isinstance(x, Tracer)
