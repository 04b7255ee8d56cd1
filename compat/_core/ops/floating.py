"""Floating-point structure as op-table rows: ``ldexp``, ``frexp`` (``nextafter`` and the
class tests ``isnan``, ``isposinf``, ``isreal``, ... are generated from funcgrad's rows)."""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad as fg
from compat._core import dtypes as _dt
from compat._core.ops._common import _c, coerce
from compat._core.optable import Sample, defop
from compat._core.return_types import return_type
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


Frexp = return_type("frexp", "mantissa exponent")


@fg.custom_jvp
def _mantissa(x: Any) -> Any:
    """``frexp``'s mantissa, whose derivative is PyTorch's ``FrexpBackward0``'s:
    ``2**-exponent`` (``inf`` past the dtype's range, as PyTorch's for subnormal inputs)."""
    return fnp.frexp(x)[0]


_mantissa.defjvps(lambda t, ans, x: t / fnp.exp2(fnp.frexp(x)[1].astype(x.dtype)))


def _frexp_f(x: Any) -> Any:
    return _mantissa(x), fnp.frexp(x)[1].astype(np.int32)


@defop(grad_fn="FrexpBackward0", samples=Sample(((3, 4),)))
def frexp(input: Tensor) -> Frexp:
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent``, ``|mantissa|`` in
    ``[0.5, 1)`` (0, infinities and NaN: themselves with exponent 0); the exponent is int32,
    as PyTorch's."""
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return Frexp(*apply(_frexp_f, "FrexpBackward0", (input,)))
