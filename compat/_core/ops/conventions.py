"""PyTorch's derivative conventions at singular points, as funcgrad functions.

Each is a ``funcgrad.custom_jvp`` whose tangent rule is the one PyTorch's backward
formula transposes (``tools/autograd/derivatives.yaml``, ``FunctionsManual.cpp``), so
reverse mode, forward mode, ``create_graph`` and ``vmap`` all see PyTorch's values where
funcgrad (like JAX) gives NaN or another subgradient:

* :func:`power` — ``d(x**y)/dy`` at ``x == 0`` is ``0`` for ``y >= 0`` and
  ``x**y * log(x)`` (``-inf``) for ``y < 0``; ``d/dx`` is ``0`` where ``y == 0``;
* :func:`atan2` — both derivatives are ``0`` where ``x**2 + y**2 == 0``;
* :func:`even_extremum` — full ``max``/``min``/``median``/``nanmedian``: the gradient is
  shared evenly by the elements equal to the result (NaN elements when it is NaN);
* :func:`amax` — ``amax``/``amin``: shared by the elements equal to the result, so a
  NaN result has NaN gradients (``0 / 0``), as PyTorch's ``scale_grad_by_count``;
* :func:`relu` — ``clamp_min(x, 0)`` (NaN and ``-0.0`` stay) whose derivative is
  ``threshold_backward``'s: the cotangent passes where the result is not ``<= 0``, so a
  NaN input passes it (funcgrad's derivative of a ``where`` would give ``0`` there);
* :func:`scatter_set` — ``x.at[where].set(src)`` whose ``src`` cotangent is the
  cotangent gathered at ``where``, so every written value gets its place's gradient,
  the overwritten ones at a repeated place included (PyTorch's ``grad.gather``; JAX
  and funcgrad give it to the winning write only); callers use it only where
  :func:`repeats` finds a repeated place (elsewhere both rules agree, and the plain
  ``set`` differentiates faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad as fg
from funcgrad import numpy as fnp


@fg.custom_jvp
def power(x: Any, y: Any) -> Any:
    """``x ** y`` for real floating ``x``, ``y`` (see the module docstring)."""
    return fnp.power(x, y)


def _power_dx(t: Any, ans: Any, x: Any, y: Any) -> Any:
    return t * fnp.where(fnp.equal(y, 0), 0.0, y * fnp.power(x, y - 1))


def _power_dy(t: Any, ans: Any, x: Any, y: Any) -> Any:
    zero = fnp.logical_and(fnp.equal(x, 0), fnp.greater_equal(y, 0))
    return t * fnp.where(zero, 0.0, ans * fnp.log(x))


power.defjvps(_power_dx, _power_dy)


def _atan2_recip(x: Any, y: Any) -> Any:
    d = x * x + y * y
    return fnp.where(fnp.equal(d, 0), 0.0, 1.0 / d)


@fg.custom_jvp
def atan2(x: Any, y: Any) -> Any:
    """``atan2(x, y)`` with PyTorch's zero derivatives at the origin."""
    return fnp.arctan2(x, y)


atan2.defjvps(
    lambda t, ans, x, y: t * (y * _atan2_recip(x, y)),
    lambda t, ans, x, y: t * (-x * _atan2_recip(x, y)),
)


@fg.custom_jvp
def relu(x: Any) -> Any:
    """PyTorch's ``relu`` (see the module docstring): one comparison and one select, where
    a ``where`` of both signs took two of each (the host tier: ~50 against ~25 us on a
    64x256 float32 array)."""
    return fnp.where(x < 0, 0, x)


relu.defjvps(lambda t, ans, x: fnp.where(ans <= 0, 0, t))


def _share(t: Any, mask: Any, axes: Any, keepdims: bool) -> Any:
    """``sum(t * mask) / sum(mask)`` over ``axes``: the tangent of a value shared evenly
    by the masked elements (its transpose spreads the cotangent evenly over them)."""
    count = fnp.sum(fnp.asarray(mask, t.dtype), axis=axes, keepdims=True)
    # NaN weights where nothing matches (PyTorch's 0 / 0), as an explicit select: XLA
    # rewrites a product with a converted mask into a select that would drop the NaN
    w = fnp.where(count == 0, fnp.nan, fnp.where(mask, 1.0 / count, 0.0))
    return fnp.sum(t * fnp.asarray(w, t.dtype), axis=axes, keepdims=keepdims)


def even_extremum(reduce: Any) -> Any:
    """A full reduction ``reduce(x)`` (to a scalar) whose gradient is shared evenly by the
    elements equal to its result, NaN elements matching a NaN result."""

    @fg.custom_jvp
    def f(x: Any) -> Any:
        return reduce(x)

    def jvp(t: Any, ans: Any, x: Any) -> Any:
        mask = fnp.logical_or(fnp.equal(x, ans), fnp.logical_and(fnp.isnan(x), fnp.isnan(ans)))
        return _share(t, mask, None, False)

    f.defjvps(jvp)
    return f


def amax(x: Any, axes: Any, keepdims: bool, op: str) -> Any:
    """``amax``/``amin`` over ``axes`` with PyTorch's gradient (see the module docstring)."""
    red = fnp.max if op == "max" else fnp.min

    @fg.custom_jvp
    def f(x: Any) -> Any:
        return red(x, axis=axes, keepdims=keepdims)

    def jvp(t: Any, ans: Any, x: Any) -> Any:
        full = ans if keepdims else _restore(ans, axes, x.ndim)
        return _share(t, fnp.equal(x, full), axes, keepdims)

    f.defjvps(jvp)
    return f(x)


def _restore(ans: Any, axes: Any, ndim: int) -> Any:
    """``ans`` reduced over ``axes`` without ``keepdims``, with those axes back as size 1."""
    if axes is None:
        return fnp.reshape(ans, (1,) * ndim)
    for a in sorted(a % ndim for a in axes):
        ans = fnp.expand_dims(ans, a)
    return ans


def _static(w: Any) -> bool:
    return w is None or w is Ellipsis or isinstance(w, (slice, int))


def scatter_set(x: Any, where: Any, src: Any) -> Any:
    """``x.at[where].set(src)`` with PyTorch's derivative (see the module docstring);
    ``where`` is any index (slices, ``None``, ``...``, integers and index arrays)."""
    parts = where if isinstance(where, tuple) else (where,)
    dyn = [k for k, w in enumerate(parts) if not _static(w)]

    def index(arrays: tuple) -> tuple:
        full = list(parts)
        for k, a in zip(dyn, arrays):
            full[k] = a
        return tuple(full)

    @fg.custom_jvp
    def f(x: Any, src: Any, *arrays: Any) -> Any:
        return x.at[index(arrays)].set(src)

    def jvp(primals: tuple, tangents: tuple) -> tuple:
        x, src, *arrays = primals
        tx, tsrc = tangents[:2]
        at = index(tuple(arrays))
        # the tangent of src is added at its places (the transpose of a gather), so a
        # repeated place's tangent is the sum of its writes: reverse mode sees the
        # cotangent gathered at every write
        written = fnp.zeros_like(tx).at[at].add(fnp.asarray(tsrc, tx.dtype))
        return f(x, src, *arrays), tx.at[at].set(0) + written

    f.defjvp(jvp)
    return f(x, src, *(parts[k] for k in dyn))


#: the static argument by which an op selects :func:`scatter_set` at repeated places;
#: forward mode drops it (PyTorch's forward formula for a scatter keeps the winning
#: write's tangent, ``self_t.scatter(dim, index, src_t)``, where the transpose of
#: ``grad.gather`` would add the tangents of every write)
REPEATS = ("repeats", True)


def repeats(arrays: list) -> bool:
    """Whether concrete non-negative index arrays (broadcast together, one per indexed
    dimension) address some place more than once."""
    if not arrays:
        return False
    cols = np.broadcast_arrays(*[np.asarray(a) for a in arrays])
    if cols[0].size < 2:
        return False
    key = np.zeros(cols[0].shape, np.int64)
    span = 1
    for a in cols:
        r = int(a.max()) + 1
        span *= r
        if span >= 2**62:  # (the combined key would overflow: compare the tuples)
            rows = np.stack([c.reshape(-1) for c in cols], axis=1)
            return len(np.unique(rows, axis=0)) != len(rows)
        key = key * r + a
    flat = key.reshape(-1)
    return len(np.unique(flat)) != flat.size
