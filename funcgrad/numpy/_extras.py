"""Remaining ``jax.numpy`` functions: bit shifts and counts, ``gcd``/``lcm``, float
decomposition (``frexp``, ``ldexp``, ``modf``, ``spacing``, ``nextafter``), ``i0`` and
``kaiser``, index tricks (``mgrid``, ``ogrid``, ``r_``, ``c_``), ``polyfit``,
``trim_zeros``, ``put``/``put_along_axis``/``place`` and NumPy's printing helpers.

All are composites of existing funcgrad functions and primitives (so they trace, and
``grad`` applies where the function is differentiable).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

from funcgrad import lax
from funcgrad.core.errors import ConcretizationTypeError
from funcgrad.core.interp import Tracer
from funcgrad.numpy import (
    _creation,
    _info,
    _linalg,
    _misc,
    _numeric,
    _reductions,
    _setops,
    _shape,
    _ufuncs,
    linalg,
)
from funcgrad.numpy._core import ArrayLike, aval, check_kind, here, out, promote_broadcast
from funcgrad.primitives import bits, special
from funcgrad.primitives import elementwise as ew

get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions


# --------------------------------------------------------------------------- bits


def left_shift(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Elementwise ``x << y`` on integers."""
    x, y = promote_broadcast("left_shift", x, y)
    check_kind("left_shift", "int", x)
    return out(bits.shift_left_p.bind(x, y))


def right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 >> x2``: arithmetic for signed, logical for unsigned integers."""
    x, y = promote_broadcast("right_shift", x1, x2)
    check_kind("right_shift", "int", x)
    signed = np.issubdtype(aval(x).dtype, np.signedinteger)
    p = bits.shift_right_arithmetic_p if signed else bits.shift_right_logical_p
    return out(p.bind(x, y))


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def bitwise_count(x: ArrayLike, /) -> Any:
    """Number of set bits of ``abs(x)``, as ``uint8`` (NumPy's ``bitwise_count``)."""
    (x,) = promote_broadcast("bitwise_count", x)
    check_kind("bitwise_count", "intbool", x)
    if aval(x).dtype == np.bool_:
        return _misc.astype(x, np.uint8)
    a = ew.abs(x) if np.issubdtype(aval(x).dtype, np.signedinteger) else x
    return _misc.astype(bits.population_count_p.bind(a), np.uint8)


def gcd(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Elementwise greatest common divisor of integers (Euclid's algorithm in a loop)."""

    a, b = promote_broadcast("gcd", x1, x2)
    check_kind("gcd", "int", a, b)
    a, b = _shape.broadcast_arrays(_ufuncs.abs(a), _ufuncs.abs(b))

    def step(ab: tuple) -> tuple:
        p, q = ab
        zero = q == 0
        safe = _ufuncs.where(zero, _creation.ones_like(q), q)
        return _ufuncs.where(zero, p, q), _ufuncs.where(zero, q, _ufuncs.remainder(p, safe))

    g, _ = lax.while_loop(lambda ab: _reductions.any(ab[1] != 0), step, (a, b))
    return g


def lcm(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Elementwise least common multiple of integers (0 where either is 0)."""
    a, b = promote_broadcast("lcm", x1, x2)
    check_kind("lcm", "int", a, b)
    d = gcd(a, b)
    safe = _ufuncs.where(d == 0, _creation.ones_like(d), d)
    return _ufuncs.where(d == 0, _creation.zeros_like(d), _ufuncs.abs(a * (b // safe)))


# --------------------------------------------------------------------------- floats


def nextafter(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Next representable float after ``x`` toward ``y``."""
    x, y = promote_broadcast("nextafter", x, y, to="inexact")
    check_kind("nextafter", "real", x)
    return out(bits.nextafter_p.bind(x, y))


def spacing(x: ArrayLike, /) -> Any:
    """Distance from ``x`` to the next float away from zero (negative for ``x < 0``)."""
    (x,) = promote_broadcast("spacing", x, to="inexact")
    check_kind("spacing", "real", x)
    toward = _ufuncs.where(x < 0, -np.inf, np.inf).astype(aval(x).dtype)
    return nextafter(x, toward) - x


def _pow2(k: Any, dt: np.dtype) -> Any:
    """Exactly ``2.0**k`` in ``dt`` for integer ``k`` in the normal exponent range."""

    fi = np.finfo(dt)
    width = np.dtype(dt).itemsize * 8
    ut = np.dtype(f"uint{width}")
    biased = (k + (fi.maxexp - 1)).astype(ut)
    return lax.bitcast_convert_type(left_shift(biased, np.asarray(fi.nmant, ut)), dt)


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 * 2**x2`` (``x2`` an integer array), exact unless the result
    over- or underflows."""
    (e,) = promote_broadcast("ldexp", _creation.asarray(x2))
    check_kind("ldexp", "int", e)
    (x,) = promote_broadcast("ldexp", x1, to="inexact")
    check_kind("ldexp", "real", x)
    dt = aval(x).dtype
    fi = np.finfo(dt)
    lo, hi = fi.minexp, fi.maxexp - 1
    e = e.astype(np.int64 if np.dtype(dt).itemsize == 8 else np.int32)
    # three steps in the normal range reach every finite result (subnormals included)
    for _ in range(3):
        step = _ufuncs.clip(e, lo, hi)
        x = x * _pow2(step, dt)
        e = e - step
    return x


def frexp(x: ArrayLike, /) -> tuple[Any, Any]:
    """Split ``x`` into a mantissa in ``[0.5, 1)`` (signed) and an ``int32`` exponent with
    ``x == mantissa * 2**exponent``; zeros, infinities and NaNs give ``(x, 0)``."""
    (x,) = promote_broadcast("frexp", x, to="inexact")
    check_kind("frexp", "real", x)
    dt = aval(x).dtype
    special_ = (x == 0) | ~_ufuncs.isfinite(x)
    ax = _ufuncs.where(special_, _creation.ones_like(x), _ufuncs.abs(x))
    e = _ufuncs.floor(_ufuncs.log2(ax)).astype(np.int32) + 1
    m = ldexp(ax, -e)
    # log2 may round across a power of two: fix the off-by-one either way
    big, small = m >= 1, m < 0.5
    e = e + big.astype(np.int32) - small.astype(np.int32)
    m = _ufuncs.where(big, m * np.asarray(0.5, dt), _ufuncs.where(small, m * np.asarray(2, dt), m))
    m = _ufuncs.where(special_, x, _ufuncs.copysign(m, x))
    return m, _ufuncs.where(special_, _creation.zeros_like(e), e)


def modf(x: ArrayLike, /, out: None = None) -> tuple[Any, Any]:
    """Fractional and integral parts of ``x``, both with ``x``'s sign."""
    if out is not None:
        raise NotImplementedError(
            "modf: the 'out' argument is not supported (arrays are immutable)"
        )
    (x,) = promote_broadcast("modf", x, to="inexact")
    whole = _ufuncs.trunc(x)
    return x - whole, whole


def i0(x: ArrayLike) -> Any:
    """Modified Bessel function of the first kind, order 0."""
    (x,) = promote_broadcast("i0", x, to="inexact")
    check_kind("i0", "real", x)
    return _ufuncs.exp(_ufuncs.abs(x)) * special.bessel_i0e(x)


def kaiser(M: int, beta: ArrayLike) -> Any:
    """The Kaiser window of ``M`` points and shape parameter ``beta``."""
    M = operator.index(M)
    (beta,) = promote_broadcast("kaiser", beta, to="inexact")
    dt = aval(beta).dtype
    if M <= 1:
        return _creation.ones((max(M, 0),), dt)
    alpha = (M - 1) / 2.0
    n = np.arange(M, dtype=np.float64)
    r = np.sqrt(np.maximum(1.0 - ((n - alpha) / alpha) ** 2, 0.0)).astype(dt)
    return i0(beta * r) / i0(beta)


# --------------------------------------------------------------------------- index tricks


def _range(name: str, s: slice) -> Any:
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return _creation.linspace(start, s.stop, int(abs(step)), endpoint=True)
    if s.stop is None:
        raise ValueError(f"{name}: slices need a stop value, got {s}{here()}")
    return _creation.arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse: bool, name: str) -> None:
        self.sparse, self.name = sparse, name

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _range(self.name, key)
        ranges = [_range(self.name, k) for k in key]
        if not ranges:
            return _creation.zeros((0,))
        dt = _info.result_type(*ranges)
        grids = _creation.meshgrid(
            *[r.astype(dt) for r in ranges], indexing="ij", sparse=self.sparse
        )
        return list(grids) if self.sparse else _shape.stack(grids, 0)


mgrid = _Grid(False, "mgrid")
"""Dense multi-dimensional grids from slices (``mgrid[0:3, 0:2]``; a complex step
``5j`` means 5 points including the end)."""
ogrid = _Grid(True, "ogrid")
"""Open (broadcastable) grids from slices (``ogrid[0:3, 0:2]``)."""


class _Concat:
    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str) -> None:
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            spec, items = items[0], items[1:]
            if spec in ("r", "c"):
                raise NotImplementedError(
                    f"{self.name}: the matrix directives 'r'/'c' are unsupported"
                )
            try:
                parts = [int(p) for p in spec.split(",")]
            except ValueError as e:
                raise ValueError(f"{self.name}: could not understand directive {spec!r}") from e
            axis = parts[0]
            ndmin = parts[1] if len(parts) > 1 else ndmin
            trans1d = parts[2] if len(parts) > 2 else trans1d
        arrays = []
        for it in items:
            if isinstance(it, str):
                raise ValueError(f"{self.name}: a directive string must come first, got {it!r}")
            a = _range(self.name, it) if isinstance(it, slice) else _creation.asarray(it)
            if a.ndim < ndmin:
                # NumPy: prepend axes, then move the original ones to position ``trans1d``
                k2 = ndmin - a.ndim
                k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                a = _shape.reshape(a, (1,) * k2 + a.shape)
                axes = list(range(ndmin))
                a = _shape.transpose(a, axes[:k1] + axes[k2:] + axes[k1:k2])
            arrays.append(a)
        if not arrays:
            return _creation.zeros((0,))
        return _shape.concatenate(arrays, axis=axis)


r_ = _Concat(0, 1, -1, "r_")
"""Concatenate slices, scalars and arrays along the first axis (``r_[1:3, [5], 7]``)."""
c_ = _Concat(-1, 2, 0, "c_")
"""Stack 1-D pieces as columns / concatenate along the last axis (``c_[[1, 2], [3, 4]]``)."""


# --------------------------------------------------------------------------- polynomials


def polyfit(
    x: ArrayLike,
    y: ArrayLike,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: ArrayLike | None = None,
    cov: bool | str = False,
) -> Any:
    """Least-squares polynomial fit of degree ``deg`` (highest power first), as NumPy's.

    ``full=True`` adds ``(residuals, rank, singular_values, rcond)``; ``cov=True`` adds
    the scaled covariance of the coefficients (``cov='unscaled'`` skips the scaling).
    """
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError(f"polyfit: deg must be non-negative, got {deg}{here()}")
    x, y = _creation.asarray(x), _creation.asarray(y)
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError(f"polyfit: x must be a non-empty 1-D array, got shape {x.shape}{here()}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError(
            f"polyfit: y must be 1-D or 2-D with {x.shape[0]} rows, got shape {y.shape}{here()}"
        )
    order = deg + 1
    dt = _info.result_type(x, y, 1.0)
    x, y = x.astype(dt), y.astype(dt)
    lhs = _numeric.vander(x, order)
    rhs = y
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(dt).eps)
    if w is not None:
        w = _creation.asarray(w).astype(dt)
        if w.shape != x.shape:
            raise TypeError(f"polyfit: w must have x's shape {x.shape}, got {w.shape}{here()}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = _ufuncs.sqrt(_reductions.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond=rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, _creation.asarray(rcond, dtype=s.dtype)
    if cov:
        base = linalg.inv(lhs.T @ lhs) / _linalg.outer(scale, scale)
        if cov == "unscaled":
            fac = _creation.asarray(1.0, dt)
        else:
            n = x.shape[0]
            if n <= order:
                raise ValueError(f"polyfit: the data must have more points than deg + 1{here()}")
            fac = resids / (n - order)
            if rhs.ndim == 1:
                fac = fac[0] if fac.ndim == 1 and fac.shape[0] else fac
        if rhs.ndim == 1:
            return c, base * fac
        return c, base[:, :, None] * fac
    return c


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Iterable[int] | None = None) -> Any:
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros. The output
    shape depends on the values, so ``filt`` must be concrete (not traced)."""
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


# --------------------------------------------------------------------------- put / place


def _no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(
            f"funcgrad.numpy.{name} cannot modify arrays in place (arrays are immutable); "
            f"pass inplace=False to get the updated array{here()}"
        )


def _tile_to(v: Any, n: int) -> Any:
    m = v.shape[0]
    if m == n:
        return v
    reps = -(-n // m)
    return _shape.tile(v, reps)[:n]


def put(
    a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *, inplace: bool = True
) -> Any:
    """``a`` with ``a.flat[ind] = v`` (``v`` repeated to the length of ``ind``).

    ``mode=None`` drops out-of-bounds indices, ``'clip'`` clips and ``'wrap'`` wraps
    them, as ``jax.numpy.put``; ``inplace`` must be ``False``.
    """
    _no_inplace("put", inplace)
    arr = _creation.asarray(a)
    idx = _shape.ravel(_creation.asarray(ind))
    vals = _shape.ravel(_creation.asarray(v))
    if arr.size == 0 or idx.size == 0 or vals.size == 0:
        return arr
    vals = _tile_to(vals, idx.shape[0])
    if mode is None:
        keep = (idx >= -arr.size) & (idx < arr.size)
        idx = _ufuncs.where(idx < 0, idx + arr.size, idx)
        idx = _ufuncs.where(keep, idx, arr.size)  # past the end: dropped by ``mode='drop'``
    elif mode == "clip":
        idx = _ufuncs.clip(idx, 0, arr.size - 1)
    elif mode == "wrap":
        idx = idx % arr.size
    elif mode == "raise":
        raise NotImplementedError("put: mode='raise' is not supported")
    else:
        raise ValueError(f"put: mode should be one of 'wrap' or 'clip', got {mode!r}")
    flat = _shape.ravel(arr)
    if mode is None:
        flat = _shape.concatenate([flat, flat[:1]])
        return flat.at[idx].set(vals)[:-1].reshape(arr.shape)
    return flat.at[idx].set(vals).reshape(arr.shape)


def put_along_axis(
    arr: ArrayLike,
    indices: ArrayLike,
    values: ArrayLike,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | None = None,
) -> Any:
    """``arr`` with ``values`` written where ``take_along_axis(arr, indices, axis)`` reads;
    ``inplace`` must be ``False``."""
    _no_inplace("put_along_axis", inplace)
    a = _creation.asarray(arr)
    idx = _creation.asarray(indices)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"put_along_axis: with axis=None indices must be 1-D{here()}")
        return put(a, idx, values, mode=mode, inplace=False)
    axis = axis % a.ndim
    if idx.ndim != a.ndim:
        raise ValueError(
            f"put_along_axis: indices (shape {idx.shape}) must have arr's rank {a.ndim}{here()}"
        )
    shape = np.broadcast_shapes(
        tuple(s if i != axis else idx.shape[axis] for i, s in enumerate(a.shape)), idx.shape
    )
    idx = _shape.broadcast_to(idx, shape)
    idx = _ufuncs.where(idx < 0, idx + a.shape[axis], idx)
    grids = list(np.indices(shape, sparse=True))
    grids[axis] = idx
    vals = _shape.broadcast_to(_creation.asarray(values).astype(a.dtype), shape)
    return a.at[tuple(grids)].set(vals)


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Any:
    """``arr`` with its ``mask``-selected elements replaced, in order, by ``vals``
    (repeated as needed); ``inplace`` must be ``False``."""
    _no_inplace("place", inplace)
    a = _creation.asarray(arr)
    m = _shape.ravel(_creation.asarray(mask)).astype(bool)
    v = _shape.ravel(_creation.asarray(vals))
    if m.shape[0] != a.size:
        raise ValueError(f"place: mask (size {m.shape[0]}) must have arr's size {a.size}{here()}")
    if a.size == 0 or v.size == 0:
        return a
    (pos,) = _setops.nonzero(m, size=a.size, fill_value=a.size)
    v = _tile_to(v, a.size).astype(a.dtype)
    flat = _shape.concatenate([_shape.ravel(a), _shape.ravel(a)[:1]])
    return flat.at[pos].set(v)[:-1].reshape(a.shape)


# --------------------------------------------------------------------------- host helpers


def array_repr(
    arr: ArrayLike,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """NumPy's ``array_repr`` of the (concrete) array ``arr``."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(
    a: ArrayLike,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """NumPy's ``array_str`` of the (concrete) array ``a``."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """A 1-D array interpreting ``buffer``'s bytes as ``dtype`` (copied to the device)."""
    return _creation.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-D array parsed from text ``string`` with separator ``sep``."""
    return _creation.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """Not implemented, as in JAX: consuming an iterator is not a pure function."""
    raise NotImplementedError(
        "funcgrad.numpy.fromiter() is not implemented because it may be non-pure and thus "
        "unsafe for use with jit and other transformations. Consider "
        "_creation.asarray(np.fromiter(...)) instead."
    )
