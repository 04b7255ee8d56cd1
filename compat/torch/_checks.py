"""``torch._check`` and its family (``_check_index``, ``_check_value``, ``_check_type``,
``_check_not_implemented``, ``_check_with``, ``_check_tensor_all``), the assertions model
code writes for ``torch.compile``; eagerly they raise PyTorch's error type with the given
message (a callable) or PyTorch's default one. ``torch._assert_async`` (on the CPU, an
assertion that a one-element tensor is nonzero), ``torch._assert`` (FX-traceable code's
``assert``) and ``torch.is_signed``."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from compat._core import dtypes as _dt
from compat._core.tensor import Tensor

__all__ = [
    "_assert",
    "_assert_async",
    "_check",
    "_check_index",
    "_check_not_implemented",
    "_check_tensor_all",
    "_check_tensor_all_with",
    "_check_type",
    "_check_value",
    "_check_with",
    "is_signed",
]

_DEFAULT = (
    "Expected cond to be True, but got False. (Could this error message be improved? If so, "
    "please report an enhancement request to PyTorch.)"
)


def _check_with(error_type: type, cond: Any, message: Callable[[], Any] | None = None) -> None:
    """Raise ``error_type`` (``message()``, or the default text) unless ``cond`` is true;
    ``cond`` must be a Python bool."""
    if not isinstance(cond, builtins.bool):
        if isinstance(cond, Tensor):
            raise TypeError(
                "cond must be a bool, but got a Tensor. For tensor conditions, use "
                "torch._check_tensor_all() to assert that all elements are true."
            )
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError(
            f"error_type must be a subclass of Exception but not Warning, got {error_type}"
        )
    if message is None:
        raise error_type(_DEFAULT)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond: Any, message: Callable[[], Any] | None = None) -> None:
    """``RuntimeError`` unless ``cond``."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond: Any, message: Callable[[], Any] | None = None) -> None:
    """``IndexError`` unless ``cond``."""
    _check_with(IndexError, cond, message)


def _check_value(cond: Any, message: Callable[[], Any] | None = None) -> None:
    """``ValueError`` unless ``cond``."""
    _check_with(ValueError, cond, message)


def _check_type(cond: Any, message: Callable[[], Any] | None = None) -> None:
    """``TypeError`` unless ``cond``."""
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond: Any, message: Callable[[], Any] | None = None) -> None:
    """``NotImplementedError`` unless ``cond``."""
    _check_with(NotImplementedError, cond, message)


def _check_tensor_all_with(
    error_type: type, cond: Any, message: Callable[[], Any] | None = None
) -> None:
    """``error_type`` unless every element of the bool tensor ``cond`` is true."""
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype != _dt.bool:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(error_type, builtins.bool(cond.all().item()), message)


def _check_tensor_all(cond: Any, message: Callable[[], Any] | None = None) -> None:
    """``RuntimeError`` unless every element of the bool tensor ``cond`` is true."""
    _check_tensor_all_with(RuntimeError, cond, message)


def is_signed(input: Tensor) -> builtins.bool:
    """Whether ``input``'s dtype is signed (floating, complex or a signed integer)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"is_signed(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input.dtype.is_signed


def _assert_async(input: Tensor, assert_msg: str | None = None) -> None:
    """``RuntimeError`` unless the one-element tensor ``input`` is nonzero (PyTorch's
    device kernels check it later; on the CPU, now): its words, or ``assert_msg``."""
    if not isinstance(input, Tensor):
        raise TypeError(
            "_assert_async(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    n = input.numel()
    if n != 1:
        which = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
    if not builtins.bool(input.item()):
        raise RuntimeError(assert_msg or "Expected Tensor with single nonzero value, but got zero")


def _assert(condition: Any, message: Any) -> None:
    """PyTorch's ``torch._assert``: Python's ``assert`` as a call (symbolically traceable):
    ``AssertionError(message)`` unless ``condition`` is truthy; a tensor condition is read
    as ``bool(tensor)`` (so more than one element is PyTorch's ambiguity error)."""
    if not condition:
        raise AssertionError(message)
