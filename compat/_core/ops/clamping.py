"""``clamp`` (``clip``), ``clamp_min`` and ``clamp_max``, and ``clamp``'s own in-place form.

``Tensor.clamp_`` is not the out-of-place ``clamp`` written back (``inplace=True``): it
computes the clamp in ``self``'s dtype under one ``ClampBackward1`` node, so the row
declares it (``inplace=inplace_clamp``), next to the function whose values it shares.
It lives here rather than in ``unary.py`` because ``inplace.py`` builds on ``unary.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.mutation import apply_inplace
from compat._core.ops._common import _c, coerce
from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp


def _clamp_f(x: Any, lo: Any, hi: Any, *, has_lo: bool, has_hi: bool, dtype: np.dtype) -> Any:
    # value min(max(x, lo), hi); gradient 1 for lo <= x <= hi (bounds included), else to
    # the bound that was selected (none when lo > hi, as in PyTorch)
    y = _c(x, dtype)
    if has_lo:
        lo = _c(lo, dtype)
        y = fnp.where(y < lo, lo, y)
    if has_hi:
        hi = _c(hi, dtype)
        y = fnp.where(y > hi, hi, y)
    return y


def _ip_clamp_f(x: Any, lo: Any, hi: Any, *, has_lo: bool, has_hi: bool, dtype: np.dtype) -> Any:
    return _c(_clamp_f(x, lo, hi, has_lo=has_lo, has_hi=has_hi, dtype=dtype), dtype)


def inplace_clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``Tensor.clamp_`` (and ``clip_``): the clamped values in ``self``'s dtype."""
    lo = coerce(min) if min is not None else 0
    hi = coerce(max) if max is not None else 0
    return apply_inplace(
        self,
        _ip_clamp_f,
        "ClampBackward1",
        (lo, hi),
        (("has_lo", min is not None), ("has_hi", max is not None), ("dtype", self._npdtype)),
    )


@defop(
    inplace=inplace_clamp,
    inplace_function=True,
    aliases=("clip",),
    grad_fn="ClampBackward1",
    samples=(
        Sample(((6,),), args=(-0.5, 0.7)),
        Sample(((6,), (6,)), kwargs=()),
        Sample(((2, 3),), kwargs=(("max", 0.3),)),
    ),
)
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _clamp(input, min, max, None)


def _clamp(input: Tensor, min: Any, max: Any, name: str | None) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo = coerce(min) if min is not None else 0
    hi = coerce(max) if max is not None else 0
    dt = _dt.result_type(input, *(v for v in (min, max) if v is not None))
    if name is None:
        tensor_bound = isinstance(lo, Tensor) or isinstance(hi, Tensor)
        name = "ClampBackward0" if tensor_bound else "ClampBackward1"
    return apply(
        _clamp_f,
        name,
        (input, lo, hi),
        (("has_lo", min is not None), ("has_hi", max is not None), ("dtype", dt)),
    )


@defop(
    inplace=True,
    inplace_function=True,
    grad_fn="ClampMinBackward0",
    samples=Sample(((6,),), args=(0.1,)),
)
def clamp_min(input: Tensor, min: Any) -> Tensor:
    return _clamp(input, min, None, "ClampMinBackward0")


@defop(
    inplace=True,
    inplace_function=True,
    grad_fn="ClampMaxBackward0",
    samples=Sample(((6,),), args=(0.1,)),
)
def clamp_max(input: Tensor, max: Any) -> Tensor:
    return _clamp(input, None, max, "ClampMaxBackward0")
