"""Floating-point structure as op-table rows: ``ldexp``, ``nextafter`` and the class
predicates ``isposinf``, ``isneginf``, ``isreal``."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import _c, coerce
from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp


def _ldexp_f(x: Any, e: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) * fnp.exp2(_c(e, dtype))


@defop(inplace=True, inplace_function=True, samples=Sample(((3,), (3,))), node_name=False)
def ldexp(input: Tensor, other: Any = None) -> Tensor:
    """``input * 2**other``."""
    other = coerce(other if other is not None else 1)
    dt = _dt.float_type(_dt.result_type(input, other))
    return apply(_ldexp_f, "MulBackward0", (input, other), (("dtype", dt),))


def _nextafter_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.nextafter(_c(x, dtype), _c(y, dtype))


@defop(inplace=True, samples=Sample(((3,), (3,)), grad=False))
def nextafter(input: Tensor, other: Tensor) -> Tensor:
    dt = _dt.result_type(input, other)
    return apply(_nextafter_f, "nextafter", (input, other), (("dtype", dt),))


def _pred_f(x: Any, *, op: str) -> Any:
    if op == "isposinf":
        return fnp.isposinf(x)
    if op == "isneginf":
        return fnp.isneginf(x)
    return fnp.isreal(x)


def _predicate(op: str) -> Any:
    def f(input: Tensor) -> Tensor:
        return apply(_pred_f, op, (input,), (("op", op),))

    f.__name__ = op
    return defop(op, samples=Sample(((4,),), grad=False))(f)


isposinf = _predicate("isposinf")
isneginf = _predicate("isneginf")
isreal = _predicate("isreal")
