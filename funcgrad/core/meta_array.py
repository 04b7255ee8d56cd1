"""Arrays with a shape and a dtype and no values: what PyTorch's ``meta`` device holds.

A program run on a :class:`MetaArray` argument is not evaluated: its outputs are
``MetaArray``s of its output avals, which abstract evaluation computed when the program
was traced (every primitive's shape and dtype rule). So the shapes, dtypes and shape
errors of a meta computation are those of the real one, with no second implementation,
no memory and no random draws. Anything that needs the values (NumPy or JAX conversion)
raises ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core.ir import Aval, Program


class MetaArray:
    """A shape and a dtype standing for an array whose values do not exist."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape: Sequence[int], dtype: Any) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def aval(self) -> Aval:
        return Aval(self.shape, self.dtype)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("a meta array has no values")

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def has_meta(args: Sequence[Any]) -> bool:
    """Whether any of ``args`` is a :class:`MetaArray` (a plain loop: a quarter of the
    cost of ``any`` over a generator, paid by every op deferred under lazy execution)."""
    for a in args:  # noqa: SIM110  (the loop is the fast form here)
        if type(a) is MetaArray:
            return True
    return False


def meta_outputs(prog: Program) -> list[MetaArray]:
    """``prog``'s outputs on meta arguments: its output avals, nothing evaluated."""
    return [MetaArray(v.aval.shape, v.aval.dtype) for v in prog.outvars]
