"""Entries selected by index or condition: ``choose`` (each entry from the array its index
names), ``compress`` and ``extract`` (where a condition holds; ``size=`` makes the length
static) and ``trim_zeros`` (without leading/trailing zeros; concrete input only)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.errors import ConcretizationTypeError
from funcgrad.core.interp import Tracer
from funcgrad.numpy import _creation, _indexing, _setops, _shape, _ufuncs
from funcgrad.numpy._core import ArrayLike, aval, check_arraylike, here, normalize_axis


def compress(
    condition: ArrayLike,
    a: ArrayLike,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: ArrayLike = 0,
    out: None = None,
) -> Any:
    """The slices of ``a`` along ``axis`` where ``condition`` holds (``size``: a static
    length padded with ``fill_value``)."""
    check_arraylike("compress", condition, a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    c = _shape.ravel(condition)
    arr = _creation.asarray(a)
    if axis is None:
        arr, axis = _shape.ravel(arr), 0
    ax = normalize_axis(axis, aval(arr).ndim, "compress")
    n = aval(arr).shape[ax]
    if aval(c).shape[0] > n:
        c = c[:n]
    elif aval(c).shape[0] < n:
        c = _shape.concatenate([c, _creation.zeros((n - aval(c).shape[0],), aval(c).dtype)])
    (idx,) = _setops.nonzero(c, size=size, fill_value=n)
    res = _shape.moveaxis(
        _indexing.take(arr, idx, axis=ax, mode="fill", fill_value=fill_value), ax, 0
    )
    return _shape.moveaxis(res, 0, ax)


def extract(
    condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0
) -> Any:
    """Entries of ``ravel(arr)`` where ``ravel(condition)`` is non-zero."""
    check_arraylike("extract", condition, arr)
    return compress(_shape.ravel(condition), _shape.ravel(arr), size=size, fill_value=fill_value)


def choose(a: ArrayLike, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Entry ``i`` taken from ``choices[a[i]]`` (all broadcast together)."""
    check_arraylike("choose", a, *choices)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = _creation.asarray(a)
    if dtypes.kind(aval(a).dtype) > 1:
        raise TypeError("choose: a must be an integer array")
    n = len(choices)
    if mode == "raise":
        if isinstance(a, Tracer):
            raise ValueError(
                "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use mode='wrap' or mode='clip' instead."
            )
        if np.any((np.asarray(a) < 0) | (np.asarray(a) >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = _ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrs = _shape.broadcast_arrays(a, *choices)
    a, cs = arrs[0], _shape.stack(arrs[1:])
    return _indexing.take_along_axis(cs, a[None], axis=0)[0]


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Iterable[int] | None = None) -> Any:
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros. The output
    shape depends on the values, so ``filt`` must be concrete (not traced)."""
    check_arraylike("trim_zeros", filt)
    if isinstance(filt, Tracer):
        raise ConcretizationTypeError(
            f"trim_zeros: the output shape depends on the values of the traced operand "
            f"{filt.aval}; call it outside jit/vmap{here()}"
        )
    a = _creation.asarray(filt)
    host = np.asarray(a)
    if host.ndim == 0:
        raise ValueError(f"trim_zeros: filt must be at least 1-D{here()}")
    trim = trim.lower()
    axes = range(host.ndim) if axis is None else ([axis] if isinstance(axis, int) else axis)
    index = [slice(None)] * host.ndim
    nz = np.argwhere(host != 0)
    for ax in axes:
        ax = ax % host.ndim
        if nz.size == 0:
            index[ax] = slice(0, 0)
            continue
        lo = int(nz[:, ax].min()) if "f" in trim else 0
        hi = int(nz[:, ax].max()) + 1 if "b" in trim else host.shape[ax]
        index[ax] = slice(lo, hi)
    return a[tuple(index)]
