"""``funcgrad.scipy.interpolate``: ``RegularGridInterpolator`` as JAX has it (linear
and nearest interpolation on a rectilinear grid with strictly increasing axes;
points outside the grid get ``fill_value``, or are extrapolated when it is ``None``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

import funcgrad.numpy as fnp
from funcgrad.numpy._core import here

__all__ = ["RegularGridInterpolator"]


def _cell(x: Any, g: Any) -> tuple[Any, Any]:
    """Index ``i`` of the grid cell ``[g[i], g[i+1]]`` holding each ``x`` (clamped to the
    first/last cell) and the fraction of the way across it."""
    n = g.shape[0]
    below = fnp.sum((g[None, :] < x[:, None]).astype(np.int32), axis=1)
    i = fnp.clip(below - 1, 0, n - 2)
    lo, hi = g[i], g[i + 1]
    return i, (x - lo) / (hi - lo)


class RegularGridInterpolator:
    """Interpolate ``values`` given on the grid ``points`` (one strictly increasing 1-D
    array per leading axis of ``values``) at arbitrary points.

    ``bounds_error=True`` is not supported (as in JAX: it would need concrete values
    under ``jit``).
    """

    def __init__(
        self,
        points: Sequence[Any],
        values: Any,
        method: str = "linear",
        bounds_error: bool = False,
        fill_value: Any = np.nan,
    ) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        if bounds_error:
            raise NotImplementedError(
                "RegularGridInterpolator: `bounds_error` takes no effect under JIT"
            )
        values = fnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(
                f"there are {len(points)} point arrays, but values has {values.ndim} "
                f"dimensions{here()}"
            )
        if not fnp.issubdtype(values.dtype, fnp.inexact):
            values = values.astype(fnp.result_type(values.dtype, float))
        if fill_value is not None:
            fill_value = fnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError(
                    "fill_value must be either 'None' or of a type compatible with values"
                )
        self.method, self.bounds_error, self.fill_value = method, bounds_error, fill_value
        self.grid = tuple(fnp.asarray(p) for p in points)
        self.values = values

    def _points(self, xi: Any) -> Any:
        nd = len(self.grid)
        if isinstance(xi, (tuple, list)) and len(xi) == nd and nd > 0:
            parts = fnp.broadcast_arrays(*[fnp.asarray(p) for p in xi])
            xi = fnp.stack(parts, axis=-1)
        xi = fnp.asarray(xi)
        if xi.ndim == 1 and nd == 1:
            xi = xi[:, None]
        if xi.shape[-1] != nd:
            raise ValueError(
                f"the requested sample points xi have dimension {xi.shape[-1]}, but this "
                f"RegularGridInterpolator has dimension {nd}{here()}"
            )
        return xi

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """The interpolated values at ``xi`` (``(..., ndim)`` or a tuple of arrays)."""
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        xi = self._points(xi)
        nd = len(self.grid)
        lead = xi.shape[:-1]
        flat = xi.reshape(-1, nd)
        cells = [_cell(flat[:, d], g) for d, g in enumerate(self.grid)]
        trail = self.values.shape[nd:]
        bshape = (flat.shape[0],) + (1,) * len(trail)
        if method == "nearest":
            idx = tuple(fnp.where(t <= 0.5, i, i + 1) for i, t in cells)
            out = self.values[idx]
        else:
            out = None
            for corner in itertools.product((0, 1), repeat=nd):
                idx, w = [], None
                for (i, t), up in zip(cells, corner):
                    idx.append(i + up)
                    wd = t if up else 1 - t
                    w = wd if w is None else w * wd
                term = self.values[tuple(idx)] * w.reshape(bshape)
                out = term if out is None else out + term
        if self.fill_value is not None:
            outside = None
            for d, g in enumerate(self.grid):
                o = (flat[:, d] < g[0]) | (flat[:, d] > g[-1])
                outside = o if outside is None else outside | o
            out = fnp.where(outside.reshape(bshape), self.fill_value, out)
        return out.reshape(lead + trail)


jax.tree_util.register_pytree_node(
    RegularGridInterpolator,
    lambda r: ((r.grid, r.values, r.fill_value), (r.method, r.bounds_error)),
    lambda aux, ch: RegularGridInterpolator(ch[0], ch[1], aux[0], aux[1], ch[2]),
)
