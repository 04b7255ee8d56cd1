"""``torch.Size``: a tensor's shape, a tuple of ints with PyTorch's tuple operations."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["Size"]


class Size(tuple):
    """A tensor's shape (``torch.Size``): a tuple of ints; slices, ``+`` and ``*`` with
    tuples give ``Size``s, as PyTorch's."""

    def __new__(cls, sizes: Any = ()) -> Size:
        t = tuple(sizes)
        for d in t:
            if type(d) is not int:
                t = tuple(_size_item(i, v) for i, v in enumerate(t))
                break
        return tuple.__new__(cls, t)

    def __repr__(self) -> str:
        return f"torch.Size({list(self)!r})"

    def __getitem__(self, key: Any) -> Any:
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other: Any) -> Any:
        if isinstance(other, tuple):
            return Size(tuple.__add__(self, other))
        if hasattr(type(other), "__radd__"):
            return NotImplemented
        raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, tuple):
            return Size(tuple.__add__(other, self))
        return NotImplemented

    def __mul__(self, n: Any) -> Any:
        out = tuple.__mul__(self, n)
        return out if out is NotImplemented else Size(out)

    __rmul__ = __mul__

    def __reduce__(self) -> Any:
        return (Size, (tuple(self),))

    def numel(self) -> int:
        return int(math.prod(self))


def _size_item(i: int, v: Any) -> int:
    """An item of ``torch.Size(...)``: an int, a NumPy integer or a one-element integer
    tensor (PyTorch's ``TypeError`` for anything else)."""
    if isinstance(v, (int, np.integer)):
        return int(v)
    dtype = getattr(v, "dtype", None)  # a tensor (duck-typed: this module precedes Tensor's)
    integral = hasattr(dtype, "is_floating_point") and not (
        dtype.is_floating_point or dtype.is_complex
    )
    if integral and hasattr(v, "numel") and v.numel() == 1:
        return int(v.item())
    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(v).__name__}')")
