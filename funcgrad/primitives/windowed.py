"""Primitives of the ``windowed`` family: ``reduce_window_sum``, ``reduce_window_max``,
``reduce_window_min`` (pooling), as ``jax.lax``'s reduce-window family.

Each takes one operand and the static window description ``window_dimensions``,
``window_strides``, ``padding`` (``(lo, hi)`` pairs), ``base_dilation`` and
``window_dilation``. Forward evaluation lowers to ``lax.reduce_window``. The
derivative rules view the reduction as a combination of the ``K`` strided slices
of the padded, base-dilated operand, one per window offset (``K`` is the window
size, small for pooling): the sum's transpose pads each cotangent back into place;
the max/min rules route each output's tangent or cotangent to the first element of
its window that attains the extremum (ties go to the earliest offset). Everything a
rule emits is funcgrad ``pad``/``slice``/``select_n``/``add``, so it is
differentiable and batchable again.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh

FAMILY = "windowed"

_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")


def _out_shape(name: str, x: Aval, p: dict) -> tuple[int, ...]:
    nd = x.ndim
    for k in _PARAMS:
        if len(p[k]) != nd:
            raise TypeError(
                f"{name}: {k}={p[k]} must have one entry per dimension of the operand {x}"
            )
    for k in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        if any(v < 1 for v in p[k]):  # (JAX's type and words)
            raise TypeError(
                f"{name}: {k} must have every element be strictly positive, got {p[k]} "
                f"(operand {x})"
            )
    out = []
    for n, w, s, (lo, hi), b, wd in zip(x.shape, *(p[k] for k in _PARAMS)):
        padded = lo + hi + (max(n - 1, 0) * b + 1 if n else 0)
        eff = (w - 1) * wd + 1
        out.append(max((padded - eff) // s + 1, 0) if padded >= eff else 0)
    return tuple(out)


def _params(p: dict) -> tuple:
    return tuple(p[k] for k in _PARAMS)


def _init(name: str, dtype: np.dtype) -> Any:
    """Identity of the reduction in ``dtype``."""
    dtype = np.dtype(dtype)
    if name == "reduce_window_sum":
        return np.zeros((), dtype)
    return dtypes.extreme(dtype, largest=name == "reduce_window_min")


def _windows(xp_shape: tuple, out: tuple, p: dict) -> list[tuple]:
    """``(start, limit, strides)`` of the strided slice of the padded operand for each
    window offset; each slice has the output's shape."""
    res = []
    wins, strides, wdil = p["window_dimensions"], p["window_strides"], p["window_dilation"]
    for k in itertools.product(*(range(w) for w in wins)):
        start = tuple(ki * d for ki, d in zip(k, wdil))
        limit = tuple(st + (o - 1) * s + 1 if o else st for st, o, s in zip(start, out, strides))
        res.append((start, limit, tuple(strides)))
    return res


def _pad_config(p: dict) -> tuple:
    return tuple((lo, hi, b - 1) for (lo, hi), b in zip(p["padding"], p["base_dilation"]))


def _padded(x: Any, value: Any, p: dict) -> Any:
    config = _pad_config(p)
    if all(c == (0, 0, 0) for c in config):
        return x
    return sh.pad(x, value, config)


def _unpad(g: Any, p: dict) -> Any:
    """Transpose of :func:`_padded` (the padding value gets no cotangent)."""
    config = _pad_config(p)
    ga = to_aval(g)
    zero = np.zeros((), ga.dtype)
    if any(lo or hi for lo, hi, _ in config):
        g = sh.pad(g, zero, tuple((-lo, -hi, 0) for lo, hi, _ in config))
    if any(i for _, _, i in config):
        ga = to_aval(g)
        g = sh.slice(g, (0,) * ga.ndim, ga.shape, tuple(i + 1 for _, _, i in config))
    return g


def _place(ct: Any, xp_shape: tuple, win: tuple) -> Any:
    """Transpose of ``slice(xp, *win)``: ``ct`` padded back into ``xp``'s shape."""
    start, limit, strides = win
    config = tuple((st, n - li, s - 1) for st, li, s, n in zip(start, limit, strides, xp_shape))
    return sh.pad(ct, np.zeros((), to_aval(ct).dtype), config)


def _sum_transpose(ct: Any, x_aval: Aval, p: dict) -> Any:
    xp_shape = tuple(
        lo + hi + ((n - 1) * b + 1 if n else 0)
        for n, (lo, hi), b in zip(x_aval.shape, p["padding"], p["base_dilation"])
    )
    out = to_aval(ct).shape
    acc = None
    for win in _windows(xp_shape, out, p):
        g = _place(ct, xp_shape, win)
        acc = g if acc is None else ew.add(acc, g)
    if acc is None or 0 in out:
        return sh.full(x_aval.shape, 0, to_aval(ct).dtype)
    return _unpad(acc, p)


def _first_masks(slices: list, out: Any) -> list:
    """For each window offset, where it is the first to attain ``out``."""
    masks, taken = [], None
    for s in slices:
        hit = ew.eq(s, out)
        if taken is None:
            masks.append(hit)
            taken = hit
        else:
            first = ew.bitwise_and(hit, ew.bitwise_not(taken))
            masks.append(first)
            taken = ew.bitwise_or(taken, hit)
    return masks


def _chooser_masks(x: Any, out: Any, name: str, p: dict) -> tuple[list, list, tuple]:
    xa = to_aval(x)
    xp = _padded(x, _init(name, xa.dtype), p)
    xp_shape = to_aval(xp).shape
    wins = _windows(xp_shape, to_aval(out).shape, p)
    slices = [sh.slice(xp, *w) for w in wins]
    return _first_masks(slices, out), wins, xp_shape


def host_pad(x: np.ndarray, value: Any, config: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """(host tier) ``x`` padded as ``lax.pad`` does: per dimension ``(lo, hi, interior)``,
    ``interior`` copies of ``value`` between neighbours, negative ``lo``/``hi`` cropping."""
    if all(lo == 0 and hi == 0 and it == 0 for lo, hi, it in config):
        return x
    shape, place, crop = [], [], []
    for n, (lo, hi, it) in zip(x.shape, config):
        dilated = n + (n - 1) * it if n else 0
        plo, phi = max(lo, 0), max(hi, 0)
        size = plo + dilated + phi
        shape.append(size)
        place.append(slice(plo, plo + dilated, it + 1))
        crop.append(slice(max(-lo, 0), max(size - max(-hi, 0), max(-lo, 0))))
    out = np.full(shape, value, x.dtype)
    out[tuple(place)] = x
    if any(lo < 0 or hi < 0 for lo, hi, _ in config):
        out = out[tuple(crop)]
    return out


def _declare(name: str, lower_op: Any, allowed: str) -> Primitive:
    prim = Primitive(name, family=FAMILY)

    def abstract_eval(x: Aval, **p: Any) -> Aval:
        rules.check_dtype(name, x, allowed)
        return Aval(_out_shape(name, x, p), x.dtype, x.weak_type)

    def lower(x: Any, **p: Any) -> Any:
        xa = to_aval(x)
        x = ew.lax_convert(x, xa.dtype, xa.weak_type) if isinstance(x, (int, float)) else x
        win, strides, padding, bdil, wdil = _params(p)
        return lax.reduce_window(
            x, _init(name, xa.dtype), lower_op, win, strides, padding, bdil, wdil
        )

    def batch(args: list, dims: list, **p: Any) -> tuple:
        (x,), (d,) = args, dims
        q = {k: (*v[:d], (0, 0) if k == "padding" else 1, *v[d:]) for k, v in p.items()}
        return bind(prim, x, **q), d

    prim.abstract_eval = abstract_eval
    prim.lower = lower
    prim.batch = batch
    prim.sharding_rule = sharding_types.varying_shape_rule
    return prim


reduce_window_sum_p = _declare("reduce_window_sum", lax.add, "num")
reduce_window_max_p = _declare("reduce_window_max", lax.max, "noncomplex")
reduce_window_min_p = _declare("reduce_window_min", lax.min, "noncomplex")


# --------------------------------------------------------------------------- host rules


def _host_rule(name: str, op: np.ufunc) -> Any:
    """The host rule of ``name``: the operand padded with the reduction's identity (and
    base-dilated), then ``op`` accumulated over strided slices, one per window offset. The
    sum takes the offsets in XLA's order (row-major) while there are few; max and min (and
    a sum over a large window) reduce one dimension at a time (a window is a product of
    per-dimension windows), ``sum(w)`` slices instead of ``prod(w)``."""

    def rule(x: Any, **p: Any) -> np.ndarray:
        x = np.asarray(x)  # (a weakly typed Python scalar: 0-d)
        init = _init(name, x.dtype)
        win, strides, padding, bdil, wdil = _params(p)
        if x.ndim == 0:
            return x.copy()
        xp = host_pad(x, init, [(lo, hi, b - 1) for (lo, hi), b in zip(padding, bdil)])
        eff = [(w - 1) * d + 1 for w, d in zip(win, wdil)]
        out = [(n - e) // s + 1 if n >= e else 0 for n, e, s in zip(xp.shape, eff, strides)]
        if 0 in out:
            return np.full(out, init, x.dtype)
        if name == "reduce_window_sum" and math.prod(win) <= 64:
            acc = None
            for k in itertools.product(*(range(w) for w in win)):
                v = xp[
                    tuple(
                        slice(j * d, j * d + (o - 1) * s + 1, s)
                        for j, d, o, s in zip(k, wdil, out, strides)
                    )
                ]
                acc = v.copy() if acc is None else op(acc, v, out=acc)
            return acc
        for ax, (w, d, o, s) in enumerate(zip(win, wdil, out, strides)):
            if w == 1 and s == 1 and o == xp.shape[ax]:
                continue
            acc = None
            for j in range(w):
                index = [slice(None)] * xp.ndim
                index[ax] = slice(j * d, j * d + (o - 1) * s + 1, s)
                v = xp[tuple(index)]
                acc = v.copy() if acc is None else op(acc, v, out=acc)
            xp = acc
        return xp if xp is not x else x.copy()

    return rule


reduce_window_sum_p.host = _host_rule("reduce_window_sum", np.add)
reduce_window_max_p.host = _host_rule("reduce_window_max", np.maximum)
reduce_window_min_p.host = _host_rule("reduce_window_min", np.minimum)


rules.def_linear(reduce_window_sum_p)


@reduce_window_sum_p.def_vjp
def _sum_vjp(ct: Any, x: Any, *, out: Any, **p: Any) -> tuple:
    if is_zero(ct):
        return (None,)
    return (_sum_transpose(ct, to_aval(x), p),)


def _chooser_rules(prim: Primitive) -> None:
    name = prim.name

    def jvp(primals: list, tangents: list, **p: Any) -> tuple:
        (x,), (t,) = primals, tangents
        out = bind(prim, x, **p)
        oa = to_aval(out).strip_weak()
        if is_zero(t) or 0 in oa.shape:
            return out, Zero(oa) if is_zero(t) else sh.full(oa.shape, 0, oa.dtype)
        masks, wins, _ = _chooser_masks(x, out, name, p)
        tp = _padded(t, np.zeros((), to_aval(t).dtype), p)
        zero = np.zeros((), to_aval(t).dtype)
        acc = None
        for m, w in zip(masks, wins):
            g = ew.select_n(m, sh.full(oa.shape, zero, oa.dtype), sh.slice(tp, *w))
            acc = g if acc is None else ew.add(acc, g)
        return out, acc

    def vjp(ct: Any, x: Any, *, out: Any, **p: Any) -> tuple:
        if is_zero(ct):
            return (None,)
        xa = to_aval(x)
        ca = to_aval(ct)
        if 0 in ca.shape:
            return (sh.full(xa.shape, 0, ca.dtype),)
        masks, wins, xp_shape = _chooser_masks(x, out, name, p)
        zeros = sh.full(ca.shape, 0, ca.dtype)
        acc = None
        for m, w in zip(masks, wins):
            g = _place(ew.select_n(m, zeros, ct), xp_shape, w)
            acc = g if acc is None else ew.add(acc, g)
        return (_unpad(acc, p),)

    prim.jvp = jvp
    prim.vjp = vjp


_chooser_rules(reduce_window_max_p)
_chooser_rules(reduce_window_min_p)


def _window_examples(smooth: bool) -> Any:
    def examples(rng: np.random.Generator) -> list[Example]:
        def ps(win, strides, padding, bdil=None, wdil=None):
            n = len(win)
            return {
                "window_dimensions": win,
                "window_strides": strides,
                "padding": padding,
                "base_dilation": bdil or (1,) * n,
                "window_dilation": wdil or (1,) * n,
            }

        # distinct values (a permutation) so the extremum of each window is unique
        def distinct(shape):
            return rng.permutation(math.prod(shape)).reshape(shape).astype(np.float64) / 7.0

        return [
            Example([distinct((5,))], ps((2,), (1,), ((0, 0),)), smooth=smooth),
            Example([distinct((4, 5))], ps((2, 3), (2, 1), ((1, 0), (1, 1))), smooth=smooth),
            Example(
                [distinct((3, 4))],
                ps((2, 2), (1, 2), ((0, 1), (1, 0)), (2, 1), (1, 2)),
                smooth=smooth,
            ),
            # a large window (the host rule reduces it one dimension at a time)
            Example([distinct((10, 9))], ps((9, 8), (1, 1), ((0, 0), (0, 0))), smooth=smooth),
        ]

    return examples


reduce_window_sum_p.examples = _window_examples(True)
reduce_window_max_p.examples = _window_examples(False)
reduce_window_min_p.examples = _window_examples(False)


def _norm(
    name: str, x: Any, window_dimensions, window_strides, padding, base_dilation, window_dilation
) -> dict:
    nd = to_aval(x).ndim

    def ints(k: str, v: Any, default: int) -> tuple[int, ...]:
        if v is None:
            return (default,) * nd
        try:
            return tuple(operator.index(i) for i in v)
        except TypeError as e:
            raise TypeError(f"{name}: {k} must be a sequence of ints, got {v!r}") from e

    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: padding must be (lo, hi) pairs, got {padding!r}") from e
    return {
        "window_dimensions": ints("window_dimensions", window_dimensions, 1),
        "window_strides": ints("window_strides", window_strides, 1),
        "padding": pads,
        "base_dilation": ints("base_dilation", base_dilation, 1),
        "window_dilation": ints("window_dilation", window_dilation, 1),
    }


def _wrapper(prim: Primitive):
    def f(
        operand: Any,
        window_dimensions: Sequence[int],
        window_strides: Sequence[int],
        padding: Sequence[tuple[int, int]],
        base_dilation: Sequence[int] | None = None,
        window_dilation: Sequence[int] | None = None,
    ) -> Any:
        p = _norm(
            prim.name,
            operand,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        )
        return bind(prim, operand, **p)

    f.__name__ = prim.name
    f.__doc__ = f"``{prim.name}`` of ``operand`` with explicit ``(lo, hi)`` padding."
    return f


reduce_window_sum = _wrapper(reduce_window_sum_p)
reduce_window_max = _wrapper(reduce_window_max_p)
reduce_window_min = _wrapper(reduce_window_min_p)
