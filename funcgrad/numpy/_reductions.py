"""Reductions with NumPy's ``axis``/``keepdims`` conventions and ``jax.numpy``'s dtypes.

* ``sum``/``prod`` promote bools and small integers to the default integer
  (unsigned to the default unsigned); ``float16``/``bfloat16`` are accumulated
  in ``float32`` and cast back.
* ``mean``/``var``/``std`` return the inexact version of the input dtype
  (``int32`` → ``float32``, ``int64`` → ``float64``), as ``jnp`` does.
* Results are never weakly typed.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.core.reduction_row import Reduction, form_doc, reduction_forms
from funcgrad.numpy._core import (
    ArrayLike,
    as_array,
    aval,
    broadcast_to_shape,
    check_arraylike,
    convert,
    fmt,
    here,
    normalize_axes,
    normalize_axis,
    prep,
    promote,
    unsupported,
    user_dtype,
)
from funcgrad.numpy._core import out as _out
from funcgrad.numpy._shape import broadcast_to, concatenate
from funcgrad.numpy._ufuncs import divide, isnan, logical_and, logical_not, multiply, subtract
from funcgrad.numpy._ufuncs import where as _where
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh

_BOOL = np.dtype("bool")
_LOW_FLOATS = (np.dtype("float16"), dtypes.bfloat16)


def _keep(x: Any, in_shape: tuple, axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return x
    return sh.reshape(x, tuple(1 if i in axes else s for i, s in enumerate(in_shape)))


def _no_out(name: str, o: Any) -> None:
    if o is not None:
        raise unsupported(f"{name}(..., out=...) (arrays are immutable; use the return value)")


def _promote_integer(dtype: np.dtype) -> np.dtype:
    """``jnp``'s ``promote_integers``: bool/small ints → the default (unsigned) int."""
    if dtype == _BOOL:
        return dtypes.default_dtype(1)
    default = dtypes.default_dtype(1)
    if dtype.kind in "iu" and dtype.itemsize < default.itemsize:
        return dtypes.canonicalize("uint64" if dtype.kind == "u" else "int64")
    return dtype


def _upcast(dtype: np.dtype) -> np.dtype:
    return np.dtype("float32") if dtype in _LOW_FLOATS else dtype


def check_where(name: str, where: ArrayLike | None) -> None:
    """A ``where=`` mask must be boolean: JAX's ``ValueError``, not a silent cast."""
    if where is not None:
        dt = aval(prep(where, name)).dtype
        if dt != _BOOL:
            raise ValueError(
                f"jnp.{name}: where must be None or a boolean array; got where.dtype={dt!r}."
                f"{here()}"
            )


def _check_initial(name: str, initial: Any) -> None:
    """``initial=`` is one value (JAX's ``ValueError``; not broadcast into the result)."""
    if initial is not None and np.shape(initial) != ():
        raise ValueError(
            f"{name}: initial value must be a scalar. Got array of shape "
            f"{tuple(np.shape(initial))}{here()}"
        )


def _mask(name: str, a: Any, where: ArrayLike | None, fill: Any) -> Any:
    """``a`` with masked-out elements replaced by ``fill`` (``where=`` of NumPy reductions)."""
    if where is None:
        return a

    m = prep(where, name)
    shape = aval(a).shape
    try:
        np.broadcast_shapes(aval(m).shape, shape)
    except ValueError:
        raise ValueError(
            f"{name}: where mask {fmt(m)} does not broadcast to {fmt(a)}{here()}"
        ) from None
    return _where(broadcast_to_shape(m, shape, name), a, np.asarray(fill, aval(a).dtype))


def _sum_like(
    name: str,
    row: Reduction,
    a: ArrayLike,
    axis: Any,
    dtype: Any,
    out_: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
    promote_integers: bool = True,
) -> Any:
    _no_out(name, out_)
    a = as_array(a, name)
    check_where(name, where)
    _check_initial(name, initial)
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, name)
    if dtype is not None:
        dt = user_dtype(dtype, name)
    else:
        dt = _promote_integer(av.dtype) if promote_integers else av.dtype
    if dt == _BOOL:
        dt = dtypes.default_dtype(1)
    ct = _upcast(dt)
    x = convert(a, ct)
    if row.nan:  # (``nansum``: NaNs count as the identity)
        x = _where(isnan(x), np.asarray(row.identity, ct), x)
    x = _mask(name, x, where, row.identity)
    r = row.reduce(x, tuple(sorted(axes)))
    if initial is not None:
        r = row.combine(r, np.asarray(initial, ct))
    return _out(_keep(convert(r, dt), av.shape, axes, keepdims))


def _minmax(
    name: str,
    row: Reduction,
    a: ArrayLike,
    axis: Any,
    out_: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
) -> Any:
    _no_out(name, out_)
    a = as_array(a, name)
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, name)
    check_where(name, where)
    _check_initial(name, initial)
    if where is not None and initial is None:
        raise ValueError(
            f"{name}: reduction operation {name!r} does not have an identity, so to use a where "
            f"mask one has to specify 'initial'{here()}"
        )
    if initial is None and builtins.any(av.shape[i] == 0 for i in axes):
        raise ValueError(
            f"{name}: zero-size array {fmt(a)} to reduction operation {name} which has no "
            f"identity{here()}"
        )
    a = convert(a, av.dtype)  # results are strong
    fill = dtypes.extreme(av.dtype, largest=row.identity == "highest")
    a, ax = _mask(name, a, where, fill), tuple(sorted(axes))
    if av.dtype == _BOOL:  # (NumPy's max of bools is any, min all: the row's ``on_bool``)
        prim, combine = row.on_bool
        r = prim.bind(a, axes=ax) if ax else a
    else:
        r, combine = row.reduce(a, ax), row.combine
    if initial is not None:
        r = combine(r, np.asarray(initial, av.dtype))
    return _out(_keep(r, av.shape, axes, keepdims))


def ptp(a: ArrayLike, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """``max - min`` over ``axis``."""

    check_arraylike("ptp", a)
    _no_out("ptp", out)
    hi = DECLARED["max"](a, axis, keepdims=keepdims)
    return subtract(hi, DECLARED["min"](a, axis, keepdims=keepdims))


def _to_bool(a: Any) -> Any:
    if aval(a).dtype == _BOOL:
        return a
    return ew.ne(a, np.asarray(0, aval(a).dtype))


def _anyall(
    name: str, row: Reduction, a: ArrayLike, axis: Any, out_: Any, keepdims: bool, where: Any
) -> Any:
    _no_out(name, out_)
    a = _to_bool(as_array(a, name))
    check_where(name, where)
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, name)
    a = _mask(name, a, where, row.identity)
    return _out(_keep(row.reduce(a, tuple(sorted(axes))), av.shape, axes, keepdims))


def _count(shape: tuple, axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def _mean_dtypes(name: str, in_dtype: np.dtype, dtype: Any) -> tuple[np.dtype, np.dtype]:
    """(result dtype, computation dtype) of mean/var as ``jnp`` chooses them."""
    dt = user_dtype(dtype, name) if dtype is not None else dtypes.to_inexact(in_dtype)
    return dt, _upcast(dt)


def _where_count(name: str, where: ArrayLike, shape: tuple, axes: Any, dtype: np.dtype) -> Any:
    """The number of elements ``where`` selects over ``axes`` (as ``dtype``)."""
    mask = broadcast_to_shape(_to_bool(prep(where, name)), shape)
    return _total(mask, axis=axes, dtype=dtype)


def _mean(
    name: str,
    row: Reduction,
    a: ArrayLike,
    axis: Any,
    dtype: Any,
    out_: Any,
    keepdims: bool,
    where: Any,
) -> Any:
    _no_out(name, out_)
    a = as_array(a, name)
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, name)
    check_where(name, where)
    dt, ct = _mean_dtypes(name, av.dtype, dtype)
    x = convert(a, ct)
    if row.nan:  # (``nanmean``: NaNs are not counted)
        given = logical_not(isnan(a))
        where = given if where is None else logical_and(prep(where, name), given)
    s = row.reduce(_mask(name, x, where, row.identity), tuple(sorted(axes)))
    if where is None:
        n: Any = np.asarray(_count(av.shape, axes), ct)
    else:
        n = _where_count(name, where, av.shape, axes, ct)
    return _out(_keep(convert(ew.div(s, n), dt), av.shape, axes, keepdims))


def _moment(
    name: str,
    row: Reduction,
    a: ArrayLike,
    axis: Any,
    dtype: Any,
    out_: Any,
    ddof: Any,
    keepdims: bool,
    where: Any,
    mean: Any,
    correction: Any,
) -> Any:
    """The mean square deviation (``var``), then the row's ``finish`` (``std``), as
    ``jnp.var``/``jnp.std``: the divisor ``N - ddof``, NaN where it is not positive."""
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
    _no_out(name, out_)
    a = as_array(a, name)
    check_where(name, where)
    av = aval(a)
    axes = normalize_axes(axis, av.ndim, name)
    if dtype is not None:
        dt = user_dtype(dtype, name)
        if row.finish is not None and dtypes.kind(dt) not in (2, 3):
            raise ValueError(f"dtype argument to jnp.{name} must be inexact; got {dt}{here()}")
        if dtypes.kind(av.dtype) == 3 and dtypes.kind(dt) != 3:
            raise ValueError(
                f"{name}: a real dtype= for the variance of complex values is not supported, "
                f"got {dt} for {fmt(a)} (as jax.numpy.var){here()}"
            )
    else:
        dt = ew.real_dtype(dtypes.to_inexact(av.dtype))
    ct = _upcast(dt if dtype is not None else dtypes.to_inexact(av.dtype))
    x = convert(a, ct)
    if mean is None:
        m = _average(x, axis=axes, dtype=ct, keepdims=True, where=where)
    else:
        m = convert(prep(mean, name), ct)
    d = ew.sub(x, broadcast_to_shape(m, av.shape))
    if dtypes.kind(ct) == 3:  # |d|**2: the variance of complex values is real
        sq, ct = ew.real(ew.mul(d, ew.conj(d))), ew.real_dtype(ct)
    else:
        sq = ew.mul(d, d)
    s = row.reduce(_mask(name, sq, where, row.identity), tuple(sorted(axes)))
    if where is None:
        n: Any = np.asarray(_count(av.shape, axes), ct)
    else:
        n = _where_count(name, where, av.shape, axes, ct)
    n = ew.sub(n, np.asarray(correction, ct))
    # (NaN where the divisor is not positive; a weak NaN, so an integer ``dtype=`` gives
    # the default float, as JAX's)
    v = _where(ew.gt(n, np.asarray(0, ct)), convert(ew.div(s, n), dt), np.nan)
    return _out(_keep(v if row.finish is None else row.finish(v), av.shape, axes, keepdims))


# --------------------------------------------------------------------------- the rows' forms
# (one kind of numpy form per ``Reduction.numpy``: its signature is jax.numpy's)


def _fold_form(name: str, row: Reduction) -> Callable[..., Any]:
    def f(
        a: ArrayLike,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: ArrayLike | None = None,
        promote_integers: bool = True,
    ) -> Any:
        return _sum_like(name, row, a, axis, dtype, out, keepdims, initial, where, promote_integers)

    return f


def _nan_fold_form(name: str, row: Reduction) -> Callable[..., Any]:
    # (``jnp.nansum``'s signature: no ``promote_integers``)
    def f(
        a: ArrayLike,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: ArrayLike | None = None,
    ) -> Any:
        return _sum_like(name, row, a, axis, dtype, out, keepdims, initial, where)

    return f


def _nan_average_form(name: str, row: Reduction) -> Callable[..., Any]:
    # (``jnp.nanmean``'s signature: ``where`` by position too)
    def f(
        a: ArrayLike,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        where: ArrayLike | None = None,
    ) -> Any:
        return _mean(name, row, a, axis, dtype, out, keepdims, where)

    return f


def _extremum_form(name: str, row: Reduction) -> Callable[..., Any]:
    def f(
        a: ArrayLike,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: ArrayLike | None = None,
    ) -> Any:
        return _minmax(name, row, a, axis, out, keepdims, initial, where)

    return f


def _average_form(name: str, row: Reduction) -> Callable[..., Any]:
    def f(
        a: ArrayLike,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        *,
        where: ArrayLike | None = None,
    ) -> Any:
        return _mean(name, row, a, axis, dtype, out, keepdims, where)

    return f


def _logical_form(name: str, row: Reduction) -> Callable[..., Any]:
    def f(
        a: ArrayLike,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        *,
        where: ArrayLike | None = None,
    ) -> Any:
        return _anyall(name, row, a, axis, out, keepdims, where)

    return f


def _index_form(name: str, row: Reduction) -> Callable[..., Any]:
    def f(
        a: ArrayLike, axis: int | None = None, out: Any = None, keepdims: bool | None = None
    ) -> Any:
        return _arg(name, row.reduce, a, axis, out, keepdims)

    return f


def _moment_form(name: str, row: Reduction) -> Callable[..., Any]:
    def f(
        a: ArrayLike,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        ddof: int = 0,
        keepdims: bool = False,
        *,
        where: ArrayLike | None = None,
        mean: ArrayLike | None = None,
        correction: int | float | None = None,
    ) -> Any:
        return _moment(name, row, a, axis, dtype, out, ddof, keepdims, where, mean, correction)

    return f


def _cumulative_form(name: str, row: Reduction) -> Callable[..., Any]:
    def f(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        _no_out(name, out)
        return _cum(name, row.reduce, a, axis, dtype)

    return f


_KINDS = {
    "fold": _fold_form,
    "extremum": _extremum_form,
    "average": _average_form,
    "logical": _logical_form,
    "index": _index_form,
    "moment": _moment_form,
    "cumulative": _cumulative_form,
}
#: the kinds of a row that leaves NaNs out (``Reduction.nan``), with ``jax.numpy``'s
#: signatures of ``nansum`` and ``nanmean``
_NAN_KINDS = {"fold": _nan_fold_form, "average": _nan_average_form}


def _declared_form(row: Reduction) -> Callable[..., Any]:
    """The numpy form of a reduction row, named as the row (``amax`` is ``max``, as in
    ``jax.numpy``: its errors say ``max``)."""
    f = (_NAN_KINDS if row.nan else _KINDS)[row.numpy](row.name, row)
    f.__name__ = f.__qualname__ = row.name
    f.__doc__ = f"{form_doc(row, 'numpy')}."
    return f


_FORMS = {r.name: _declared_form(r) for r in dict.fromkeys(reduction_forms("numpy").values())}
#: the numpy form of each reduction row by the row's name (``sum``, ``max``, ``mean``,
#: ``any``, ...: ``funcgrad/primitives/reductions.py``) that is also an array method
METHODS = {n: f for n, f in _FORMS.items() if reduction_forms("numpy")[n].method}
#: every numpy form of the rows (``amax`` is ``max``)
DECLARED = {name: _FORMS[row.name] for name, row in reduction_forms("numpy").items()}
globals().update(DECLARED)
# (this module's own calls of two of them)
_total, _average = DECLARED["sum"], DECLARED["mean"]


def _arg(name: str, prim: Any, a: ArrayLike, axis: Any, out_: Any, keepdims: bool | None) -> Any:
    _no_out(name, out_)
    a = as_array(a, name)
    av = aval(a)
    idx = dtypes.default_dtype(1)
    if av.size == 0 and (axis is None or av.shape[normalize_axis(axis, av.ndim, name)] == 0):
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence {fmt(a)}{here()}")
    if av.dtype == _BOOL:
        a = convert(a, np.dtype("int32"))
    if axis is None:
        r = prim(sh.reshape(a, (av.size,)), axis=0, index_dtype=idx)
        return _out(sh.reshape(r, (1,) * av.ndim) if keepdims else r)
    ax = normalize_axis(axis, av.ndim, name)
    return _out(_keep(prim(a, axis=ax, index_dtype=idx), av.shape, (ax,), bool(keepdims)))


def _cum(
    name: str,
    prim: Any,
    a: ArrayLike,
    axis: Any,
    dtype: Any,
    promote_integers: bool = False,
) -> Any:
    a = as_array(a, name)
    av = aval(a)
    if axis is None or av.ndim == 0:
        a = sh.reshape(a, (av.size,))
        axis = 0 if axis is None else axis
    ax = normalize_axis(axis, aval(a).ndim, name)
    if dtype is None:
        dt = _promote_integer(av.dtype) if promote_integers or av.dtype == _BOOL else av.dtype
        ct = dt
    else:
        dt = user_dtype(dtype, name)
        ct = _promote_integer(dt) if dt == _BOOL else dt
        if dt == _BOOL:
            a = _to_bool(a)
    x = convert(a, ct)
    if aval(x).shape[ax]:
        x = prim(x, axis=ax)
    return _out(convert(x, dt))


def _cumulative(
    name: str,
    fn: Any,
    ident: int,
    x: ArrayLike,
    axis: Any,
    dtype: Any,
    include_initial: bool,
    promote: bool,
) -> Any:
    x = as_array(x, name)
    av = aval(x)
    if axis is None:
        if av.ndim > 1:
            raise ValueError(
                f"{name}: axis must be given for arrays of ndim > 1, got {fmt(x)}{here()}"
            )
        axis = 0
    if av.ndim == 0:
        what = "sum" if ident == 0 else "product"
        raise ValueError(
            f"{name}: The input must be non-scalar to take a cumulative {what}, however a "
            f"scalar value or scalar array was given ({fmt(x)}){here()}"
        )
    ax = normalize_axis(axis, av.ndim, name)
    r = fn(x, ax, dtype, promote)
    if include_initial:
        shape = list(av.shape)
        shape[ax] = 1
        r = concatenate([sh.full(tuple(shape), ident, aval(r).dtype), r], axis=ax)
    return _out(r)


def _cumsum(x: Any, ax: int, dtype: Any, promote: bool) -> Any:
    return _cum("cumulative_sum", rd.cumsum, x, ax, dtype, promote)


def _cumprod(x: Any, ax: int, dtype: Any, promote: bool) -> Any:
    return _cum("cumulative_prod", rd.cumprod, x, ax, dtype, promote)


def cumulative_sum(
    x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """Cumulative sum along ``axis`` (Array API), optionally starting with 0."""
    return _cumulative("cumulative_sum", _cumsum, 0, x, axis, dtype, include_initial, True)


def cumulative_prod(
    x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    """Cumulative product along ``axis`` (Array API), optionally starting with 1."""
    return _cumulative("cumulative_prod", _cumprod, 1, x, axis, dtype, include_initial, False)


def count_nonzero(a: ArrayLike, axis: Any = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements along ``axis``."""
    b = _to_bool(as_array(a, "count_nonzero"))
    return _total(b, axis=axis, keepdims=keepdims, dtype=dtypes.default_dtype(1))


# PyTorch's count_nonzero: a reduction's dims (one, several or none), an int64 count
ArrayRow(
    count_nonzero,
    torch=TorchArrayForm(
        None,
        (TorchParam("dim", "axis", "reduce_dims", None),),
        samples=(((3, 4), ()), ((3, 4), (1,)), ((2, 3, 4), ((0, 2),))),
        out=False,  # (PyTorch's takes no ``out=``)
        overloads=True,
    ),
)


def average(
    a: ArrayLike,
    axis: Any = None,
    weights: ArrayLike | None = None,
    returned: bool = False,
    keepdims: bool = False,
) -> Any:
    """(Weighted) average along ``axis``; ``returned`` also gives the sum of the weights."""

    a = as_array(a, "average")
    av = aval(a)
    if weights is None:
        avg = _average(a, axis=axis, keepdims=keepdims)
        axes = normalize_axes(axis, av.ndim, "average")
        cnt = sh.full(aval(avg).shape, _count(av.shape, axes), aval(avg).dtype)
        return (avg, _out(cnt)) if returned else avg
    a, w = promote("average", a, weights, to="inexact")
    a, w = convert(a, aval(a).dtype), convert(w, aval(w).dtype)
    wv = aval(w)
    if wv.shape != av.shape:
        if axis is None:
            raise ValueError(
                f"average: axis must be specified when shapes of a and weights differ, got "
                f"{fmt(a, w)}{here()}"
            )
        # weights over the reduced axes, in ``axis``'s order (NumPy's and JAX's rule)
        order = [normalize_axis(d, av.ndim, "average") for d in np.atleast_1d(axis).tolist()]
        if wv.shape != tuple(av.shape[d] for d in order):
            raise ValueError(
                f"average: shape of weights must be consistent with shape of a along "
                f"axis {axis}: got {fmt(a, w)}{here()}"
            )
        perm = tuple(int(i) for i in np.argsort(order))
        if perm != tuple(range(len(order))):
            w = sh.transpose(w, perm)
        shape = [1] * av.ndim
        for d in order:
            shape[d] = av.shape[d]
        w = broadcast_to_shape(sh.reshape(w, tuple(shape)), av.shape)
    wsum = _total(w, axis=axis, keepdims=keepdims)
    avg = divide(_total(multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    if returned:
        return avg, broadcast_to(wsum, aval(avg).shape)
    return avg


def median(*args: Any, **kwargs: Any) -> Any:
    """Not supported: needs a sort primitive."""
    raise unsupported("median (funcgrad has no sort primitive yet)")
