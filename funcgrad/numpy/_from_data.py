"""Arrays built from given data: host buffers and text (``frombuffer``, ``fromstring``;
``fromiter`` refused, as JAX), nested blocks (``block``) and cyclic repetition (``resize``)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.numpy import _info
from funcgrad.numpy._core import ArrayLike, aval, check_arraylike, out
from funcgrad.numpy._creation import DECLARED, asarray
from funcgrad.numpy._shape import concatenate, ravel, reshape, tile


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """A 1-D array interpreting ``buffer``'s bytes as ``dtype`` (copied to the device)."""
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-D array parsed from text ``string`` with separator ``sep``."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """Not implemented, as in JAX: consuming an iterator is not a pure function."""
    raise NotImplementedError(
        "funcgrad.numpy.fromiter() is not implemented because it may be non-pure and thus "
        "unsafe for use with jit and other transformations. Consider "
        "_creation.asarray(np.fromiter(...)) instead."
    )


def block(arrays: ArrayLike | list) -> Any:
    """Assemble an array from nested lists of blocks (innermost lists join the last axis)."""

    def depth(x: Any) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)

    d = depth(arrays)
    if d == 0:
        return asarray(arrays)
    leaves_ndim = []

    def collect(x: Any) -> None:
        if isinstance(x, list):
            for e in x:
                collect(e)
        else:
            leaves_ndim.append(_info.ndim_of(x))

    collect(arrays)
    nd = builtins.max([d, *leaves_ndim])

    def rec(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            a = asarray(x)
            return reshape(a, (1,) * (nd - aval(a).ndim) + aval(a).shape)
        if not x:
            raise ValueError("Lists cannot be empty")
        parts = [rec(e, level + 1) for e in x]
        return concatenate(parts, axis=-(d - level))

    return out(rec(arrays, 0))


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Any:
    """``a`` flattened, repeated cyclically and reshaped to ``new_shape``."""
    check_arraylike("resize", a)
    a = ravel(a)
    shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    if any(s < 0 for s in shape):
        raise ValueError("All elements of `new_shape` must be non-negative")
    total = int(np.prod(shape, dtype=np.int64))
    n = aval(a).shape[0]
    if n == 0 or total == 0:
        return out(DECLARED["zeros"](shape, aval(a).dtype))
    reps = -(-total // n)
    return out(reshape(tile(a, reps)[:total], shape))
