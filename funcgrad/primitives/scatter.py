"""Primitives of the ``scatter`` family: XLA's general gather and scatter, with
``jax.lax``'s dimension numbers, plus ``top_k``.

* ``gather_general`` — ``lax.gather`` (``offset_dims``, ``collapsed_slice_dims``,
  ``start_index_map``, ``operand_batching_dims``, ``start_indices_batching_dims``;
  the index vector is the last axis of the indices).
* ``scatter_general`` (set), ``scatter_add_general``, ``scatter_mul``,
  ``scatter_min``, ``scatter_max`` — the ``lax.scatter*`` family.
* ``top_k`` — the ``k`` largest entries along the last axis and their indices.

(``shape.py``'s ``gather``/``scatter_add`` are the narrower take-along-one-axis
forms ``funcgrad.numpy`` indexing uses.) Parameters hold the dimension numbers as
plain tuples (:class:`GatherDimensionNumbers`, :class:`ScatterDimensionNumbers`)
and ``mode`` as a string (``'clip'``, ``'fill'``, ``'promise_in_bounds'``).

Rules: gather's transpose is a scatter-add with the mirrored dimension numbers and
vice versa. ``scatter_general``'s derivative in the updates goes to the update each
position kept (ids scattered and read back, as JAX's); ``scatter_mul``'s assumes unique
indices, as JAX's does; ``scatter_min``/``scatter_max`` share
the derivative evenly among tied elements (as JAX does). Batching adds a leading
operand/indices batching dimension (unbatched arguments are broadcast first).
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jax import lax

from funcgrad.core import dtypes, gather_sharding, sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules, scatter_host
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import rand
from funcgrad.primitives.scatter_checks import check_gather, check_scatter
from funcgrad.primitives.sharding import typed_as

FAMILY = "scatter"


class GatherDimensionNumbers(NamedTuple):
    """How a gather maps its indices and slices onto the operand and the output
    (``jax.lax.GatherDimensionNumbers``)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps its indices and updates onto the operand
    (``jax.lax.ScatterDimensionNumbers``)."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds behaviour of gathers and scatters (``jax.lax.GatherScatterMode``)."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(s: Any) -> GatherScatterMode:
        """``None`` (fill or drop, JAX's default), a mode, a string or a JAX mode."""
        if s is None:
            return GatherScatterMode.FILL_OR_DROP
        if isinstance(s, GatherScatterMode):
            return s
        name = getattr(s, "name", s)
        table = {
            "clip": "CLIP",
            "fill": "FILL_OR_DROP",
            "drop": "FILL_OR_DROP",
            "fill_or_drop": "FILL_OR_DROP",
            "promise_in_bounds": "PROMISE_IN_BOUNDS",
        }
        key = table.get(str(name).lower(), str(name).upper())
        try:
            return GatherScatterMode[key]
        except KeyError:
            raise ValueError(f"Unknown gather mode {s!r}") from None


def _tup(xs: Sequence[int]) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


def gather_dnums(dn: Any) -> GatherDimensionNumbers:
    """Normalise (a JAX or funcgrad) gather dimension numbers to int tuples."""
    return GatherDimensionNumbers(*(_tup(getattr(dn, f)) for f in GatherDimensionNumbers._fields))


def scatter_dnums(dn: Any) -> ScatterDimensionNumbers:
    """Normalise (a JAX or funcgrad) scatter dimension numbers to int tuples."""
    return ScatterDimensionNumbers(*(_tup(getattr(dn, f)) for f in ScatterDimensionNumbers._fields))


def _jax_mode(mode: str) -> lax.GatherScatterMode:
    return {
        "clip": lax.GatherScatterMode.CLIP,
        "fill": lax.GatherScatterMode.FILL_OR_DROP,
        "promise_in_bounds": lax.GatherScatterMode.PROMISE_IN_BOUNDS,
    }[mode]


# --------------------------------------------------------------------------- gather

gather_general_p = Primitive("gather_general", family=FAMILY)


@gather_general_p.def_abstract_eval
def _gather_abstract_eval(
    x: Aval,
    idx: Aval,
    *,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    mode,
    fill_value,
) -> Aval:
    dn = dimension_numbers
    if dtypes.kind(idx.dtype) != 1:
        raise TypeError(f"gather: indices must have an integer dtype, got {idx}")
    check_gather(x, idx, dn, slice_sizes)
    removed = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offsets = [s for d, s in enumerate(slice_sizes) if d not in removed]
    batch = list(idx.shape[:-1])
    rank = len(batch) + len(offsets)
    out, it_o, it_b = [], iter(offsets), iter(batch)
    for i in range(rank):
        out.append(next(it_o) if i in dn.offset_dims else next(it_b))
    return Aval(tuple(out), x.dtype, x.weak_type)


@gather_general_p.def_lower
def _gather_lower(
    x: Any, idx: Any, *, dimension_numbers, slice_sizes, mode, fill_value, **kw: Any
) -> Any:
    dn = lax.GatherDimensionNumbers(**dimension_numbers._asdict())
    return lax.gather(x, idx, dn, slice_sizes, mode=_jax_mode(mode), fill_value=fill_value, **kw)


@gather_general_p.def_host
def _gather_host(x, idx, *, dimension_numbers, slice_sizes, mode, fill_value, **kw: Any) -> Any:
    dn, x = dimension_numbers, np.asarray(x)
    drop = (*dn.collapsed_slice_dims, *dn.operand_batching_dims)
    kept = [d for d in range(x.ndim) if d not in drop]
    flat, ok = scatter_host.locate(
        x.shape,
        idx,
        dn.start_index_map,
        dn.operand_batching_dims,
        dn.start_indices_batching_dims,
        kept,
        slice_sizes,
        mode != "fill",  # (promise_in_bounds: XLA clamps)
    )
    out = x.reshape(-1)[flat] if x.size else np.zeros(flat.shape, x.dtype)
    if ok is not True:
        fill = scatter_host.fill_value(x.dtype, fill_value)
        out = np.where(ok.reshape(ok.shape + (1,) * len(kept)), out, fill)
    # out is (index batch dims..., window dims...): the window dims go to offset_dims
    nb = out.ndim - len(kept)
    lead, win = iter(range(nb)), iter(range(nb, out.ndim))
    return out.transpose(
        [next(win) if i in dn.offset_dims else next(lead) for i in range(out.ndim)]
    )


gather_general_p.sharding_rule = gather_sharding.gather_rule


def _g2s(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        dn.offset_dims,
        dn.collapsed_slice_dims,
        dn.start_index_map,
        dn.operand_batching_dims,
        dn.start_indices_batching_dims,
    )


def _s2g(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(
        dn.update_window_dims,
        dn.inserted_window_dims,
        dn.scatter_dims_to_operand_dims,
        dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
    )


def _gather(x, idx, dn, slice_sizes, mode, fill_value=None, sorted_=False, unique=False):
    return bind(
        gather_general_p,
        x,
        idx,
        dimension_numbers=dn,
        slice_sizes=tuple(slice_sizes),
        indices_are_sorted=sorted_,
        unique_indices=unique,
        mode=mode,
        fill_value=fill_value,
    )


@gather_general_p.def_jvp
def _gather_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    (x, idx), (t, _) = primals, tangents
    out = bind(gather_general_p, x, idx, **p)
    if is_zero(t):
        return out, Zero(to_aval(out).strip_weak())
    return out, bind(gather_general_p, t, idx, **{**p, "fill_value": 0})


@gather_general_p.def_vjp
def _gather_vjp(
    ct: Any,
    x: Any,
    idx: Any,
    *,
    out: Any,
    dimension_numbers,
    indices_are_sorted,
    unique_indices,
    mode,
    **kw: Any,
) -> tuple:
    if is_zero(ct):
        return None, None
    xa = to_aval(x)
    zeros = _zeros_as(xa, to_aval(ct).dtype)
    g = _scatter(
        scatter_add_general_p,
        zeros,
        idx,
        ct,
        _g2s(dimension_numbers),
        mode,
        indices_are_sorted,
        unique_indices,
    )
    return g, None


def _zeros_as(a: Aval, dtype: np.dtype) -> Any:
    """Zeros of ``a``'s shape typed as a cotangent of ``a`` (as JAX's transposes build
    them: a scatter of a split window into unsplit zeros has no type JAX can infer)."""
    return typed_as(sh.full(a.shape, 0, dtype), sharding_types.cotangent_sharding(a.sharding))


def _batch_front(args: list, dims: list) -> list:
    size = rules.batch_size(args, dims)
    return [rules.bdim_to_front(a, d, size) for a, d in zip(args, dims)]


def _shift(ds: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in ds)


@gather_general_p.def_batch
def _gather_batch(args: list, dims: list, *, dimension_numbers, slice_sizes, **p: Any) -> tuple:
    (x, idx), (xd, idd) = args, dims
    dn = dimension_numbers
    if xd is None:  # only the indices are batched: one more batch dim of the gather
        idx = rules.moveaxis(idx, idd, 0)
        new = GatherDimensionNumbers(
            _shift(dn.offset_dims),
            dn.collapsed_slice_dims,
            dn.start_index_map,
            dn.operand_batching_dims,
            _shift(dn.start_indices_batching_dims),
        )
        return bind(
            gather_general_p, x, idx, dimension_numbers=new, slice_sizes=slice_sizes, **p
        ), 0
    x, idx = _batch_front([x, idx], [xd, idd])
    new = GatherDimensionNumbers(
        _shift(dn.offset_dims),
        _shift(dn.collapsed_slice_dims),
        _shift(dn.start_index_map),
        (0, *_shift(dn.operand_batching_dims)),
        (0, *_shift(dn.start_indices_batching_dims)),
    )
    return bind(
        gather_general_p, x, idx, dimension_numbers=new, slice_sizes=(1, *slice_sizes), **p
    ), 0


def _gp(dn, sizes, mode="fill", fill_value=None) -> dict:
    return {
        "dimension_numbers": dn,
        "slice_sizes": sizes,
        "indices_are_sorted": False,
        "unique_indices": False,
        "mode": mode,
        "fill_value": fill_value,
    }


@gather_general_p.def_examples
def _gather_examples(rng: np.random.Generator) -> list[Example]:
    i32 = np.int32
    rows = GatherDimensionNumbers((1,), (0,), (0,))
    win = GatherDimensionNumbers((1, 2), (), (0, 1))
    bat = GatherDimensionNumbers((), (1,), (1,), (0,), (0,))
    return [
        Example(
            [rand(rng, (5, 3)), np.array([[0], [4], [2], [2]], i32)],
            _gp(rows, (1, 3)),
            diff_argnums=(0,),
        ),
        Example(
            [rand(rng, (4, 5)), np.array([[0, 1], [2, 3], [3, 4]], i32)],
            _gp(win, (2, 2), "clip"),
            diff_argnums=(0,),
        ),
        Example(
            [rand(rng, (3, 4)), np.array([[[1], [3]], [[0], [0]], [[2], [5]]], i32)],
            _gp(bat, (1, 1), "fill", 0.0),
            diff_argnums=(0,),
        ),
        # out-of-bounds rows: NaN (the default fill), or clamped
        Example(
            [rand(rng, (5, 3)), np.array([[0], [7], [-1]], i32)], _gp(rows, (1, 3)), diff_argnums=()
        ),
        Example(
            [rand(rng, (5, 3)), np.array([[0], [7], [-1]], i32)],
            _gp(rows, (1, 3), "clip"),
            diff_argnums=(0,),
        ),
    ]


# --------------------------------------------------------------------------- scatter family


def _scatter_abstract_eval(name: str):
    def abstract_eval(x: Aval, idx: Aval, u: Aval, *, dimension_numbers, **kw: Any) -> Aval:
        dn = dimension_numbers
        ctx = f"operand {x}, indices {idx}, updates {u}, {dn}"
        if u.dtype != x.dtype and not u.weak_type:
            raise TypeError(f"{name}: operand and updates must have one dtype ({ctx})")
        if dtypes.kind(idx.dtype) != 1:
            raise TypeError(f"{name}: indices must have an integer dtype, got {idx}")
        check_scatter(x, idx, u, dn)
        allowed = "real" if name in ("scatter_min", "scatter_max") else "any"
        if allowed == "real" and dtypes.kind(x.dtype) == 3:
            raise TypeError(f"{name}: complex operands are not supported ({ctx})")
        return x

    return abstract_eval


def _window_sizes(x_aval: Aval, u_aval: Aval, dn: ScatterDimensionNumbers) -> tuple[int, ...]:
    """Slice sizes of the gather that reads back what a scatter wrote."""
    removed = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    it = iter(dn.update_window_dims)
    return tuple(1 if d in removed else u_aval.shape[next(it)] for d in range(x_aval.ndim))


def _declare_scatter(name: str, lower_fn: Any) -> Primitive:
    prim = Primitive(name, family=FAMILY)
    prim.abstract_eval = _scatter_abstract_eval(name)

    def lower(x, idx, u, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
        dn = lax.ScatterDimensionNumbers(**dimension_numbers._asdict())
        xa = to_aval(x)
        if to_aval(u).dtype != xa.dtype or isinstance(u, (int, float)):
            u = lax.convert_element_type(u, xa.dtype)
        return lower_fn(
            x,
            idx,
            u,
            dn,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=_jax_mode(mode),
        )

    def batch(args: list, dims: list, *, dimension_numbers, **p: Any) -> tuple:
        x, idx, u = _batch_front(args, dims)
        dn = dimension_numbers
        new = ScatterDimensionNumbers(
            _shift(dn.update_window_dims),
            _shift(dn.inserted_window_dims),
            _shift(dn.scatter_dims_to_operand_dims),
            (0, *_shift(dn.operand_batching_dims)),
            (0, *_shift(dn.scatter_indices_batching_dims)),
        )
        return bind(prim, x, idx, u, dimension_numbers=new, **p), 0

    prim.lower = lower
    prim.batch = batch
    prim.sharding_rule = gather_sharding.scatter_rule
    return prim


scatter_general_p = _declare_scatter("scatter_general", lax.scatter)
scatter_add_general_p = _declare_scatter("scatter_add_general", lax.scatter_add)
scatter_mul_p = _declare_scatter("scatter_mul", lax.scatter_mul)
scatter_min_p = _declare_scatter("scatter_min", lax.scatter_min)
scatter_max_p = _declare_scatter("scatter_max", lax.scatter_max)


scatter_general_p.host = scatter_host.scatter_rule(scatter_host.set_at)
scatter_add_general_p.host = scatter_host.scatter_rule(np.add.at)
scatter_mul_p.host = scatter_host.scatter_rule(np.multiply.at)
scatter_min_p.host = scatter_host.scatter_rule(np.minimum.at)
scatter_max_p.host = scatter_host.scatter_rule(np.maximum.at)


def _scatter(prim, x, idx, u, dn, mode, sorted_=False, unique=False):
    return bind(
        prim,
        x,
        idx,
        u,
        dimension_numbers=dn,
        indices_are_sorted=sorted_,
        unique_indices=unique,
        mode=mode,
    )


def _tan(t: Any, like: Any) -> Any:
    return rules.instantiate(t, to_aval(like).strip_weak())


def _read_back(ct, x, idx, u, dn, mode, fill=0) -> Any:
    """``gather`` of ``ct`` at the windows a scatter of ``u`` into ``x`` wrote."""
    sizes = _window_sizes(to_aval(x), to_aval(u), dn)
    return _gather(ct, idx, _s2g(dn), sizes, mode, fill)


@scatter_add_general_p.def_jvp
def _scatter_add_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    (x, idx, u), (tx, _, tu) = primals, tangents
    out = bind(scatter_add_general_p, x, idx, u, **p)
    if is_zero(tx) and is_zero(tu):
        return out, Zero(to_aval(out).strip_weak())
    return out, bind(scatter_add_general_p, _tan(tx, x), idx, _tan(tu, u), **p)


@scatter_add_general_p.def_vjp
def _scatter_add_vjp(
    ct: Any, x: Any, idx: Any, u: Any, *, out: Any, dimension_numbers, mode, **p: Any
) -> tuple:
    if is_zero(ct):
        return None, None, None
    return ct, None, _read_back(ct, x, idx, u, dimension_numbers, mode)


@scatter_general_p.def_jvp
def _scatter_set_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    (x, idx, u), (tx, _, tu) = primals, tangents
    out = bind(scatter_general_p, x, idx, u, **p)
    if is_zero(tx) and is_zero(tu):
        return out, Zero(to_aval(out).strip_weak())
    return out, bind(scatter_general_p, _tan(tx, x), idx, _tan(tu, u), **p)


@scatter_general_p.def_vjp
def _scatter_set_vjp(
    ct: Any, x: Any, idx: Any, u: Any, *, out: Any, dimension_numbers, mode, **p: Any
) -> tuple:
    if is_zero(ct):
        return None, None, None
    ua, ca = to_aval(u), to_aval(ct)
    ct_x = _scatter(scatter_general_p, ct, idx, _zeros_as(ua, ca.dtype), dimension_numbers, mode)
    ct_u = _read_back(ct, x, idx, u, dimension_numbers, mode)
    if not p["unique_indices"]:  # only the update each position kept gets its cotangent
        won = _winners(x, idx, u, dimension_numbers, mode)
        ct_u = ew.select_n(won, sh.full(ua.shape, 0, ca.dtype), ct_u)
    return ct_x, None, ct_u


def _winners(x: Any, idx: Any, u: Any, dn: ScatterDimensionNumbers, mode: str) -> Any:
    """Where an update of a scatter (set) is the one its position kept: each scatter index
    is given an id, the ids are scattered as the updates were and read back (JAX's way)."""
    ua, i32 = to_aval(u), np.dtype(np.int32)
    ids: Any = sh.full(ua.shape, 1, i32)
    stride = 1
    for d in reversed([d for d in range(ua.ndim) if d not in dn.update_window_dims]):
        ids = ew.add(ids, ew.mul(sh.iota(i32, ua.shape, d), np.asarray(stride, i32)))
        stride *= ua.shape[d]
    placed = _scatter(scatter_general_p, sh.full(to_aval(x).shape, 0, i32), idx, ids, dn, mode)
    return ew.eq(_read_back(placed, x, idx, u, dn, mode), ids)


def _need_unique(name: str, unique: bool) -> None:
    if not unique:
        raise NotImplementedError(
            f"{name}: the derivative with respect to the updates is implemented for "
            "unique_indices=True only (as in JAX)"
        )


@scatter_mul_p.def_jvp
def _scatter_mul_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    (x, idx, u), (tx, _, tu) = primals, tangents
    out = bind(scatter_mul_p, x, idx, u, **p)
    t = Zero(to_aval(out).strip_weak())
    if not is_zero(tx):
        t = bind(scatter_mul_p, tx, idx, u, **p)
    if not is_zero(tu):
        _need_unique("scatter_mul", p["unique_indices"])
        xa = to_aval(x).strip_weak()
        placed = bind(scatter_add_general_p, sh.full(xa.shape, 0, xa.dtype), idx, tu, **p)
        t = rules.add_tangents(t, ew.mul(placed, x))
    return out, t


@scatter_mul_p.def_vjp
def _scatter_mul_vjp(ct: Any, x: Any, idx: Any, u: Any, *, out: Any, **p: Any) -> tuple:
    if is_zero(ct):
        return None, None, None
    ct_x = bind(scatter_mul_p, ct, idx, u, **p)
    ct_u = None
    if dtypes.is_inexact(to_aval(u).dtype):
        _need_unique("scatter_mul", p["unique_indices"])
        ct_u = _read_back(ew.mul(ct, x), x, idx, u, p["dimension_numbers"], p["mode"])
    return ct_x, None, ct_u


def _extremum_parts(prim: Primitive, x, idx, u, out, p) -> tuple:
    """Masks of the operand and update entries attaining ``out`` and the tie counts."""
    dn, mode = p["dimension_numbers"], p["mode"]
    xa = to_aval(out).strip_weak()
    mask_x = ew.eq(x, out)
    back = _read_back(out, x, idx, u, dn, mode, fill=np.nan)
    mask_u = ew.eq(u, back)
    fx = ew.convert_element_type(mask_x, xa.dtype)
    fu = ew.convert_element_type(mask_u, xa.dtype)
    count = ew.add(fx, bind(scatter_add_general_p, sh.full(xa.shape, 0, xa.dtype), idx, fu, **p))
    return mask_x, mask_u, count


def _extremum_rules(prim: Primitive) -> None:
    def jvp(primals: list, tangents: list, **p: Any) -> tuple:
        (x, idx, u), (tx, _, tu) = primals, tangents
        out = bind(prim, x, idx, u, **p)
        oa = to_aval(out).strip_weak()
        if is_zero(tx) and is_zero(tu):
            return out, Zero(oa)
        mask_x, mask_u, count = _extremum_parts(prim, x, idx, u, out, p)
        tx, tu = _tan(tx, x), _tan(tu, u)
        zx = sh.full(oa.shape, 0, oa.dtype)
        zu = sh.full(to_aval(tu).shape, 0, oa.dtype)
        tot = ew.add(
            ew.select_n(mask_x, zx, tx),
            bind(scatter_add_general_p, zx, idx, ew.select_n(mask_u, zu, tu), **p),
        )
        return out, ew.div(tot, count)

    def vjp(ct: Any, x: Any, idx: Any, u: Any, *, out: Any, **p: Any) -> tuple:
        if is_zero(ct):
            return None, None, None
        mask_x, mask_u, count = _extremum_parts(prim, x, idx, u, out, p)
        ca = to_aval(ct)
        ctc = ew.div(ct, count)
        ct_x = ew.select_n(mask_x, sh.full(ca.shape, 0, ca.dtype), ctc)
        back = _read_back(ctc, x, idx, u, p["dimension_numbers"], p["mode"])
        ct_u = ew.select_n(mask_u, sh.full(to_aval(back).shape, 0, ca.dtype), back)
        return ct_x, None, ct_u

    prim.jvp = jvp
    prim.vjp = vjp


_extremum_rules(scatter_min_p)
_extremum_rules(scatter_max_p)


def _sp(dn, mode="fill", unique=False) -> dict:
    return {
        "dimension_numbers": dn,
        "indices_are_sorted": False,
        "unique_indices": unique,
        "mode": mode,
    }


def _scatter_examples(unique_only: bool, smooth: bool = True):
    def examples(rng: np.random.Generator) -> list[Example]:
        i32 = np.int32
        rows = ScatterDimensionNumbers((1,), (0,), (0,))
        pts = ScatterDimensionNumbers((), (0, 1), (0, 1))
        bat = ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))
        # distinct values so extrema do not tie
        perm = rng.permutation(12).astype(np.float64) / 5.0 - 1.0
        out = [
            Example(
                [perm.reshape(4, 3), np.array([[3], [0]], i32), rand(rng, (2, 3), lo=-3.0)],
                _sp(rows, unique=True),
                diff_argnums=(0, 2),
                smooth=smooth,
            ),
            Example(
                [
                    rand(rng, (3, 4)),
                    np.array([[[1], [3]], [[0], [2]], [[2], [5]]], i32),
                    rand(rng, (3, 2), lo=3.0, hi=4.0),
                ],
                _sp(bat, unique=True),
                diff_argnums=(0, 2),
                smooth=smooth,
            ),
        ]
        if not unique_only:
            out.append(  # clamped out-of-bounds indices
                Example(
                    [rand(rng, (3, 3)), np.array([[0, 5], [-1, 1], [2, 0]], i32), rand(rng, (3,))],
                    _sp(pts, "clip"),
                    diff_argnums=(0, 2),
                    smooth=smooth,
                )
            )
            out.append(
                Example(
                    [
                        rand(rng, (3, 3)),
                        np.array([[0, 1], [2, 2], [0, 1]], i32),
                        np.array([0.5, -1.5, 2.5]),
                    ],
                    _sp(pts, "clip"),
                    diff_argnums=(0, 2),
                    smooth=smooth,
                )
            )
        return out

    return examples


scatter_general_p.examples = _scatter_examples(True)
scatter_add_general_p.examples = _scatter_examples(False)
scatter_mul_p.examples = _scatter_examples(True)
scatter_min_p.examples = _scatter_examples(False, smooth=False)
scatter_max_p.examples = _scatter_examples(False, smooth=False)


# --------------------------------------------------------------------------- top_k

# The indices are a non-differentiable primitive; the values are a gather at them, so
# their derivatives are the gather's (a take along the last axis and its scatter-add).
top_k_indices_p = Primitive("top_k_indices", family=FAMILY, differentiable=False)


@top_k_indices_p.def_abstract_eval
def _top_k_abstract_eval(x: Aval, *, k: int) -> Aval:
    if x.ndim == 0:
        raise TypeError(f"top_k: the operand must have at least one dimension, got {x}")
    if not 0 <= k <= x.shape[-1]:
        raise ValueError(f"top_k: k={k} must be in [0, {x.shape[-1]}] for an operand {x}")
    if dtypes.kind(x.dtype) == 3:
        raise TypeError(f"top_k: complex operands are not supported, got {x}")
    if x.shape[-1] > 2**31:  # (JAX's words)
        raise ValueError(
            "top_k returns int32 indices, which will overflow for array dimensions larger "
            f"than the maximum int32 ({2**31 - 1}). Got operand {x}"
        )
    return Aval((*x.shape[:-1], k), np.dtype(np.int32), False)


@top_k_indices_p.def_lower
def _top_k_lower(x: Any, *, k: int) -> Any:
    return lax.top_k(x, k)[1]


@top_k_indices_p.def_host
def _top_k_host(x: Any, *, k: int) -> Any:
    # XLA ranks floats in IEEE total order (NaN > inf, 0.0 > -0.0, -inf > -NaN), ties by
    # index: a stable sort of the order-reversed keys
    x = np.asarray(x)
    if x.dtype.kind not in "iub":
        i = x.view(np.dtype(f"i{x.dtype.itemsize}"))
        x = i ^ ((i >> (8 * x.dtype.itemsize - 1)) & np.iinfo(i.dtype).max)
    return (~x).argsort(axis=-1, kind="stable")[..., :k]


@top_k_indices_p.def_batch
def _top_k_batch(args: list, dims: list, *, k: int) -> tuple:
    (x,), (d,) = args, dims
    nd = to_aval(x).ndim
    if d == nd - 1:
        x, d = rules.moveaxis(x, d, 0), 0
    return top_k_indices_p.bind(x, k=k), d


@top_k_indices_p.def_examples
def _top_k_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rng.permutation(6).astype(np.float64)], {"k": 3}),
        Example([rng.permutation(12).reshape(3, 4).astype(np.int32)], {"k": 2}),
        # ties go to the lower index; NaN ranks above inf, 0.0 above -0.0 (total order)
        Example([np.array([[1.0, np.nan, 3.0, 3.0, -0.0, 0.0, np.inf]])], {"k": 5}),
    ]


def _along_last(nd: int) -> GatherDimensionNumbers:
    lead = tuple(range(nd - 1))
    return GatherDimensionNumbers((), (nd - 1,), (nd - 1,), lead, lead)


def take_last(x: Any, idx: Any) -> Any:
    """``x[..., idx]`` along the last axis with per-row ``idx`` (take_along_axis)."""
    nd = to_aval(x).ndim
    ii = sh.expand_dims(idx, (to_aval(idx).ndim,))
    return _gather(x, ii, _along_last(nd), (1,) * nd, "promise_in_bounds")


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The ``k`` largest entries along the last axis and their ``int32`` indices."""
    idx = top_k_indices_p.bind(operand, k=operator.index(k))
    return take_last(operand, idx), idx
