"""``jax.lax.reduce_window`` (pooling) and the shape helpers stax-style code uses."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.core.interp import to_aval
from funcgrad.lax._conv import conv_dimension_numbers, padtype_to_pads
from funcgrad.lax._reductions import is_identity, monoid_of
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import windowed as win

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
    """Reduce each window of ``operand`` with ``computation`` (``add``, ``max`` or
    ``min``, from ``funcgrad.lax``, ``jax.lax`` or ``operator``), as pooling layers do.

    Each window's reduction starts from ``init_value`` (padding adds nothing, as in
    ``jax.lax``): one ``reduce_window_*`` primitive, combined once with a non-identity
    ``init_value``.
    """
    monoid = monoid_of(computation)
    if monoid not in _PRIMS:
        raise NotImplementedError(
            f"reduce_window: computation {computation!r} is not add, max or min{here()}"
        )
    if isinstance(operand, (list, tuple)):
        raise NotImplementedError(f"reduce_window: one operand only (got a sequence){here()}")
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
    if to_aval(init).shape != ():
        raise TypeError(f"reduce_window: init_value must be a scalar{here()}")
    out = prim(operand, window, strides, pads, bdil, wdil)
    return _OPS[monoid](out, init)


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
