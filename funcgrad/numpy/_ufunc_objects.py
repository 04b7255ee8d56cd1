"""``funcgrad.numpy.ufunc`` and ``frompyfunc``: NumPy's universal-function objects, as
``jax.numpy``'s: ``add``, ``multiply``, ``maximum``, ... are callables with ``reduce``,
``accumulate``, ``reduceat``, ``outer`` and ``at`` (``inplace=False``: arrays are
immutable), and ``nin``/``nout``/``nargs``/``identity``.

The methods of a ufunc come from its binary function in general (a fold along the axis as
a ``scan``, sequential updates for ``at``), so ``frompyfunc(f, nin=2, nout=1)`` has them
all; ``add``, ``multiply``, ``maximum``, ``minimum``, ``logical_and`` and ``logical_or``
use their reductions, cumulative sums and scatter updates instead (``UFUNC_TABLE``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.control_flow import fori_loop, scan
from funcgrad.numpy import _creation, _reductions, _shape
from funcgrad.numpy._at import _IndexUpdateRef
from funcgrad.numpy._core import ArrayLike, as_array, aval, normalize_axes, normalize_axis
from funcgrad.numpy._functional import vectorize
from funcgrad.numpy._ufuncs import where as _where

__all__ = ["UFUNC_TABLE", "frompyfunc", "ufunc", "ufunc_objects"]


class ufunc:
    """A universal function: ``func`` applied elementwise, with NumPy's methods.

    Args:
        func: the elementwise function of ``nin`` arrays (broadcasting them).
        nin: its number of inputs (the methods but ``__call__`` and ``at`` need 2, as
            NumPy's).
        nout: its number of outputs (the methods need 1).
        name: the name in messages and ``repr`` (``func.__name__`` by default).
        nargs: ``nin + nout`` by default.
        identity: the value a reduction of nothing gives (``None``: none, an empty
            reduction is an error).
        call: a faster ``__call__`` on arrays (``func`` vectorised otherwise).
        reduce: a faster :meth:`reduce` (its keyword arguments, without ``out``).
        accumulate: a faster :meth:`accumulate` (``axis`` and ``dtype``).
        at: a faster :meth:`at` of ``(a, indices, b)``.
        reduceat: a faster :meth:`reduceat` (``axis`` and ``dtype``).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        /,
        nin: int,
        nout: int,
        *,
        name: str | None = None,
        nargs: int | None = None,
        identity: Any = None,
        call: Callable[..., Any] | None = None,
        reduce: Callable[..., Any] | None = None,
        accumulate: Callable[..., Any] | None = None,
        at: Callable[..., Any] | None = None,
        reduceat: Callable[..., Any] | None = None,
    ) -> None:
        fields = {
            "_func": func,
            "_nin": int(nin),
            "_nout": int(nout),
            "_nargs": int(nin) if nargs is None else int(nargs),
            "_identity": identity,
            "__name__": name or getattr(func, "__name__", "ufunc"),
            "__doc__": getattr(call or func, "__doc__", None),
            "_call": call,
            "_reduce": reduce,
            "_accumulate": accumulate,
            "_at": at,
            "_reduceat": reduceat,
            # the function on arrays: ``call``, or ``func`` vectorised (it may take
            # scalars only, as ``frompyfunc``'s functions do)
            "_elementwise": call if call is not None else vectorize(func),
        }
        for k, v in fields.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ufunc {self.__name__!r}: attribute {name!r} is read-only")

    nin = property(lambda self: self._nin, doc="The number of inputs.")
    nout = property(lambda self: self._nout, doc="The number of outputs.")
    nargs = property(lambda self: self._nargs, doc="The number of arguments (``nin``).")
    identity = property(lambda self: self._identity, doc="The reduction of nothing.")

    def _key(self) -> tuple:
        return (
            self._func,
            self._nin,
            self._nout,
            self.__name__,
            self._nargs,
            self._identity,
            self._call,
            self._reduce,
            self._accumulate,
            self._at,
            self._reduceat,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: ArrayLike, out: None = None, where: None = None) -> Any:
        """``func`` of the arguments (``out`` and ``where`` are NumPy's, not supported)."""
        if out is not None:
            raise NotImplementedError(f"{self.__name__}: the 'out' argument is not supported.")
        if where is not None:
            raise NotImplementedError(f"{self.__name__}: the 'where' argument is not supported.")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} arguments, got {len(args)}")
        return self._elementwise(*args)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs")

    def reduce(
        self,
        a: ArrayLike,
        axis: int | tuple[int, ...] | None = 0,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: ArrayLike | None = None,
        where: ArrayLike | None = None,
    ) -> Any:
        """``a`` folded with the function along ``axis`` (all axes for ``None``)."""
        self._binary("reduce")
        _no_out(self.__name__, "reduce", out)
        if self._reduce is not None:
            return self._reduce(
                a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
            )
        x = _cast(as_array(a, f"{self.__name__}.reduce"), dtype)
        nd = aval(x).ndim
        if isinstance(axis, tuple) and len(axis) != 1:  # (as JAX's: a fold has an order)
            raise NotImplementedError(f"{self.__name__}.reduce: tuple of axes")
        axes = tuple(range(nd)) if axis is None else normalize_axes(axis, nd, "reduce")
        if where is not None:
            start = initial if initial is not None else self.identity
            if start is None:
                raise ValueError(
                    f"reduction operation {self.__name__!r} does not have an identity, so to "
                    "use a where mask one has to specify 'initial'"
                )
            mask = _shape.broadcast_to(as_array(where, f"{self.__name__}.reduce"), aval(x).shape)
            x = _where(mask, x, _creation.full_like(x, start))
        rest = [d for d in range(nd) if d not in axes]
        rows = _shape.reshape(
            _shape.transpose(x, (*axes, *rest)), (-1, *[aval(x).shape[d] for d in rest])
        )
        # (from the identity when there is one, as JAX's: ``frompyfunc``'s may not be neutral)
        start = initial if initial is not None else self.identity
        res = _fold(self._elementwise, rows, start, self.__name__, self.identity)
        if keepdims:
            res = _shape.reshape(
                res, tuple(1 if d in axes else k for d, k in enumerate(aval(x).shape))
            )
        return res

    def accumulate(self, a: ArrayLike, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running results of :meth:`reduce` along ``axis``."""
        self._binary("accumulate")
        _no_out(self.__name__, "accumulate", out)
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        x = _cast(as_array(a, f"{self.__name__}.accumulate"), dtype)
        ax = normalize_axis(axis, aval(x).ndim, "accumulate")
        rows = _shape.moveaxis(x, ax, 0)
        if aval(rows).shape[0] == 0:
            return x
        f = self._elementwise

        def step(carry: Any, v: Any) -> Any:
            nxt = f(carry, v)
            return nxt, nxt

        _, later = scan(step, rows[0], rows[1:])
        return _shape.moveaxis(_shape.concatenate([rows[:1], later], axis=0), 0, ax)

    def reduceat(
        self, a: ArrayLike, indices: Any, axis: int = 0, dtype: Any = None, out: None = None
    ) -> Any:
        """:meth:`reduce` over the slices ``indices[i]:indices[i + 1]`` along ``axis``
        (``a[indices[i]]`` where the next index is not larger), as NumPy's; ``indices``
        may be traced (one loop over ``a``'s rows folds every slice)."""
        self._binary("reduceat")
        _no_out(self.__name__, "reduceat", out)
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        x = _cast(as_array(a, f"{self.__name__}.reduceat"), dtype)
        ax = normalize_axis(axis, aval(x).ndim, "reduceat")
        idx = as_array(indices, f"{self.__name__}.reduceat")
        if aval(idx).ndim != 1:
            raise ValueError(f"{self.__name__}.reduceat: indices must be 1-D, got {aval(idx)}")
        rows = _shape.moveaxis(x, ax, 0)  # (n, ...)
        n, k = aval(rows).shape[0], aval(idx).shape[0]
        start = idx.astype(np.int32)
        stop = _shape.concatenate([start[1:], _creation.full((min(k, 1),), n, np.int32)])
        stop = _where(stop > start, stop, start + 1)  # (a lone element where not increasing)
        lead = (k,) + (1,) * (aval(rows).ndim - 1)
        start, stop = _shape.reshape(start, lead), _shape.reshape(stop, lead)
        f = self._elementwise

        def body(p: Any, acc: Any) -> Any:  # every slice's fold, one row at a time
            row = rows[p]
            new = _where(p == start, _shape.broadcast_to(row, aval(acc).shape), f(acc, row))
            return _where((p >= start) & (p < stop), new, acc)

        acc = _creation.zeros((k, *aval(rows).shape[1:]), aval(rows).dtype)
        return _shape.moveaxis(fori_loop(0, n, body, acc), 0, ax)

    def outer(self, A: ArrayLike, B: ArrayLike, /) -> Any:
        """``func(A[i...], B[j...])`` for every pair: shape ``A.shape + B.shape``."""
        self._binary("outer")
        a, b = as_array(A, f"{self.__name__}.outer"), as_array(B, f"{self.__name__}.outer")
        a = _shape.reshape(a, aval(a).shape + (1,) * aval(b).ndim)
        return self(a, b)

    def at(
        self, a: ArrayLike, indices: Any, b: ArrayLike | None = None, /, *, inplace: bool = True
    ) -> Any:
        """``a`` with the function applied at ``indices`` (with ``b``'s values for a
        binary ufunc), repeated indices applied once each, in order; only
        ``inplace=False`` (the result is returned: arrays are immutable)."""
        if inplace:
            raise NotImplementedError(
                "Because arrays are immutable, ufunc.at() cannot operate inplace like "
                "np.ufunc.at(). Instead, pass inplace=False and capture the result; e.g.\n"
                f">>> arr = jnp.{self.__name__}.at(arr, ind, val, inplace=False)"
            )
        if self.nout != 1 or self.nin not in (1, 2):
            raise ValueError("at only supported for unary and binary ufuncs with one output")
        if (b is None) != (self.nin == 1):
            raise ValueError(
                f"{self.__name__}.at takes {'no' if self.nin == 1 else 'a'} b argument"
            )
        x = as_array(a, f"{self.__name__}.at")
        if self._at is not None:
            return self._at(x, indices, b)
        positions = _shape.ravel(
            _shape.reshape(_creation.arange(aval(x).size), aval(x).shape)[indices]
        )
        flat = _shape.ravel(x)
        values = (
            None
            if b is None
            else _shape.ravel(
                _shape.broadcast_to(as_array(b, f"{self.__name__}.at"), aval(x[indices]).shape)
            )
        )
        f = self._elementwise

        def body(k: Any, acc: Any) -> Any:
            p = positions[k]
            new = f(acc[p]) if values is None else f(acc[p], values[k])
            return _IndexUpdateRef(acc, p).set(new)

        flat = fori_loop(0, aval(positions).shape[0], body, flat)
        return _shape.reshape(flat, aval(x).shape)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A :class:`ufunc` of the elementwise function ``func`` (written with funcgrad's
    operations, so it traces), with the methods derived from it."""
    return ufunc(func, nin, nout, identity=identity)


def _no_out(name: str, method: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"{name}.{method}: the 'out' argument is not supported.")


def _cast(x: Any, dtype: Any) -> Any:
    return x if dtype is None else x.astype(dtype)


def _fold(f: Callable[..., Any], rows: Any, initial: Any, name: str, identity: Any) -> Any:
    """``rows`` (the reduced axis first) folded left to right, from ``initial`` if given."""
    n = aval(rows).shape[0]
    if initial is not None:
        start = _shape.broadcast_to(
            _creation.asarray(initial, aval(rows).dtype), aval(rows).shape[1:]
        )
        body = rows
    elif n == 0:
        if identity is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        return _creation.full(aval(rows).shape[1:], identity, aval(rows).dtype)
    else:
        start, body = rows[0], rows[1:]
    if aval(body).shape[0] == 0:
        return start
    res, _ = scan(lambda c, v: (f(c, v), None), start, body)
    return res


def _reduction(fn: Callable[..., Any], takes_dtype: bool = True) -> Callable[..., Any]:
    """``ufunc.reduce`` through the reduction ``fn`` (``sum``, ``max``, ``all``, ...)."""

    def reduce(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any) -> Any:
        kw: dict[str, Any] = {"keepdims": keepdims, "where": where}
        if initial is not None:
            kw["initial"] = initial
        if takes_dtype:
            return fn(a, axis=axis, dtype=dtype, **kw)
        return fn(_cast(as_array(a, "reduce"), dtype), axis=axis, **kw)

    return reduce


def _cumulative(fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda a, *, axis, dtype: fn(a, axis=axis, dtype=dtype)


def _scatter(method: str) -> Callable[..., Any]:
    return lambda x, indices, b: getattr(_IndexUpdateRef(x, indices), method)(b)


#: the ufuncs ``jax.numpy`` makes objects of: identity, and the faster methods
#: (``reduce``, ``accumulate``, ``at``) where a reduction, cumulative operation or scatter
#: update computes them
UFUNC_TABLE: dict[str, dict[str, Any]] = {
    "add": dict(
        identity=0,
        reduce=_reduction(_reductions.sum),
        accumulate=_cumulative(_reductions.cumsum),
        at=_scatter("add"),
    ),
    "multiply": dict(
        identity=1,
        reduce=_reduction(_reductions.prod),
        accumulate=_cumulative(_reductions.cumprod),
        at=_scatter("multiply"),
    ),
    "maximum": dict(reduce=_reduction(_reductions.max, False), at=_scatter("max")),
    "minimum": dict(reduce=_reduction(_reductions.min, False), at=_scatter("min")),
    "logical_and": dict(identity=True, reduce=_reduction(_reductions.all, False)),
    "logical_or": dict(identity=False, reduce=_reduction(_reductions.any, False)),
    "logical_xor": dict(identity=False),
    "bitwise_and": dict(identity=-1),
    "bitwise_or": dict(identity=0),
    "bitwise_xor": dict(identity=0),
    "logaddexp": dict(identity=-np.inf),
    "logaddexp2": dict(identity=-np.inf),
    "subtract": {},
    "negative": {},
}


def ufunc_objects(forms: dict[str, Callable[..., Any]]) -> dict[str, ufunc]:
    """The :class:`ufunc` objects of the functions ``forms`` names (``funcgrad.numpy``'s
    declared elementwise forms) for every name of :data:`UFUNC_TABLE`."""
    out = {}
    for name, extra in UFUNC_TABLE.items():
        f = forms[name]
        nin = 1 if name == "negative" else 2
        out[name] = ufunc(f, nin, 1, name=name, call=f, **extra)
    return out
