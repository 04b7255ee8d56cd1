"""Differences, integration, interpolation and convolution.

Composites of funcgrad.numpy operations: ``convolve``/``correlate`` are one
``conv_general_dilated`` (a 1-D cross-correlation), ``interp`` is a ``searchsorted`` and two
gathers.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.numpy import _creation, _indexing, _info, _reductions, _shape, _sorting, _ufuncs
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    check_arraylike,
    convert,
    here,
    normalize_axis,
    out,
)
from funcgrad.numpy._core import promote as _promote
from funcgrad.numpy._setops import searchsorted
from funcgrad.primitives.conv import ConvDimensionNumbers, conv_general_dilated


def _inexact(name: str, *args: Any) -> list:
    return [as_array(a, name) for a in _promote(name, *args, to="inexact")]


# --------------------------------------------------------------------------- differences


def _slice_axis(x: Any, axis: int, start: int | None, stop: int | None) -> Any:
    idx = [slice(None)] * aval(x).ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def diff(
    a: ArrayLike,
    n: int = 1,
    axis: int = -1,
    prepend: ArrayLike | None = None,
    append: ArrayLike | None = None,
) -> Any:
    """``n``-th discrete difference along ``axis`` (``not_equal`` for booleans)."""
    x = as_array(a, "diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}{here()}")
    if aval(x).ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {x}")
    if n == 0:
        return out(x)
    ax = normalize_axis(axis, aval(x).ndim, "diff")

    def edge(extra: Any) -> Any:
        e = _creation.asarray(extra)
        if aval(e).ndim == 0:
            shape = list(aval(x).shape)
            shape[ax] = 1
            e = _shape.broadcast_to(e, tuple(shape))
        return e

    parts = [] if prepend is None else [edge(prepend)]
    parts.append(x)
    if append is not None:
        parts.append(edge(append))
    if len(parts) > 1:
        x = _shape.concatenate(parts, axis=ax)
    for _ in range(n):
        hi, lo = _slice_axis(x, ax, 1, None), _slice_axis(x, ax, None, -1)
        x = _ufuncs.not_equal(hi, lo) if aval(x).dtype == np.bool_ else hi - lo
    return out(x)


# PyTorch's diff: its order refused below 0 with its own text, one int dim, the prepended
# and appended tensors checked against the input (PyTorch's texts; of its number of
# dimensions, so promoted as NumPy's); its node is the last subtraction's (a copy's for
# order 0)
ArrayRow(
    diff,
    torch=TorchArrayForm(
        "SubBackward0",
        (
            TorchParam(
                "n", "n", "int", 1, at_least=(0, "order must be non-negative but got {value}")
            ),
            TorchParam("dim", "axis", "dim", -1),
            TorchParam("prepend", "prepend", "tensor", None),
            TorchParam("append", "append", "tensor", None),
        ),
        ndim=(1, None, "diff expects input to be at least one-dimensional"),
        nodes=(("n", 0, "CopyBackwards"),),
        concat=(
            "dim",
            "diff expects prepend or append to be the same dimension as input",
            "diff expects the shape of tensor to prepend or append to match that of input "
            "except along the differencing dim",
        ),
        samples=(
            ((3, 4), ()),
            ((3, 4), (2, 0)),
            ((4,), (1, -1, (2,))),
            ((2, 3), (1, 1, None, (2, 1))),
        ),
    ),
)


def ediff1d(
    ary: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None
) -> Any:
    """Differences of consecutive elements of the flattened array, with optional ends."""
    check_arraylike("ediff1d", ary)
    x = _shape.ravel(ary)
    d = x[1:] - x[:-1]
    parts = []
    if to_begin is not None:
        parts.append(_shape.ravel(_creation.asarray(to_begin, dtype=aval(d).dtype)))
    parts.append(d)
    if to_end is not None:
        parts.append(_shape.ravel(_creation.asarray(to_end, dtype=aval(d).dtype)))
    return out(_shape.concatenate(parts) if len(parts) > 1 else d)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: ArrayLike = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (samples at ``x`` or spaced
    ``dx``)."""
    if x is None:
        (yy, d) = _inexact("trapezoid", y, dx)
    else:
        yy, d = _inexact("trapezoid", y, x)
    ax = normalize_axis(axis, aval(yy).ndim, "trapezoid")
    if x is None and aval(d).ndim > 0:
        # an array of spacings broadcasts against the pairs' sums as NumPy's (trailing
        # axes aligned, y's own orientation), spelt out for rank promotion "raise"
        pairs = _shape.moveaxis(yy, ax, -1)
        pairs = _shape.moveaxis(pairs[..., 1:] + pairs[..., :-1], -1, ax)
        shape = np.broadcast_shapes(aval(d).shape, aval(pairs).shape)
        lead = len(shape) - aval(pairs).ndim
        prod = _shape.broadcast_to(d, shape) * _shape.broadcast_to(pairs, shape)
        return out(0.5 * _reductions.sum(prod, axis=ax + lead))
    yy = _shape.moveaxis(yy, ax, -1)
    if x is not None:
        if aval(d).ndim == 1:
            d = diff(d)
        else:
            d = diff(_shape.moveaxis(d, ax, -1), axis=-1)
    return out(0.5 * _reductions.sum(d * (yy[..., 1:] + yy[..., :-1]), axis=-1))


# PyTorch's trapezoid: two overloads, sample points ``x`` or a keyword-only spacing ``dx``
# (not both), integer and bool samples in the default float; its node is the last product's
# (``* dx``) or the last division's (``/ 2``, with ``x``); ``trapz`` is its older name
ArrayRow(
    trapezoid,
    torch=TorchArrayForm(
        "DivBackward1",
        (
            TorchParam(
                "x",
                "x",
                "tensor",
                None,
                length=("dim", "trapezoid: There must be one `x` value for each sample point"),
                # (PyTorch differences a 0-d x into nothing, then fails to broadcast)
                ndim=(1, None, "The size of tensor b (0) of a 0-d `x` must match the samples'"),
            ),
            TorchParam(
                "dx",
                "dx",
                "optional_float",
                None,
                keyword_only=True,
                bool_error="trapezoid: Currently, we only support dx as a real number.",
            ),
            TorchParam("dim", "axis", "dim", -1, keyword_only=True),
        ),
        input="y",
        method=False,
        exclusive=("x", "dx"),
        promote="default_float",
        scalar_error="Dimension specified as {dim} but tensor has no dimensions",
        empty_along="dim",
        bool_error=(
            RuntimeError,
            "trapezoid: received a bool input for `y`, but bool is not supported",
            "trapezoid: received a bool input for `x` or `y`, but bool is not supported",
        ),
        nodes=(("x", None, "MulBackward1"),),
        aliases=("trapz",),
        samples=(((5,), ()), ((3, 4), ((4,),)), ((2, 3), ((2, 3),))),
        out=False,  # (PyTorch's takes no ``out=``)
        overloads=True,
    ),
)


def gradient(
    f: ArrayLike,
    *varargs: ArrayLike,
    axis: int | Sequence[int] | None = None,
    edge_order: int | None = None,
) -> Any:
    """Gradient by second-order central differences inside and first-order one-sided
    differences at the edges (``varargs``: scalar spacings or coordinate arrays)."""
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    (y,) = _inexact("gradient", f)
    nd = aval(y).ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, int):
        axes = (normalize_axis(axis, nd, "gradient"),)
    else:
        axes = tuple(normalize_axis(a, nd, "gradient") for a in axis)
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and _info.ndim_of(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments to jnp.gradient")
    res = []
    for ax, h in zip(axes, spacing):
        n = aval(y).shape[ax]
        if n < 2:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, at least "
                f"(edge_order + 1) elements are required.{here()}"
            )
        t = _shape.moveaxis(y, ax, -1)
        if _info.ndim_of(h) == 0:
            inner = (t[..., 2:] - t[..., :-2]) / (2.0 * h)
            first = (t[..., 1:2] - t[..., :1]) / h
            last = (t[..., -1:] - t[..., -2:-1]) / h
        else:
            xs = _creation.asarray(h, dtype=aval(t).dtype)
            dx = diff(xs)
            d1, d2 = dx[:-1], dx[1:]
            a = -d2 / (d1 * (d1 + d2))
            b = (d2 - d1) / (d1 * d2)
            c = d1 / (d2 * (d1 + d2))
            # coefficients of t's rank (so the rank-promotion option is not involved)
            lead = (1,) * (aval(t).ndim - 1)
            a, b, c, dx = (_shape.reshape(v, lead + aval(v).shape) for v in (a, b, c, dx))
            inner = a * t[..., :-2] + b * t[..., 1:-1] + c * t[..., 2:]
            first = (t[..., 1:2] - t[..., :1]) / dx[..., :1]
            last = (t[..., -1:] - t[..., -2:-1]) / dx[..., -1:]
        g = _shape.concatenate([first, inner, last], axis=-1)
        res.append(out(_shape.moveaxis(g, -1, ax)))
    return res[0] if len(res) == 1 else res


def unwrap(
    p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi
) -> Any:
    """Unwrap a phase by adding multiples of ``period`` where consecutive values jump by more
    than ``discont`` (default ``period / 2``)."""
    (x,) = _inexact("unwrap", p)
    ax = normalize_axis(axis, aval(x).ndim, "unwrap")
    x = _shape.moveaxis(x, ax, -1)
    if discont is None:
        discont = period / 2
    interval = period / 2
    dd = diff(x, axis=-1)
    ddmod = _ufuncs.mod(dd + interval, period) - interval
    ddmod = _ufuncs.where(_ufuncs.logical_and(ddmod == -interval, dd > 0), interval, ddmod)
    corr = _ufuncs.where(_ufuncs.abs(dd) < discont, 0, ddmod - dd)
    cum = _shape.concatenate(
        [_creation.zeros_like(x[..., :1]), _reductions.cumsum(corr, axis=-1)], axis=-1
    )
    return out(_shape.moveaxis(x + cum, -1, ax))


# --------------------------------------------------------------------------- interpolation


def interp(
    x: ArrayLike,
    xp: ArrayLike,
    fp: ArrayLike,
    left: ArrayLike | str | None = None,
    right: ArrayLike | str | None = None,
    period: ArrayLike | None = None,
) -> Any:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at
    ``x``; ``left``/``right`` (or ``"extrapolate"``) outside, ``period`` for angles."""

    if (
        _info.ndim_of(xp) != 1
        or _info.ndim_of(fp) != 1
        or _info.shape_of(xp)[0] != _info.shape_of(fp)[0]
    ):
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    if _info.shape_of(xp)[0] == 0:
        raise ValueError("xp and fp must be non-empty")
    x, xp, fp = _inexact("interp", x, xp, fp)
    if aval(x).dtype.kind == "c" or aval(xp).dtype.kind == "c":
        raise ValueError("jnp.interp: complex x values not supported.")
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(
                f"the only valid string value of `{name}` is 'extrapolate', but got: {v!r}"
            )
    if period is not None:
        if _info.ndim_of(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = _ufuncs.abs(period)
        x = _ufuncs.mod(x, period)
        xp = _ufuncs.mod(xp, period)
        order = _sorting.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = _shape.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = _shape.concatenate([fp[-1:], fp, fp[:1]])
    n = aval(xp).shape[0]
    if n == 1:
        f = _shape.broadcast_to(fp[0], aval(x).shape)
    else:
        i = _ufuncs.clip(searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1 = _indexing.take(xp, i - 1), _indexing.take(xp, i)
        f0, f1 = _indexing.take(fp, i - 1), _indexing.take(fp, i)
        dx = x1 - x0
        # an interval narrower than spacing(eps) counts as empty (as JAX's): dividing by
        # it would make the derivatives overflow into NaN
        tiny = _ufuncs.abs(dx) <= np.spacing(np.finfo(aval(dx).dtype).eps)
        slope = (x - x0) / _ufuncs.where(tiny, 1, dx)
        f = _ufuncs.where(dx == 0, f1, _ufuncs.where(tiny, f0, f0 + slope * (f1 - f0)))
    if period is None:
        if not isinstance(left, str):
            f = _ufuncs.where(x < xp[0], fp[0] if left is None else left, f)
        if not isinstance(right, str):
            f = _ufuncs.where(x > xp[-1], fp[-1] if right is None else right, f)
    return out(convert(f, aval(x).dtype, aval(x).weak_type))


# --------------------------------------------------------------------------- convolution


def _conv(name: str, a: ArrayLike, v: ArrayLike, mode: str, correlate: bool, pet: Any) -> Any:

    if _info.ndim_of(a) != 1 or _info.ndim_of(v) != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.{here()}")
    # as jnp: an inexact result by default; with ``preferred_element_type`` the operands
    # keep their promoted dtype (integers convolve as integers)
    if pet is None:
        a, v = _inexact(name, a, v)
    else:
        a, v = (as_array(x, name) for x in _promote(name, a, v))
    if aval(a).shape[0] == 0 or aval(v).shape[0] == 0:
        raise ValueError(
            f"{name}: inputs cannot be empty, got shapes {aval(a).shape} and {aval(v).shape}."
        )
    swap = aval(v).shape[0] > aval(a).shape[0]
    if swap:  # the longer operand slides; a swapped correlation is reversed and conjugated
        a, v = v, a
    if correlate:
        v = _ufuncs.conj(v) if dtypes.kind(aval(v).dtype) == 3 else v
    else:
        v = v[::-1]
    nv = aval(v).shape[0]
    if mode == "valid":
        padding = ((0, 0),)
    elif mode == "same":
        padding = ((nv // 2, nv - nv // 2 - 1),)
    elif mode == "full":
        padding = ((nv - 1, nv - 1),)
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    dn = ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
    r = conv_general_dilated(
        a[None, None, :],
        v[None, None, :],
        window_strides=(1,),
        padding=padding,
        lhs_dilation=(1,),
        rhs_dilation=(1,),
        dimension_numbers=dn,
        preferred_element_type=pet,
    )[0, 0]
    if correlate and swap:
        r = r[::-1]
        if dtypes.kind(aval(r).dtype) == 3:
            r = _ufuncs.conj(r)
    return out(r)


def convolve(
    a: ArrayLike,
    v: ArrayLike,
    mode: str = "full",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Discrete linear convolution of two 1-D arrays (``mode``: full, same or valid)."""
    return _conv("convolve", a, v, mode, False, preferred_element_type)


def correlate(
    a: ArrayLike,
    v: ArrayLike,
    mode: str = "valid",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Cross-correlation of two 1-D arrays, ``sum(a[n + k] * conj(v[n]))``."""
    return _conv("correlate", a, v, mode, True, preferred_element_type)


__all__ = [
    "convolve",
    "correlate",
    "diff",
    "ediff1d",
    "gradient",
    "interp",
    "trapezoid",
    "unwrap",
]
