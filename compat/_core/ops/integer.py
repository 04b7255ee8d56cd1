"""Integer ops as op-table rows: bit shifts (``bitwise_left_shift``, ``<<``) and
number theory (``gcd``, ``lcm``)."""

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


def _gcd_f(x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    return (fnp.gcd if op == "gcd" else fnp.lcm)(_c(x, dtype), _c(y, dtype))


def _int_pair(op: str) -> Any:
    def f(input: Tensor, other: Tensor) -> Tensor:
        dt = _dt.result_type(input, other)
        if _dt.kind(dt) not in "iu":
            raise RuntimeError(f"\"{op}_cpu\" not implemented for '{_dt.scalar_type_name(dt)}'")
        return apply(_gcd_f, op, (input, other), (("op", op), ("dtype", dt)))

    f.__name__ = op
    samples = Sample(((5,), (5,)), dtype="int64", domain=(1, 12), grad=False)
    return defop(op, inplace=True, inplace_function=True, samples=samples)(f)


gcd = _int_pair("gcd")
lcm = _int_pair("lcm")
