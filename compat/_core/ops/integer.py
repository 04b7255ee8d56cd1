"""Integer ops as op-table rows: bit shifts (``bitwise_left_shift``, ``<<``); ``gcd`` and
``lcm`` are generated from funcgrad's rows (``ops/binary.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import _c, coerce
from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp


def _shift_f(x: Any, y: Any, *, left: bool, dtype: np.dtype) -> Any:
    x, y = _c(x, dtype), _c(y, dtype)
    return fnp.left_shift(x, y) if left else fnp.right_shift(x, y)


def _shift(left: bool, input: Any, other: Any) -> Tensor:
    a, b = coerce(input), coerce(other)
    dt = _dt.result_type(a, b)
    if _dt.kind(dt) not in "iu":
        raise RuntimeError(
            f"\"{'lshift' if left else 'rshift'}_cpu\" not implemented for '{_dt.scalar_type_name(dt)}'"
        )
    name = "bitwise_left_shift" if left else "bitwise_right_shift"
    return apply(_shift_f, name, (a, b), (("left", left), ("dtype", dt)))


@defop(inplace=True, samples=Sample(((4,), (4,)), dtype="int64", domain=(0, 3), grad=False))
def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    return _shift(True, input, other)


@defop(inplace=True, samples=Sample(((4,), (4,)), dtype="int64", domain=(0, 3), grad=False))
def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    return _shift(False, input, other)
