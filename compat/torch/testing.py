"""``torch.testing``: ``make_tensor``, the random test inputs PyTorch's tests are built from.

Values are drawn uniformly from ``[low, high)`` with the per-dtype defaults and the
clamping, checks and error messages of PyTorch's ``make_tensor``; the random stream is
compat's (``torch.manual_seed`` makes it repeatable, not equal to PyTorch's draws).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from compat._core.namespace import (
    bool as _bool,
)
from compat._core.namespace import (
    empty,
    finfo,
    iinfo,
    int64,
    randint,
    view_as_real,
)

__all__ = ["make_tensor"]


def _bounds(
    dtype: Any, low: float | None, high: float | None, lo: float, hi: float,
    default: tuple[float, float],
) -> tuple[float, float]:  # fmt: skip
    """``low``/``high`` after PyTorch's defaults, checks and clamping to ``[lo, hi)``."""
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    inexact = dtype.is_floating_point or dtype.is_complex
    if low == high and inexact:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lo or low >= hi:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lo}, {hi})"
        )
    low, high = min(max(low, lo), hi), min(max(high, lo), hi)
    if not inexact:  # randint's upper bound is exclusive: both bounds round up
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape: int | Sequence[int],
    dtype: Any,
    device: Any = None,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Any:
    """A tensor of ``shape`` and ``dtype`` with values drawn uniformly from ``[low, high)``
    (defaults: ``[0, 2)`` for ``bool``, ``[-9, 10)`` for integers clamped to the dtype's
    range, ``[-9, 9)`` for floating and complex types, real and imaginary parts alike)."""
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    dims = tuple(int(s) for s in shape)  # type: ignore[arg-type]
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    exact = not (dtype.is_floating_point or dtype.is_complex)
    if requires_grad and exact:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(dims) > 1
    if noncontiguous:  # every other element of a last dimension twice as long
        dims = (*dims[:-1], 2 * dims[-1])
    if dtype is _bool:
        lo, hi = _bounds(dtype, low, high, 0, 2, (0, 2))
        result = randint(int(lo), int(hi), dims, device=device, dtype=dtype)
    elif exact:
        info = iinfo(dtype)
        top = info.max + (0 if dtype is int64 else 1)
        lo, hi = _bounds(dtype, low, high, info.min, top, (-9, 10))
        result = randint(int(lo), int(hi), dims, device=device, dtype=dtype)
    else:
        info = finfo(dtype)
        lo, hi = _bounds(dtype, low, high, info.min, info.max, (-9, 9))
        result = empty(dims, device=device, dtype=dtype)
        real = view_as_real(result) if dtype.is_complex else result
        if lo == hi:
            real.fill_(lo)
        else:
            real.uniform_(lo, hi)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        if exact:
            tiny: Any = 1
        else:
            tiny = finfo(dtype).tiny
            tiny = complex(tiny, tiny) if dtype.is_complex else tiny
        result[result == 0] = tiny
    if requires_grad:
        result.requires_grad_(True)
    return result
