"""What every torch op module shares: coercion of operands, casts, an operand's dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation import tensor
from compat._core.float_to_int import to_integer, wants_torch_cast
from compat._core.tensor import Tensor
from compat._core.warn_once import WARN_ALWAYS as WARN_ALWAYS
from compat._core.warn_once import warn_once as _warn_once
from funcgrad import numpy as fnp

_NUM = (bool, int, float, complex)


def _c(x: Any, dt: np.dtype) -> Any:
    """``x`` as ``dt``; a float-to-integer cast converts as PyTorch's CPU kernels do
    (:mod:`compat._core.float_to_int`), not as XLA does."""
    dt = np.dtype(dt)
    if wants_torch_cast(getattr(x, "dtype", None), dt):
        return to_integer(x, dt)
    return fnp.asarray(x, dt)


_LOW = (np.dtype(np.float16), _dt.bfloat16.np)
_BOOL = np.dtype(np.bool_)
_LOW_MAX = {d: float(np.finfo(d).max) for d in _LOW}


def tensor_list(tensors: tuple, name: str | None = None, unpack: bool = True) -> tuple:
    """The tensors of an op taking them as varargs or (``unpack``) as one list or tuple,
    checked as PyTorch's parser does (``expected Tensor as element i in argument 0``); with
    ``name`` (an op with a one-tensor overload, ``atleast_2d``), one argument that is
    neither is PyTorch's invalid-combination error."""
    if unpack and len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    elif name is not None and len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        got = type(tensors[0]).__name__
        why = f"      didn't match because some of the arguments have invalid types: (!{got}!)\n"
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}), but "
            f"expected one of:\n * (Tensor input)\n{why} * (tuple of Tensors tensors)\n{why}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    return tensors


def _is_bool(x: Any) -> bool:
    return type(x) is bool or (isinstance(x, Tensor) and x._st.a.dtype == _BOOL)


def alpha_check(dtype: np.dtype, alpha: Any) -> None:
    """PyTorch's checks of ``add``/``sub``'s ``alpha`` against the result dtype: a bool
    alpha only for bool results, no float alpha for integer (or bool) results, no complex
    alpha for real ones (compat rounded or dropped the part that did not fit)."""
    if isinstance(alpha, (bool, np.bool_)):
        if dtype != np.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
        return
    kind = np.dtype(dtype).kind
    if kind not in "fcV" and isinstance(alpha, (float, complex, np.floating, np.complexfloating)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if kind != "c" and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )
    if dtype in _LOW and isinstance(alpha, (int, float)) and abs(alpha) > _LOW_MAX[dtype]:
        # (the kernel takes alpha as ``dtype``: PyTorch refuses one that overflows it)
        name = "Half" if dtype == _LOW[0] else "BFloat16"
        raise RuntimeError(f"value cannot be converted to type c10::{name} without overflow")


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


def warn_once(key: str, message: str) -> None:
    """A ``UserWarning`` the first time only, as PyTorch's ``TORCH_WARN_ONCE`` (every time
    under ``torch.set_warn_always(True)``; the state is ``compat._core.warn_once``'s)."""
    _warn_once(key, message, stacklevel=4)


def _dtype_of(x: Any) -> np.dtype:
    return x._npdtype if isinstance(x, Tensor) else _dt.result_type(x)


def _vector_norm_f(x: Any, *, ord: float, axes: Any, keepdims: bool, dtype: np.dtype) -> Any:
    """PyTorch's vector ``ord``-norm of ``x`` (as ``dtype``) over ``axes``, with its
    derivatives at zeros: 0 where an entry is 0 (the 2-norm of a zero vector, fractional
    and negative orders), and a negative order's norm is 0 where an entry is 0."""
    x = fnp.abs(_c(x, dtype))
    if ord == float("inf"):
        return fnp.max(x, axis=axes, keepdims=keepdims)
    if ord == float("-inf"):
        return fnp.min(x, axis=axes, keepdims=keepdims)
    if ord == 0:
        return fnp.sum((x != 0).astype(dtype), axis=axes, keepdims=keepdims)
    if ord == 1:
        return fnp.sum(x, axis=axes, keepdims=keepdims)
    zero = x == 0
    if ord == 2:
        s = fnp.sum(x * x, axis=axes, keepdims=keepdims)
    else:  # (0 ** ord computed where it has no derivative: zeros weigh nothing)
        powered = fnp.where(zero, fnp.ones_like(x), x) ** ord
        s = fnp.sum(fnp.where(zero, fnp.zeros_like(x), powered), axis=axes, keepdims=keepdims)
    null = s == 0
    if ord < 0:  # a zero entry makes the norm zero
        null = fnp.any(zero, axis=axes, keepdims=keepdims)
    root = fnp.where(null, fnp.ones_like(s), s) ** (1.0 / ord)
    return fnp.where(null, fnp.zeros_like(s), root)
