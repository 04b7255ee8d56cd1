"""Floating-point structure as op-table rows: ``ldexp`` (``nextafter`` and the class tests
``isnan``, ``isposinf``, ``isreal``, ... are generated from funcgrad's rows)."""

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


@defop(
    inplace=True,
    inplace_function=True,
    grad_fn="LdexpBackward0",
    samples=Sample(((3,), (3,))),
)
def ldexp(input: Tensor, other: Any = None) -> Tensor:
    """``input * 2**other`` (PyTorch's node: ``LdexpBackward0``, also of ``ldexp_``)."""
    other = coerce(other if other is not None else 1)
    dt = _dt.float_type(_dt.result_type(input, other))
    return apply(_ldexp_f, "LdexpBackward0", (input, other), (("dtype", dt),))
