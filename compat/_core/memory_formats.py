"""``torch.memory_format`` and its values (``torch.contiguous_format``, ``channels_last``,
...): accepted wherever PyTorch takes ``memory_format=``."""

from __future__ import annotations

import itertools
from typing import Any

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "dim_order",
    "is_contiguous_as",
    "layout",
    "memory_format",
    "preserve_format",
    "strided",
]


class memory_format:
    """``torch.contiguous_format`` & co: accepted by ``memory_format=`` arguments (compat
    makes contiguous tensors whatever they ask, and those read as contiguous in every
    format); ``dim_order()`` and ``is_contiguous(memory_format=)`` of other layouts read
    the actual strides (:func:`is_contiguous_as`)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


class layout(str):
    """``torch.layout``: compat's one layout is ``torch.strided`` (a single object, so
    ``t.layout is torch.strided`` holds; equal to its name, which compat compared with)."""

    def __repr__(self) -> str:
        return str.__str__(self)

    def __reduce__(self) -> str:
        return "strided"  # (copies and pickles are the one object, as PyTorch's)


strided = layout("torch.strided")

contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def _dense_in_order(shape: tuple, strides: tuple, order: tuple) -> bool:
    """Whether the dims, innermost first in ``order``, are laid out one after another
    (dims of size 1 do not count)."""
    expected = 1
    for d in order:
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def is_contiguous_as(
    shape: tuple, strides: tuple, fmt: memory_format | None, contiguous: bool
) -> bool:
    """PyTorch's ``is_contiguous(memory_format=fmt)`` of a tensor of this layout
    (``contiguous``: its plain contiguity): channels-last is NHWC (4-d) or NDHWC (5-d)
    order, false for other ranks; the contiguous and preserve formats are the plain one."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return contiguous
    if not isinstance(fmt, memory_format):
        raise TypeError(
            "is_contiguous(): argument 'memory_format' must be torch.memory_format, not "
            f"{type(fmt).__name__}"
        )
    n = 4 if fmt is channels_last else 5
    if len(shape) != n:
        return False
    if 0 in shape:
        return True
    return _dense_in_order(shape, strides, (1, *range(n - 1, 1, -1), 0))


_AMBIGUOUS = (
    "The tensor does not have unique dim order, or cannot map to exact one of the given "
    "memory formats."
)


def _several_orders(shape: tuple, strides: tuple) -> bool:
    """Whether more than one dim order fits: a dim of size 1, or two neighbouring dims of
    one stride."""
    return 1 in shape or any(a == b for a, b in itertools.pairwise(strides))


def dim_order(shape: tuple, strides: tuple, contiguous: bool, ambiguity_check: Any) -> tuple:
    """``Tensor.dim_order``: the dims from outermost to innermost in memory, as PyTorch
    orders them. A contiguous (or else channels-last) layout gives its order; otherwise an
    insertion sort from the innermost logical dim by decreasing stride (equal strides: the
    larger size outside; a stride of 0 decides nothing). ``ambiguity_check=True`` refuses a
    layout with several orders; a list of memory formats refuses one with several orders
    unless it is contiguous in exactly one of them."""
    if not isinstance(ambiguity_check, bool) and not (
        isinstance(ambiguity_check, list)
        and all(isinstance(f, memory_format) for f in ambiguity_check)
    ):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    hits = sum(is_contiguous_as(shape, strides, f, contiguous) for f in formats)
    if check and _several_orders(shape, strides) and hits != 1:
        raise RuntimeError(_AMBIGUOUS)
    n = len(shape)
    if n <= 1:
        return tuple(range(n))
    last = is_contiguous_as(shape, strides, channels_last, contiguous)  # (4-d only, as PyTorch)
    if contiguous and not last:
        return tuple(range(n))
    if last and not contiguous:
        return (0, *range(2, n), 1)

    def outward(a: int, b: int) -> int:
        """For dim ``a`` now inside dim ``b``: 1 if ``a`` belongs outside, -1 if inside,
        0 if this layout does not tell."""
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if shape[b] >= shape[a] else 1
        return -1 if sb > sa else 1

    perm = list(range(n - 1, -1, -1))  # innermost first
    for i in range(1, n):
        j = i
        for k in range(i - 1, -1, -1):
            c = outward(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    if ambiguity_check and any(outward(a, b) != -1 for a, b in itertools.pairwise(perm)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(perm))
