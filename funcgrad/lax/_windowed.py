"""``jax.lax.reduce_window`` (pooling) and the shape helpers stax-style code uses."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import jax

from funcgrad.core.interp import to_aval
from funcgrad.lax._conv import conv_dimension_numbers, padtype_to_pads
from funcgrad.lax._reductions import is_identity, monoid_of, trace_computation
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import windowed as win
from funcgrad.primitives.reduce_general import reduce_window_general

__all__ = ["conv_general_shape_tuple", "reduce_window", "reduce_window_shape_tuple"]

_PRIMS = {"add": win.reduce_window_sum, "max": win.reduce_window_max, "min": win.reduce_window_min}
_OPS = {"add": ew.add, "max": ew.max, "min": ew.min}


def _dilate(n: int, d: int) -> int:
    return 0 if n == 0 else 1 + d * (n - 1)


def _pads(
    name: str,
    shape: Sequence[int],
    window: Sequence[int],
    strides: Sequence[int],
    padding: Any,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> tuple:
    if isinstance(padding, str):
        dshape = [_dilate(n, b) for n, b in zip(shape, base_dilation)]
        dwin = [_dilate(w, d) for w, d in zip(window, window_dilation)]
        return tuple(tuple(p) for p in padtype_to_pads(dshape, dwin, strides, padding))
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"{name}: padding must be 'SAME', 'VALID' or (lo, hi) pairs, got {padding!r}{here()}"
        ) from e


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduce each window of ``operand`` with ``computation``, as pooling layers do.

    ``add``, ``max`` and ``min`` (from ``funcgrad.lax``, ``jax.lax`` or ``operator``) use
    their own primitives (padding adds nothing, a non-identity ``init_value`` is combined
    once with the result); any other computation, and a pytree of operands, is traced into
    a program (``reduce_window_general``: forward-mode differentiable only, as in
    ``jax.lax``).
    """
    monoid = monoid_of(computation)
    if monoid not in _PRIMS or isinstance(operand, (list, tuple, dict)):
        return _general(
            operand,
            init_value,
            computation,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        )
    operand = prep(operand, "reduce_window")
    a = to_aval(operand)
    nd = a.ndim
    ones = (1,) * nd
    window = tuple(operator.index(w) for w in window_dimensions)
    if len(window) != nd:
        raise TypeError(
            f"reduce_window: window_dimensions {window} must have one entry per "
            f"dimension of the operand {a}{here()}"
        )
    strides = ones if window_strides is None else tuple(window_strides)
    bdil = ones if base_dilation is None else tuple(base_dilation)
    wdil = ones if window_dilation is None else tuple(window_dilation)
    pads = _pads("reduce_window", a.shape, window, strides, padding, bdil, wdil)
    prim = _PRIMS[monoid]
    if is_identity(init_value, monoid, a.dtype):
        return prim(operand, window, strides, pads, bdil, wdil)
    init = ew.convert_element_type(prep(init_value, "reduce_window"), a.dtype)
    if to_aval(init).shape != ():  # (JAX's words)
        raise TypeError(
            "reduce_window expected init_values to be scalars but init_values have shapes "
            f"[{to_aval(init).shape}].{here()}"
        )
    out = prim(operand, window, strides, pads, bdil, wdil)
    return _OPS[monoid](out, init)


def _general(
    operands: Any,
    init_values: Any,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None,
    padding: Any,
    base_dilation: Sequence[int] | None,
    window_dilation: Sequence[int] | None,
) -> Any:
    """``reduce_window`` with any computation and a pytree of operands."""
    xs, tree = jax.tree_util.tree_flatten(operands)
    inits, tree2 = jax.tree_util.tree_flatten(init_values)
    if tree != tree2:
        raise ValueError(
            f"reduce_window: operands and init_values must have the same structure, got "
            f"{tree} and {tree2}{here()}"
        )
    xs = [prep(x, "reduce_window") for x in xs]
    inits = [prep(i, "reduce_window") for i in inits]
    # init shapes, dtypes and operand shapes are checked by the primitive's abstract eval
    xa = [to_aval(x) for x in xs]
    shape = xa[0].shape
    nd = len(shape)
    ones = (1,) * nd
    window = tuple(operator.index(w) for w in window_dimensions)
    strides = ones if window_strides is None else tuple(operator.index(s) for s in window_strides)
    bdil = ones if base_dilation is None else tuple(operator.index(b) for b in base_dilation)
    wdil = ones if window_dilation is None else tuple(operator.index(d) for d in window_dilation)
    for k, v in (("window_dimensions", window), ("window_strides", strides)):
        if len(v) != nd:
            raise TypeError(
                f"reduce_window: got the wrong number of {k} for operand: got operand shape "
                f"{shape} with {k} {v}{here()}"
            )
    if any(w < 1 for w in window):
        raise TypeError(
            f"reduce_window: window_dimensions must have every element be strictly "
            f"positive, got {window}{here()}"
        )
    pads = _pads("reduce_window", shape, window, strides, padding, bdil, wdil)
    prog, consts, out_tree = trace_computation(
        "reduce_window", computation, [a.dtype for a in xa], tree
    )
    if out_tree != tree:
        raise ValueError(
            "reduce_window output must have the same tree structure as the operands "
            f"{tree} vs. {out_tree}{here()}"
        )
    params = {
        "window_dimensions": window,
        "window_strides": strides,
        "padding": pads,
        "base_dilation": bdil,
        "window_dilation": wdil,
    }
    outs = reduce_window_general(xs, inits, prog, consts, params)
    return jax.tree_util.tree_unflatten(out_tree, outs)


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """Output shape of :func:`reduce_window` with explicit padding."""
    shape = list(operand_shape)
    if base_dilation is not None:
        shape = [_dilate(n, b) for n, b in zip(shape, base_dilation)]
    window = list(window_dimensions)
    if window_dilation is not None:
        window = [_dilate(w, d) for w, d in zip(window, window_dilation)]
    padded = [n + lo + hi for n, (lo, hi) in zip(shape, padding)]
    return tuple(
        max((p - w) // s + 1, 0) if p >= w else 0 for p, w, s in zip(padded, window, window_strides)
    )


def conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """Output shape of :func:`conv_general_dilated` (no dilation), in the output layout."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = [lhs_shape[d] for d in dn.lhs_spec]
    rhs = [rhs_shape[d] for d in dn.rhs_spec]
    if isinstance(padding, str):
        padding = padtype_to_pads(lhs[2:], rhs[2:], window_strides, padding)
    spatial = [
        max((n + lo + hi - w) // s + 1, 0)
        for n, w, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, padding)
    ]
    out = [lhs[0], rhs[0], *spatial]
    res = [0] * len(out)
    for pos, d in enumerate(dn.out_spec):
        res[d] = out[pos]
    return tuple(res)
