"""``funcgrad.scipy.ndimage``: ``map_coordinates`` as ``jax.scipy.ndimage`` has it
(orders 0 and 1; modes ``constant``, ``nearest``, ``wrap``, ``mirror``, ``reflect``,
with JAX's meanings: ``constant`` is SciPy's ``grid-constant``, ``wrap`` its
``grid-wrap``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy._core import here


def _fix_constant(i: Any, n: int) -> Any:
    return fnp.clip(i, 0, n - 1)


def _fix_wrap(i: Any, n: int) -> Any:
    return fnp.mod(i, n)


def _fix_mirror(i: Any, n: int) -> Any:
    # period 2(n-1): ... 2 1 [0 1 .. n-1] n-2 ...  (the edge is not repeated)
    if n == 1:
        return fnp.zeros_like(i)
    s = n - 1
    return fnp.abs(fnp.mod(i + s, 2 * s) - s)


def _fix_reflect(i: Any, n: int) -> Any:
    # period 2n: ... 1 0 [0 1 .. n-1] n-1 ...  (the edge is repeated)
    m = fnp.mod(i, 2 * n)
    return fnp.where(m >= n, 2 * n - 1 - m, m)


_MODES = {
    "constant": _fix_constant,
    "nearest": _fix_constant,
    "wrap": _fix_wrap,
    "mirror": _fix_mirror,
    "reflect": _fix_reflect,
}


def _round_away(x: Any) -> Any:
    return fnp.sign(x) * fnp.floor(fnp.abs(x) + 0.5)


def _nodes(c: Any, order: int) -> list[tuple[Any, Any]]:
    """The (integer index, weight) pairs interpolating at coordinate ``c``."""
    if order == 0:
        return [(_round_away(c).astype(np.int32), None)]
    lo = fnp.floor(c)
    hi_w = c - lo
    i = lo.astype(np.int32)
    return [(i, 1 - hi_w), (i + 1, hi_w)]


def map_coordinates(
    input: Any,
    coordinates: Sequence[Any],
    order: int,
    mode: str = "constant",
    cval: Any = 0.0,
) -> Any:
    """Values of ``input`` at fractional ``coordinates`` (one array per axis of
    ``input``) by nearest (``order=0``) or linear (``order=1``) interpolation."""
    arr = fnp.asarray(input)
    coords = [fnp.asarray(c) for c in coordinates]
    if len(coords) != arr.ndim:
        raise ValueError(
            "map_coordinates: coordinates must be a sequence of length input.ndim, but "
            f"{len(coords)} != {arr.ndim} (input {arr.dtype}{list(arr.shape)}){here()}"
        )
    if mode not in _MODES:
        raise NotImplementedError(
            f"map_coordinates does not yet support mode {mode!r}; supported modes are "
            f"{sorted(_MODES)}{here()}"
        )
    if order not in (0, 1):
        raise NotImplementedError(
            f"map_coordinates currently requires order<=1, got {order}{here()}"
        )
    fix = _MODES[mode]
    per_axis = []
    for c, n in zip(coords, arr.shape):
        per_axis.append([(fix(i, n), (i >= 0) & (i < n), w) for i, w in _nodes(c, order)])
    cval = fnp.asarray(cval, arr.dtype)
    total = None
    for combo in itertools.product(*per_axis):
        idx = tuple(i for i, _, _ in combo)
        value = arr[idx]
        if mode == "constant":
            ok = combo[0][1]
            for _, v, _ in combo[1:]:
                ok = ok & v
            value = fnp.where(ok, value, cval)
        weight = None
        for _, _, w in combo:
            if w is not None:
                weight = w if weight is None else weight * w
        term = value if weight is None else weight * value
        total = term if total is None else total + term
    if fnp.issubdtype(arr.dtype, fnp.integer):
        total = _round_away(total)
    return total.astype(arr.dtype)
