"""``torch.range``: PyTorch's deprecated ramp that includes its end (``torch.arange``
excludes it), kept because old code calls it. Values as PyTorch's CPU kernel computes them:
``start + i * step`` in the accumulation type (double for float32/float64, float for
float16/bfloat16, int64 for integers), ``floor((end - start) / step) + 1`` of them, cast to
the dtype. Loaded on first access (``compat.torch.__getattr__``)."""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation import _finish, _layout, _leaf, _out_dtype
from compat._core.creation_rows import _into_out
from compat._core.tensor import Tensor
from compat._core.warn_once import warn_user

__all__ = ["range"]

NAMES = ("range",)

#: PyTorch's warning, at every call
DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its "
    "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
    "which produces values in [start, end)."
)


def _acc(npd: np.dtype) -> np.dtype:
    """The accumulation type PyTorch's CPU kernel computes ``range`` in."""
    if npd.kind in "iu":
        return np.dtype(np.int64)
    return np.dtype(np.float64 if npd.itemsize >= 4 else np.float32)


def _scalar(v: Any, acc: np.dtype) -> Any:
    """A bound as ``Scalar.to<acc>()`` gives it (a float truncated toward zero for an
    integer type)."""
    if isinstance(v, Tensor):
        v = v.item()
    if acc.kind == "i":
        return builtins.int(v) if math.isfinite(v) else v
    return acc.type(v)


def range(
    start: Any,
    end: Any,
    step: Any = 1,
    *,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Values from ``start`` to ``end`` inclusive by ``step`` (deprecated in PyTorch, with
    its warning), in ``dtype`` (``out``'s, else the default dtype)."""
    warn_user(DEPRECATED)
    _layout("range", layout)
    npd = _out_dtype("range", dtype, out, _dt.get_default_dtype().np)
    if npd.kind in "bc":
        name = _dt.scalar_type_name(npd)
        raise NotImplementedError(f"\"range_cpu\" not implemented for '{name}'")
    acc = _acc(npd)
    lo, hi, by = (_scalar(v, acc) for v in (start, end, step))
    if by == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"unsupported range: {lo:g} -> {hi:g}")
    if not ((by > 0 and hi >= lo) or (by < 0 and hi <= lo)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if acc.kind == "i":
        size = abs(hi - lo) // abs(by) + 1  # (C++'s division truncates: signs agree)
        values = lo + np.arange(size, dtype=np.int64) * by
    else:
        size = builtins.int((hi - lo) / by + acc.type(1))
        values = lo + np.arange(size).astype(acc) * by
    made = values.astype(npd)
    if out is not None:
        made = _into_out(made, out, warn=False)
    return _finish("range", _leaf(made, requires_grad, device), out)
