"""Tolerance and whole-array comparisons: ``isclose``, ``allclose``, ``array_equal``,
``array_equiv``."""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core.array_row import ArrayRow, TorchArrayForm, TorchParam
from funcgrad.numpy._core import ArrayLike, aval, check_arraylike, out, prep, promote_broadcast
from funcgrad.numpy._reductions import all as _all
from funcgrad.numpy._ufuncs import equal, isinf, isnan, logical_and, logical_or
from funcgrad.primitives import elementwise as ew


def isclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (infinities equal only to themselves)."""
    a, b = promote_broadcast("isclose", a, b, to="inexact")
    dt = ew.real_dtype(aval(a).dtype)  # compared with |a - b| (real for complex a, b)
    rt, at = np.asarray(rtol, dt), np.asarray(atol, dt)
    close = ew.le(ew.abs(ew.sub(a, b)), ew.add(at, ew.mul(rt, ew.abs(b))))
    inf_a, inf_b = isinf(a), isinf(b)
    close = ew.bitwise_and(close, ew.bitwise_not(ew.bitwise_or(inf_a, inf_b)))
    close = ew.bitwise_or(close, ew.bitwise_and(ew.bitwise_and(inf_a, inf_b), ew.eq(a, b)))
    nan_a, nan_b = ew.ne(a, a), ew.ne(b, b)
    close = ew.bitwise_and(close, ew.bitwise_not(ew.bitwise_or(nan_a, nan_b)))
    if equal_nan:
        close = ew.bitwise_or(close, ew.bitwise_and(nan_a, nan_b))
    return out(close)


def allclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Any:
    """Whether :func:`isclose` holds everywhere (a 0-d bool array)."""
    check_arraylike("allclose", a, b)
    return _all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


# PyTorch's isclose/allclose: operands of one dtype (NumPy's promote), tolerances at or
# above 0, allclose a Python bool
_TOLERANCES = (
    TorchParam("other", "b", "tensor"),
    *(
        TorchParam(
            p,
            p,
            "float",
            d,
            at_least=(0, p + " must be greater than or equal to zero, but got {value}"),
        )
        for p, d in (("rtol", 1e-05), ("atol", 1e-08))
    ),
    TorchParam("equal_nan", "equal_nan", "bool", False),
)
_CLOSE = ((2, 3), ((2, 3),)), ((4,), ((4,), 1e-05, 2.0))
for _f in (isclose, allclose):
    ArrayRow(
        _f,
        torch=TorchArrayForm(
            None,
            _TOLERANCES,
            same_dtype="{} did not match {}",
            python_bool=_f is allclose,
            samples=_CLOSE,
            out=False,  # (PyTorch's takes no ``out=``)
        ),
    )


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Any:
    """Whether two arrays have the same shape and elements (a 0-d bool array)."""
    a1, a2 = prep(a1, "array_equal", sequences=True), prep(a2, "array_equal", sequences=True)
    if aval(a1).shape != aval(a2).shape:
        return out(np.asarray(False))
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return _all(eq)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Whether two arrays are equal after broadcasting (a 0-d bool array)."""
    a1, a2 = prep(a1, "array_equiv", sequences=True), prep(a2, "array_equiv", sequences=True)
    try:
        np.broadcast_shapes(aval(a1).shape, aval(a2).shape)
    except ValueError:
        return out(np.asarray(False))
    return _all(equal(a1, a2))
