"""Python functions applied over arrays: ``vectorize`` (``vmap`` over broadcast loop
axes, with gufunc signatures), ``apply_along_axis``, ``apply_over_axes``, ``piecewise``
(functions chosen by conditions) and ``fromfunction`` (a function of the index grids)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.api import vmap
from funcgrad.numpy import _creation, _info, _shape, _ufuncs
from funcgrad.numpy._core import ArrayLike, aval, check_arraylike, normalize_axis, out
from funcgrad.numpy._index_tricks import indices


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    def dims(group: str) -> list[tuple[str, ...]]:
        return [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([\w,]*)\)", group)]

    if "->" not in signature:
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.replace(" ", "").split("->")
    return dims(ins), dims(outs)


def _check_excluded(excluded: Any) -> frozenset:
    """``excluded`` as a set of positions (non-negative ints) and keyword names."""
    excluded = frozenset(excluded)
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(
            "jax.numpy.vectorize can only exclude integer or string arguments, but "
            f"excluded={set(excluded)!r}"
        )
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={set(excluded)!r} contains negative numbers")
    return excluded


def _bind_dim(sizes: dict, name: str, n: int, where: str) -> None:
    """Record core dimension ``name``'s size ``n``; a different size seen before is an
    error."""
    if sizes.setdefault(name, n) != n:
        raise ValueError(
            f"inconsistent size for core dimension {name!r}: {n} vs {sizes[name]}{where}"
        )


def _check_outputs(res: Any, out_core: list, sizes: dict, where: str) -> None:
    """``pyfunc``'s result (one example's) against the signature's output core dims."""
    if len(out_core) == 1:
        outs = [res]
    else:
        if not isinstance(res, tuple):
            raise TypeError(
                f"output must be a tuple when multiple outputs are expected, got: {res!r}{where}"
            )
        if len(res) != len(out_core):
            raise TypeError(
                f"wrong number of output arguments: expected {len(out_core)}, got {len(res)}{where}"
            )
        outs = list(res)
    for o, dims in zip(outs, out_core):
        shape = _info.shape_of(o)
        if len(shape) != len(dims):
            raise ValueError(f"output shape {shape} does not match core dimensions {dims}{where}")
        for name, n in zip(dims, shape):
            _bind_dim(sizes, name, n, where)


def vectorize(
    pyfunc: Callable, *, excluded: Any = frozenset(), signature: str | None = None
) -> Callable:
    """A function that maps ``pyfunc`` over the broadcast leading (loop) axes of its array
    arguments with ``vmap``; ``signature`` (``"(n),(n)->()"``) names each argument's core
    axes (checked on inputs and outputs); positional indices or keyword names in
    ``excluded`` are passed through, and so are ``None`` arguments without a signature."""
    excluded = _check_excluded(excluded)
    sig = None if signature is None else _parse_signature(signature)
    where = f" on vectorized function with excluded={excluded!r} and signature={signature!r}"

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        nones = {i for i, a in enumerate(args) if a is None and i not in excluded}
        if nones and sig is not None:
            raise ValueError(f"Cannot pass None at locations {nones} with signature={signature!r}")
        skip = excluded | nones
        static = {i: a for i, a in enumerate(args) if i in skip}
        skw = {k: v for k, v in kwargs.items() if k in skip}
        dyn_kw = [k for k in kwargs if k not in skip]
        dyn = [_creation.asarray(a) for i, a in enumerate(args) if i not in skip]
        dyn += [_creation.asarray(kwargs[k]) for k in dyn_kw]
        core = sig[0] if sig is not None else [()] * len(dyn)
        if len(core) != len(dyn):
            raise TypeError(
                f"wrong number of positional arguments: expected {len(core)}, got {len(dyn)}{where}"
            )
        sizes: dict[str, int] = {}
        for a, dims in zip(dyn, core):
            shape = aval(a).shape
            if len(shape) < len(dims):
                raise ValueError(
                    f"input with shape {shape!r} does not have enough dimensions for all core "
                    f"dimensions {dims!r}{where}"
                )
            for name, n in zip(dims, shape[len(shape) - len(dims) :]):
                _bind_dim(sizes, name, n, where)
        loops = [aval(a).shape[: aval(a).ndim - len(c)] for a, c in zip(dyn, core)]
        loop = np.broadcast_shapes(*loops) if loops else ()
        dyn = [
            _shape.broadcast_to(a, (*loop, *aval(a).shape[len(s) :])) for a, s in zip(dyn, loops)
        ]

        def call(*xs: Any) -> Any:
            full, it = [], iter(xs[: len(xs) - len(dyn_kw)])
            for i in range(len(args)):
                full.append(static[i] if i in static else next(it))
            kw = dict(skw, **dict(zip(dyn_kw, xs[len(xs) - len(dyn_kw) :])))
            res = pyfunc(*full, **kw)
            if sig is not None:
                _check_outputs(res, sig[1], dict(sizes), where)
            return res

        f = call
        for _ in loop:
            f = vmap(f)
        return f(*dyn)

    return wrapped


def apply_along_axis(func1d: Callable, axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis`` (one ``vmap`` per
    other axis)."""

    a = _creation.asarray(arr)
    nd = aval(a).ndim
    ax = normalize_axis(axis, nd, "apply_along_axis")

    def f(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    for _ in range(nd - 1):
        f = vmap(f)
    res = f(_shape.moveaxis(a, ax, -1))  # (*other axes, *func1d's output axes)
    k = aval(res).ndim - (nd - 1)
    perm = (*range(ax), *range(nd - 1, nd - 1 + k), *range(ax, nd - 1))
    return _shape.transpose(res, perm)


def pad(array: ArrayLike, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    """Pad an array (``jnp.pad``): the modes of :func:`funcgrad.numpy._shape.pad`, or a
    function ``mode(vector, (before, after), axis, kwargs)`` returning each 1-D slice
    with its padding filled in (NumPy's convention, but returning the vector, as JAX);
    the padding starts as zeros and the function runs along each axis in turn."""
    if not callable(mode):
        return _shape.pad(array, pad_width, mode, **kwargs)
    a = _creation.asarray(array)
    widths = _shape._pad_widths("pad", pad_width, aval(a).ndim)
    a = _shape.pad(a, widths)
    for ax, w in enumerate(widths):
        a = apply_along_axis(mode, ax, a, w, ax, kwargs)
    return a


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Sequence[int]) -> Any:
    """Apply ``func(a, axis)`` repeatedly, keeping the reduced axes."""
    a = _creation.asarray(a)
    for axis in axes:
        b = func(a, axis)
        a = b if _info.ndim_of(b) == _info.ndim_of(a) else _shape.expand_dims(b, axis)
    return a


def piecewise(x: ArrayLike, condlist: Any, funclist: list, *args: Any, **kw: Any) -> Any:
    """Evaluate each function (or constant) of ``funclist`` where its condition holds (an
    extra last function is the default)."""
    check_arraylike("piecewise", x)
    x = _creation.asarray(x)
    conds = _creation.asarray(condlist)
    if aval(conds).ndim == aval(x).ndim:
        conds = conds[None]
    nc, nf = aval(conds).shape[0], len(funclist)
    if nf == nc + 1:
        default = funclist[-1]
        funclist = funclist[:-1]
    elif nf == nc:
        default = 0
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )

    def ev(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return _creation.asarray(v, dtype=aval(x).dtype)

    res = _shape.broadcast_to(ev(default), aval(x).shape)
    for i in range(nc):
        res = _ufuncs.where(conds[i], ev(funclist[i]), res)
    return out(res)


def fromfunction(
    function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any
) -> Any:
    """``function`` evaluated on the index grids of ``shape``."""
    grids = indices(shape, dtype=dtype, sparse=False)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)
