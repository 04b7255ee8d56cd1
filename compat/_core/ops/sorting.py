"""Order statistics and searching: ``sort``/``argsort``/``topk``/``kthvalue``, medians,
``mode``, quantiles, running extrema, ``searchsorted``/``bucketize``, ``unique``,
``bincount``, ``histc``.

Values that select elements (sorted values, top-k, medians) are gathers of the input at
the chosen indices, so the gradient goes to the selected elements as in PyTorch.
Ops whose output size depends on the data (``unique``, ``bincount``) read the values
eagerly, as PyTorch does.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core.creation import tensor
from compat._core.ops import conventions as _conv
from compat._core.ops._common import _c, coerce
from compat._core.optable import Idx, Sample, T, defop
from compat._core.return_types import return_type
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import lax as flax
from funcgrad import numpy as fnp

#: the ``(values, indices)`` results: ``torch.return_types.<op>`` named tuples
ValuesIndices = tuple
_VI = "values indices"


def _refuse_complex(input: Tensor, error: type[Exception], message: str) -> None:
    """PyTorch's refusal of a complex input (``{dtype}``: its dtype's kernel name): funcgrad
    orders complex values lexicographically, as JAX, but PyTorch's CPU kernels do not."""
    if input._npdtype.kind == "c":
        raise error(message.format(dtype=_dt.scalar_type_name(input._npdtype)))


_NO_COMPLEX_SORT = " Sort does not support complex dtypes on CPU"  # (PyTorch's leading space)


def _order(x: Any, axis: int, descending: bool) -> Any:
    """Stable sort order along ``axis`` (NaN last ascending, first descending, as PyTorch)."""
    if descending:
        n = x.shape[axis]
        # stable descending: reverse, sort ascending stably, reverse again
        rev = fnp.flip(x, axis)
        idx = fnp.argsort(rev, axis=axis, stable=True)
        return fnp.flip(n - 1 - idx, axis)
    return fnp.argsort(x, axis=axis, stable=True)


def _sort_f(x: Any, *, axis: int, descending: bool) -> Any:
    idx = _order(x, axis, descending)
    return fnp.take_along_axis(x, idx, axis=axis), fnp.asarray(idx, np.int64)


@defop(
    samples=(
        Sample(((3, 4),)),
        Sample(((3, 4),), args=(0, True)),
        Sample(((5,),), kwargs=(("descending", True), ("stable", True)), dtype="int64", grad=False),
    )
)
def sort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False
) -> ValuesIndices:
    """Values and indices along ``dim`` (always a stable sort)."""
    _refuse_complex(input, RuntimeError, _NO_COMPLEX_SORT)
    if input.ndim == 0:
        return return_type("sort", _VI)(input * 1, tensor(np.zeros((), np.int64)))
    axis = _wrap_dim(dim, input.ndim)
    st = (("axis", axis), ("descending", bool(descending)))
    return return_type("sort", _VI)(*apply(_sort_f, "SortBackward0", (input,), st))


def _argsort_f(x: Any, *, axis: int, descending: bool) -> Any:
    return fnp.asarray(_order(x, axis, descending), np.int64)


_ARGSORT_FORMS = (
    " * (Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)\n"
    " * (Tensor input, int dim = -1, bool descending = False)\n"
)


def _argsort_args(dim: Any, descending: Any, stable: Any) -> None:
    """PyTorch's parser: ``dim`` an int (not a bool), ``descending`` and ``stable`` bools (not
    None, not ints); the message names the first wrong one as a keyword."""
    for name, v, ok in (
        ("dim", dim, isinstance(dim, (int, np.integer)) and not isinstance(dim, bool)),
        ("descending", descending, isinstance(descending, (bool, np.bool_))),
        ("stable", stable, isinstance(stable, (bool, np.bool_))),
    ):
        if not ok:
            raise TypeError(
                "argsort() received an invalid combination of arguments - got (Tensor, "
                f"{name}={type(v).__name__}), but expected one of:\n{_ARGSORT_FORMS}"
            )


def _argsort_out(args: tuple, kwargs: dict[str, Any], out: Any) -> None:
    """PyTorch's ``argsort`` takes ``out=`` only in its ``stable=`` overload, whose ``dim``
    and ``descending`` are keyword-only; its parser's words for the other calls (``out=``
    taken as given last: PyTorch prints the keywords last given first)."""
    if len(args) > 1:
        raise TypeError(
            f"argsort() takes from 2 to 1 positional arguments but {len(args)} were given"
        )
    if "stable" in kwargs:
        return
    if "dim" in kwargs and "descending" in kwargs:
        raise TypeError('argsort() missing 1 required positional arguments: "stable"')
    got = "".join(f", {k}={_gm.typename(v)}" for k, v in reversed(kwargs.items()))
    raise TypeError(
        "argsort() received an invalid combination of arguments - got (Tensor, out=Tensor"
        f"{got}), but expected one of:\n{_ARGSORT_FORMS}"
    )


@defop(
    samples=(Sample(((3, 4),), grad=False), Sample(((6,),), args=(0, True), grad=False)),
    out_check=_argsort_out,
)
def argsort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> Tensor:
    """The indices that sort ``input`` along ``dim``: always a stable sort (ties in index
    order, NaN last ascending and first descending), which ``stable=True`` asks for."""
    _argsort_args(dim, descending, stable)
    _refuse_complex(input, RuntimeError, _NO_COMPLEX_SORT)
    if input.ndim == 0:
        _wrap_dim(dim, 0)
        return tensor(np.zeros((), np.int64))
    axis = _wrap_dim(dim, input.ndim)
    st = (("axis", axis), ("descending", bool(descending)))
    return apply(_argsort_f, "argsort", (input,), st)


@defop(samples=Sample(((3, 4),)))
def msort(input: Tensor) -> Tensor:
    return sort(input, 0).values


def _topk_f(x: Any, *, axis: int, k: int, largest: bool) -> Any:
    idx = _order(x, axis, largest)
    idx = flax.slice_in_dim(idx, 0, k, axis=axis)
    return fnp.take_along_axis(x, idx, axis=axis), fnp.asarray(idx, np.int64)


@defop(
    samples=(
        Sample(((3, 5),), args=(2,)),
        Sample(((6,),), args=(3,), kwargs=(("largest", False),)),
        Sample(((4, 3),), args=(2, 0)),
    )
)
def topk(
    input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> ValuesIndices:
    """The ``k`` largest (or smallest) elements along ``dim``, in order."""
    for name, v in (("k", k), ("dim", dim)):
        if isinstance(v, bool):  # (PyTorch's parser refuses a bool for an int)
            raise TypeError(f"topk(): argument '{name}' must be int, not bool")
    _refuse_complex(input, RuntimeError, "topk does not support complex dtypes on CPU")
    axis = _wrap_dim(dim, builtins.max(input.ndim, 1))
    n = input.shape[axis] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    st = (("axis", axis), ("k", int(k)), ("largest", bool(largest)))
    if input.ndim == 0:
        return return_type("topk", _VI)(input * 1, tensor(np.zeros((), np.int64)))
    return return_type("topk", _VI)(*apply(_topk_f, "TopkBackward0", (input,), st))


def _kth_f(x: Any, *, axis: int, k: int, keepdims: bool) -> Any:
    idx = flax.slice_in_dim(_order(x, axis, False), k, k + 1, axis=axis)
    vals = fnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        vals, idx = fnp.squeeze(vals, axis), fnp.squeeze(idx, axis)
    return vals, fnp.asarray(idx, np.int64)


@defop(samples=(Sample(((3, 5),), args=(2,)), Sample(((4, 3),), args=(1, 0, True))))
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    _refuse_complex(input, NotImplementedError, "\"kthvalue_cpu\" not implemented for '{dtype}'")
    axis = _wrap_dim(dim, builtins.max(input.ndim, 1))
    _nonempty_dim("kthvalue", input, axis)
    n = input.shape[axis] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    if input.ndim == 0:
        return return_type("kthvalue", _VI)(input * 1, tensor(np.zeros((), np.int64)))
    st = (("axis", axis), ("k", int(k) - 1), ("keepdims", bool(keepdim)))
    return return_type("kthvalue", _VI)(*apply(_kth_f, "KthvalueBackward0", (input,), st))


def _median_value(x: Any, ignore_nan: bool) -> Any:
    flat = fnp.reshape(x, (-1,))
    idx = fnp.argsort(flat, stable=True)
    if ignore_nan:
        k = (fnp.sum(~fnp.isnan(flat)) - 1) // 2
        k = fnp.maximum(k, 0)
    else:
        # a NaN anywhere makes the median NaN (NaNs sort last)
        k = fnp.where(fnp.any(fnp.isnan(flat)), flat.shape[0] - 1, (flat.shape[0] - 1) // 2)
    return flat[idx[k]]


_EVEN_MEDIAN = {
    nan: _conv.even_extremum(lambda x, nan=nan: _median_value(x, nan)) for nan in (False, True)
}


def _median_all_f(x: Any, *, ignore_nan: bool) -> Any:
    """The median of all elements; its gradient is shared evenly by the elements equal to
    it (NaN ones when it is NaN), as PyTorch's ``evenly_distribute_backward``. Of no
    element: NaN, converted as x86 converts NaN to an integer dtype (the lowest 32- or
    64-bit integer, truncated to 0 for narrower ones), as PyTorch's CPU kernel."""
    if x.size == 0:
        if _dt.kind(x.dtype) in "fcb":  # (NaN is true)
            return fnp.full((), np.nan, x.dtype)
        size = np.dtype(x.dtype).itemsize
        fill = np.iinfo(np.int64 if size == 8 else np.int32).min if size >= 4 else 0
        return fnp.full((), fill, x.dtype)
    if _dt.kind(x.dtype) == "f":
        return _EVEN_MEDIAN[ignore_nan](x)
    return _median_value(x, ignore_nan)


def _median_dim_f(x: Any, *, axis: int, keepdims: bool, ignore_nan: bool) -> Any:
    idx = _order(x, axis, False)
    n = x.shape[axis]
    if ignore_nan:
        k = (fnp.sum(~fnp.isnan(x), axis=axis, keepdims=True) - 1) // 2
        k = fnp.maximum(k, 0)
    else:
        # with a NaN the first NaN is picked (NaNs sort last, stably: after the others)
        count = fnp.sum(~fnp.isnan(x), axis=axis, keepdims=True)
        k = fnp.where(count < n, count, (n - 1) // 2)
    sel = fnp.take_along_axis(idx, k, axis=axis)
    vals = fnp.take_along_axis(x, sel, axis=axis)
    if not keepdims:
        vals, sel = fnp.squeeze(vals, axis), fnp.squeeze(sel, axis)
    return vals, fnp.asarray(sel, np.int64)


def _nonempty_dim(name: str, input: Tensor, axis: int) -> None:
    """PyTorch's ``IndexError`` for selecting along a dimension of size 0 (no element to
    pick: ``max``/``median``/``kthvalue``/``mode`` with ``dim``)."""
    if input.ndim and input.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")


def _median(input: Tensor, dim: Any, keepdim: bool, ignore_nan: bool, name: str) -> Any:
    kernel = "median_cpu" if dim is None else "median_out"
    _refuse_complex(input, NotImplementedError, f"\"{kernel}\" not implemented for '{{dtype}}'")
    if dim is None:
        return apply(_median_all_f, f"{name}Backward0", (input,), (("ignore_nan", ignore_nan),))
    if input.ndim == 0:
        return return_type(name.lower(), _VI)(input * 1, tensor(np.zeros((), np.int64)))
    axis = _wrap_dim(dim, input.ndim)
    _nonempty_dim("median", input, axis)  # (nanmedian's too, as PyTorch's)
    st = (("axis", axis), ("keepdims", bool(keepdim)), ("ignore_nan", ignore_nan))
    return return_type(name.lower(), _VI)(*apply(_median_dim_f, f"{name}Backward1", (input,), st))


def _out_needs_dim(name: str) -> Any:
    """An ``out_check``: PyTorch's ``torch.X(input, out=...)`` has no overload without ``dim``
    (its ``out`` form returns values and indices)."""

    def check(args: tuple, kwargs: dict[str, Any], out: Any) -> None:
        if len(args) < 2 and "dim" not in kwargs:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')

    return check


@defop(
    samples=(Sample(((3, 4),)), Sample(((3, 4),), args=(1,)), Sample(((4, 3),), args=(0, True))),
    out_check=_out_needs_dim("median"),
)
def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower of the two middle values (no averaging, as PyTorch); with ``dim`` also
    its index."""
    return _median(input, dim, keepdim, False, "Median")


@defop(
    samples=(Sample(((3, 4),)), Sample(((3, 4),), args=(1,))), out_check=_out_needs_dim("nanmedian")
)
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """:func:`median` ignoring NaNs."""
    return _median(input, dim, keepdim, True, "Nanmedian")


def _gather_f(x: Any, idx: Any, *, axis: int, keepdims: bool) -> Any:
    v = fnp.take_along_axis(x, idx, axis=axis)
    return v if keepdims else fnp.squeeze(v, axis)


@defop(
    samples=(
        Sample(((3, 6),), dtype="int64", domain=(0, 3), grad=False),
        Sample(((4, 3),), args=(0, True), dtype="int64", domain=(0, 2), grad=False),
    )
)
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """The most frequent value along ``dim`` (the smallest among equally frequent ones)
    and the index of its last occurrence, as PyTorch on CPU."""
    if input.ndim == 0:
        return return_type("mode", _VI)(input * 1, tensor(np.zeros((), np.int64)))
    axis = _wrap_dim(dim, input.ndim)
    _nonempty_dim("mode", input, axis)
    x = np.moveaxis(np.asarray(input._st.array), axis, -1)
    flat = x.reshape(-1, x.shape[-1])
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        vals, counts = np.unique(row, return_counts=True)
        best = vals[np.argmax(counts)]
        idx[r] = np.nonzero(row == best)[0][-1]
    idx = np.moveaxis(idx.reshape(x.shape[:-1] + (1,)), -1, axis)
    it = tensor(idx)
    st = (("axis", axis), ("keepdims", bool(keepdim)))
    vals = apply(_gather_f, "ModeBackward0", (input, it), st)
    return return_type("mode", _VI)(vals, it if keepdim else it.squeeze(axis))


def _quantile_f(x: Any, q: Any, *, axis: Any, keepdims: bool, method: str, nan: bool) -> Any:
    """PyTorch's quantile: the sorted values (NaNs last) at rank ``q * (n - 1)``, a row
    holding a NaN at rank ``n - 1`` (``quantile``: the NaN, whose gradient goes to that
    element; funcgrad's, as JAX's, puts a constant NaN there and no gradient), or
    ``nanquantile``'s ``q * (count - 1)`` over the non-NaN values (an all-NaN row at rank 0);
    a ``q`` vector's dim first."""
    y = fnp.reshape(x, (-1,)) if axis is None else fnp.moveaxis(x, axis, -1)
    s = fnp.take_along_axis(y, fnp.argsort(y, axis=-1, stable=True), axis=-1)
    n = y.shape[-1]
    isnan = fnp.isnan(s)
    q = fnp.asarray(q, s.dtype)
    qf = fnp.reshape(q, (-1,))
    if nan:
        count = fnp.sum(~isnan, axis=-1, keepdims=True).astype(s.dtype)
        rank = fnp.maximum(qf * (count - 1), 0)
    else:
        rank = fnp.where(fnp.any(isnan, axis=-1, keepdims=True), n - 1, qf * (n - 1))
    flat = fnp.broadcast_to(rank, y.shape[:-1] + qf.shape)  # (..., Q)
    if method == "nearest":
        flat = fnp.round(flat)  # (half to even, as PyTorch's)
    lo = fnp.floor(flat)
    below = fnp.take_along_axis(s, lo.astype(np.int64), axis=-1)
    above = fnp.take_along_axis(s, fnp.ceil(flat).astype(np.int64), axis=-1)
    if method in ("lower", "nearest"):
        r = below
    elif method == "higher":
        r = above
    else:
        w = flat - lo if method == "linear" else fnp.full_like(flat, 0.5)
        d = above - below
        r = fnp.where(w < 0.5, below + w * d, above - d * (1 - w))
    r = fnp.reshape(r, y.shape[:-1] + q.shape)
    if keepdims:
        kept = (1,) * x.ndim if axis is None else x.shape[:axis] + (1,) + x.shape[axis + 1 :]
        r = fnp.reshape(r, kept + q.shape)
    return fnp.moveaxis(r, -1, 0) if q.ndim else r


#: PyTorch's refusal of a quantile's ``out`` of another dtype than the input's (nanquantile's too)
_QUANTILE_OUT = "quantile() out tensor must be same dtype as the input tensor"


def _quantile(
    input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str, nan: bool
) -> Tensor:
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if _dt.kind(input._npdtype) != "f":
        raise RuntimeError(
            f"quantile() input tensor must be either float or double dtype, got {input.dtype}"
        )
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q._npdtype != input._npdtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    elif not 0 <= q <= 1:  # (a number: PyTorch prints it as C++'s stream does)
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q):g}")
    q = coerce(q)
    qv = np.asarray(q._st.array if isinstance(q, Tensor) else q)
    if np.any((qv < 0) | (qv > 1)):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    axis = None if dim is None else _wrap_dim(dim, input.ndim)
    st = (("axis", axis), ("keepdims", bool(keepdim)), ("method", interpolation), ("nan", nan))
    name = "NanquantileBackward0" if nan else "QuantileBackward0"
    if isinstance(q, Tensor):
        return apply(_quantile_f, name, (input, q), st)
    return apply(_quantile_f, name, (input, float(q)), st)


@defop(
    node_name=False,
    exact_out=_QUANTILE_OUT,
    samples=(
        Sample(((3, 4),), args=(0.3,)),
        Sample(((3, 4),), args=(0.5, 1, True)),
        Sample(((5,),), args=(0.4,), kwargs=(("interpolation", "lower"),)),
    ),
    bf16_error=(RuntimeError, "quantile() input tensor must be either float or double dtype"),
)
def quantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    return _quantile(input, q, dim, keepdim, interpolation, False)


@defop(
    node_name=False,
    exact_out=_QUANTILE_OUT,
    samples=Sample(((3, 4),), args=(0.3, 1)),
    bf16_error=(RuntimeError, "quantile() input tensor must be either float or double dtype"),
)
def nanquantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    return _quantile(input, q, dim, keepdim, interpolation, True)


def _cumext_f(x: Any, *, axis: int, op: str) -> Any:
    if x.dtype == np.bool_:  # (funcgrad's cummax takes numbers only; PyTorch takes bool)
        vals, idx = _cumext_f(fnp.asarray(x, np.uint8), axis=axis, op=op)
        return fnp.asarray(vals, np.bool_), idx
    if x.ndim == 0:
        return x * 1, fnp.zeros((), np.int64)
    run = flax.cummax(x, axis=axis) if op == "max" else flax.cummin(x, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    pos = fnp.broadcast_to(fnp.reshape(fnp.arange(x.shape[axis]), shape), x.shape)
    # the latest position where the running extremum was reached; from the first NaN on,
    # the latest NaN (PyTorch's running value stays NaN; lax's cummax skips NaN)
    hit = x == run
    if _dt.kind(x.dtype) == "f":
        nan = fnp.isnan(x)
        hit = fnp.where(flax.cummax(fnp.asarray(nan, np.uint8), axis=axis) > 0, nan, hit)
    idx = flax.cummax(fnp.where(hit, pos, 0), axis=axis)
    return fnp.take_along_axis(x, idx, axis=axis), fnp.asarray(idx, np.int64)


def _cumext_axis(input: Tensor, dim: int, name: str) -> int:
    if input.ndim == 0 and dim not in (0, -1):
        raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
    return _wrap_dim(dim, builtins.max(input.ndim, 1))


@defop(samples=Sample(((3, 4),), args=(1,)))
def cummax(input: Tensor, dim: int) -> ValuesIndices:
    axis = _cumext_axis(input, dim, "cummax")
    return return_type("cummax", _VI)(
        *apply(_cumext_f, "CummaxBackward0", (input,), (("axis", axis), ("op", "max")))
    )


@defop(samples=Sample(((3, 4),), args=(0,)))
def cummin(input: Tensor, dim: int) -> ValuesIndices:
    axis = _cumext_axis(input, dim, "cummin")
    return return_type("cummin", _VI)(
        *apply(_cumext_f, "CumminBackward0", (input,), (("axis", axis), ("op", "min")))
    )


def _logcumsumexp_f(x: Any, *, axis: int) -> Any:
    if x.ndim == 0:  # (a 0-d tensor's dim 0 is the tensor itself, as PyTorch)
        return x * 1
    return flax.cumlogsumexp(x, axis=axis)


@defop(
    samples=Sample(((3, 4),), args=(1,)), exact_out="expected scalar_type {want} but found {got}"
)
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, without overflow."""
    if _dt.kind(input._npdtype) in "biu":
        kind = _dt.scalar_type_name(input._npdtype)
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{kind}'")
    axis = _wrap_dim(dim, builtins.max(input.ndim, 1))
    return apply(_logcumsumexp_f, "LogcumsumexpBackward0", (input,), (("axis", axis),))


def _searchsorted_f(s: Any, v: Any, *, side: str, dtype: np.dtype) -> Any:
    if s.ndim == 1:
        out = fnp.searchsorted(s, v, side=side)
    else:
        flat_s = fnp.reshape(s, (-1, s.shape[-1]))
        flat_v = fnp.reshape(v, (-1, v.shape[-1]))
        rows = [fnp.searchsorted(flat_s[i], flat_v[i], side=side) for i in range(flat_s.shape[0])]
        out = fnp.reshape(fnp.stack(rows), v.shape)
    return fnp.asarray(out, dtype)


@defop(
    method=False,
    samples=(
        Sample((), args=(T((5,)), T((2, 3))), method=False, grad=False),
        Sample((), args=(T((2, 4)), T((2, 3))), kwargs=(("right", True),), grad=False),
    ),
)
def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """Insertion points of ``input`` into the last dimension of ``sorted_sequence``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of "
                "left while right was True"
            )
        right = side == "right"
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    v = tensor(np.asarray([input])) if scalar else input
    if sorted_sequence.ndim > 1 and tuple(sorted_sequence.shape[:-1]) != tuple(v.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
            f"{list(v.shape)}"
        )
    dt = np.dtype(np.int32 if out_int32 else np.int64)
    st = (("side", "right" if right else "left"), ("dtype", dt))
    out = apply(_searchsorted_f, "searchsorted", (sorted_sequence, v), st)
    return out.reshape(()) if scalar else out


@defop(
    method=False,
    samples=Sample(((2, 3),), args=(T((5,)),), grad=False, method=False),
    number_first=True,
)
def bucketize(
    input: Tensor, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    """The bucket of each element: ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``:
    ``boundaries[i-1] <= x < boundaries[i]``)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    sorted_boundaries = boundaries
    return searchsorted(sorted_boundaries, input, out_int32=out_int32, right=right)


def _ident_f(x: Any) -> Any:
    return x


def _no_derivative(vals: np.ndarray, input: Tensor, node: str, aten: str) -> Tensor:
    """``vals`` as an output of ``input``'s op whose backward PyTorch does not implement:
    it requires grad (a ``node`` node) when ``input`` does, and backward through it raises."""
    out = tensor(vals)
    if not (input._requires_grad and _gm._state.record):
        return out
    out = apply(_ident_f, node, (out.requires_grad_(),))

    def hook(grad: Tensor) -> None:
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")

    out.register_hook(hook)
    return out


@defop(
    out=False,
    samples=(
        Sample(((8,),), dtype="int64", domain=(0, 3), grad=False),
        Sample(
            ((8,),),
            kwargs=(("return_inverse", True), ("return_counts", True)),
            dtype="int64",
            domain=(0, 3),
            grad=False,
        ),
        Sample(((4, 2),), kwargs=(("dim", 0),), dtype="int64", domain=(0, 1), grad=False),
    ),
    numpy_names=(),  # (PyTorch's are Python functions: no ``axis=``)
)
def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """Distinct values (sorted), optionally the inverse indices and counts; the output
    size depends on the data, so the values are read eagerly."""
    if dim is None:
        out = _unique_parts(input, None, "Unique2Backward0", "_unique2")
    else:
        out = _unique_parts(input, dim, "UniqueDimBackward0", "unique_dim")
    out = [o for o, keep in zip(out, (True, return_inverse, return_counts)) if keep]
    return out[0] if len(out) == 1 else tuple(out)


def _unique_parts(input: Tensor, dim: int | None, node: str, aten: str) -> list[Tensor]:
    """The distinct values (sorted; a ``node`` output of ``input``), the inverse indices
    and the counts."""
    x = np.asarray(input._st.array)
    axis = None if dim is None else _wrap_dim(dim, input.ndim)
    vals, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(x.shape if axis is None else (x.shape[axis],))
    return [
        _no_derivative(vals, input, node, aten),
        tensor(inv.astype(np.int64)),
        tensor(counts.astype(np.int64)),
    ]


def _empty_unless(t: Tensor, keep: bool) -> Tensor:
    return t if keep else tensor(np.zeros(0, np.int64))


@defop(
    out=False,
    method=False,
    samples=Sample(((8,),), dtype="int64", domain=(0, 3), grad=False, method=False),
)
def _unique(input: Tensor, sorted: bool = True, return_inverse: bool = False) -> tuple:
    """PyTorch's internal ``torch._unique``: values and inverse (empty unless asked for)."""
    vals, inv, _ = _unique_parts(input, None, "UniqueBackward0", "_unique")
    return vals, _empty_unless(inv, return_inverse)


@defop(
    out=False,
    method=False,
    samples=Sample(((8,),), dtype="int64", domain=(0, 3), grad=False, method=False),
)
def _unique2(
    input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False
) -> tuple:
    """PyTorch's internal ``torch._unique2``: values, inverse and counts (each of the last
    two empty unless asked for)."""
    vals, inv, counts = _unique_parts(input, None, "Unique2Backward0", "_unique2")
    return vals, _empty_unless(inv, return_inverse), _empty_unless(counts, return_counts)


def unique_dim(
    input: Tensor,
    dim: int,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
) -> tuple:
    """``torch._VF.unique_dim``: the distinct slices along ``dim``, the inverse and the
    counts (all three always, as PyTorch's)."""
    return tuple(_unique_parts(input, dim, "UniqueDimBackward0", "unique_dim"))


@defop(
    out=False,
    samples=Sample(
        ((8,),),
        kwargs=(("return_inverse", True), ("return_counts", True)),
        dtype="int64",
        domain=(0, 2),
        grad=False,
    ),
    numpy_names=(),  # (PyTorch's are Python functions: no ``axis=``)
)
def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """Collapse runs of equal consecutive values (eager, like :func:`unique`)."""
    x = np.asarray(input._st.array)
    axis = 0 if dim is not None else None
    if dim is not None:
        x = np.moveaxis(x, _wrap_dim(dim, input.ndim), 0)
        change = np.any(x[1:] != x[:-1], axis=tuple(range(1, x.ndim))) if len(x) else []
    else:
        x = x.reshape(-1)
        change = x[1:] != x[:-1]
    starts = np.concatenate([[True], np.asarray(change, bool)]) if len(x) else np.zeros(0, bool)
    vals = x[starts]
    if dim is not None:
        vals = np.moveaxis(vals, 0, _wrap_dim(dim, input.ndim))
    inv = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.nonzero(starts)[0], len(x)))
    out = [_no_derivative(vals, input, "UniqueConsecutiveBackward0", "unique_consecutive")]
    if return_inverse:
        shape = input.shape if axis is None else (len(x),)
        out.append(tensor(inv.reshape(tuple(shape)).astype(np.int64)))
    if return_counts:
        out.append(tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _bincount_f(x: Any, *w: Any, n: int, dtype: np.dtype) -> Any:
    weights = _c(w[0], dtype) if w else None
    return fnp.bincount(x, weights=weights, length=n).astype(dtype)


@defop(
    out=False,
    samples=(
        Sample(((8,),), dtype="int64", domain=(0, 4), grad=False),
        Sample((Idx((6,), 4),), kwargs=(("weights", T((6,))), ("minlength", 6)), grad=False),
    ),
)
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """Counts of each non-negative integer (weighted sums with ``weights``)."""
    if input.ndim != 1 or _dt.kind(input._npdtype) not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    x = np.asarray(input._st.array)
    if x.size and x.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = builtins.max(int(x.max()) + 1 if x.size else 0, int(minlength))
    if weights is None:
        return apply(_bincount_f, "bincount", (input,), (("n", n), ("dtype", np.dtype(np.int64))))
    dt = np.dtype(np.float64) if weights._npdtype == np.float64 else weights._npdtype
    if _dt.kind(dt) != "f":
        dt = np.dtype(np.float64)
    return apply(_bincount_f, "bincount", (input, weights), (("n", n), ("dtype", dt)))


def _histc_f(x: Any, *, bins: int, lo: float, hi: float) -> Any:
    width = (hi - lo) / bins
    b = fnp.floor((x - lo) / width).astype(np.int64)
    b = fnp.where(x == hi, bins - 1, b)
    inside = (x >= lo) & (x <= hi)
    b = fnp.where(inside, b, bins)
    return fnp.bincount(fnp.reshape(b, (-1,)), length=bins + 1)[:bins].astype(x.dtype)


@defop(
    samples=(Sample(((20,),), args=(5,), grad=False), Sample(((20,),), args=(4, -1, 1), grad=False))
)
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram with ``bins`` equal-width bins over ``[min, max]`` (the data's range
    when both are 0); values outside are ignored."""
    if _dt.kind(input._npdtype) != "f":
        raise RuntimeError(
            f"\"histogram_cpu\" not implemented for '{_dt.scalar_type_name(input._npdtype)}'"
        )
    lo, hi = float(min), float(max)
    if lo == hi:
        x = np.asarray(input._st.array)
        lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
        if lo == hi:
            lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return apply(_histc_f, "histc", (input,), (("bins", int(bins)), ("lo", lo), ("hi", hi)))
