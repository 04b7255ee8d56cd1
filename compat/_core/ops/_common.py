"""What every torch op module shares: coercion of operands, casts, an operand's dtype."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation import tensor
from compat._core.tensor import Tensor
from funcgrad import numpy as fnp

_NUM = (bool, int, float, complex)


def _c(x: Any, dt: np.dtype) -> Any:
    return fnp.asarray(x, dt)


_LOW = (np.dtype(np.float16), _dt.bfloat16.np)
_BOOL = np.dtype(np.bool_)


def _is_bool(x: Any) -> bool:
    return type(x) is bool or (isinstance(x, Tensor) and x._st.a.dtype == _BOOL)


def sub_check(a: Any, b: Any) -> None:
    """PyTorch refuses to subtract bool tensors (or Python bools)."""
    ba, bb = _is_bool(a), _is_bool(b)
    if ba and bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if ba or bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def acc(dt: np.dtype) -> np.dtype:
    """The dtype PyTorch's CPU kernels compute ``dt`` in (its ``opmath`` type): float32
    for float16 and bfloat16, which are rounded once at the end; ``dt`` otherwise."""
    return np.dtype(np.float32) if dt in _LOW else dt


def coerce(x: Any) -> Any:
    """Tensors and Python numbers pass; NumPy values become tensors."""
    if isinstance(x, Tensor) or type(x) in _NUM:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return tensor(x)
    if isinstance(x, _NUM):
        return type(x).__mro__[-2](x) if not isinstance(x, bool) else bool(x)
    raise TypeError(f"unsupported operand type {type(x).__name__} for a tensor op")


_WARNED: set[str] = set()
#: ``torch.set_warn_always(True)``: every once-per-process warning warns every time
WARN_ALWAYS = [False]


def warn_once(key: str, message: str) -> None:
    """A ``UserWarning`` the first time only, as PyTorch's ``TORCH_WARN_ONCE`` (every time
    under ``torch.set_warn_always(True)``)."""
    if key not in _WARNED or WARN_ALWAYS[0]:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _dtype_of(x: Any) -> np.dtype:
    return x._npdtype if isinstance(x, Tensor) else _dt.result_type(x)
