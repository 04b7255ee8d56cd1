"""``torch.autograd.forward_ad``: dual tensors for forward-mode AD.

::

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        y_primal, y_tangent = forward_ad.unpack_dual(y)

The tangents are pushed through each op by funcgrad's JVP of the op's program (see
:mod:`compat._core.forward`). As in PyTorch only level 0 exists.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from compat._core import dtypes as _dt
from compat._core import forward as _fw
from compat._core import grad_mode as _gm
from compat._core import views as _views
from compat._core.shape_ops import view as _view
from compat._core.tensor import Tensor

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

enter_dual_level = _fw.enter_dual_level


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the current dual level; the tangents made at it are dropped."""
    _fw.exit_dual_level(level=level)


def _level(level: int | None) -> int:
    return _fw.STATE.level if level is None else level


def _alias(t: Tensor) -> Tensor:
    """A new tensor sharing ``t``'s storage and version counter: a view, but in inference
    mode (where PyTorch makes no view) a plain alias."""
    if _gm._state.inference:
        return t.detach()
    with _fw.suspended():
        return _view(t, *t.shape)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` (used as is) at the current level."""
    level = _level(level)
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if _fw.tangent_of(tangent) is not None:
        raise RuntimeError(
            "Trying to set a forward gradient that has a forward gradient at the same level "
            f"{level}. This is not supported."
        )
    if tangent._npdtype != tensor._npdtype:
        with _fw.suspended():
            tangent = tangent.to(_dt.from_np(tensor._npdtype))
    bits = _views.bits(tensor)
    if _views.bits(tangent) != bits:  # PyTorch copies it into the primal's conj/neg bits
        with _fw.suspended():
            tangent = _with_bits(tangent.clone(), bits)
    elif tangent.numel() and _views.layout_of(tangent)[1] != _views.layout_of(tensor)[1]:
        with _fw.suspended():  # and into the primal's layout (strides)
            tangent = tangent.clone()
    dual = _alias(tensor)
    _fw.set_tangent(dual, tangent)
    return dual


def _with_bits(t: Tensor, bits: tuple[bool, bool]) -> Tensor:
    """``t``'s values as a view with the conjugate and negative bits ``bits``."""
    conj, neg = bits
    if conj:
        t = t.conj_physical().conj()
    if neg:
        t = t.neg()._neg_view()
    return t


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view) and the tangent (or ``None``)."""

    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor: Any, *, level: int | None = None) -> Any:
    """``(primal, tangent)`` of a dual tensor: the primal a new view without tangent, the
    tangent the tensor given to ``make_dual`` (``None`` for a tensor without one)."""
    level = _level(level)
    if level < 0 or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    tangent = _fw.tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)


class dual_level(contextlib.ContextDecorator):
    """Enter a dual level for the ``with`` block; its tangents are dropped on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _is_fwd_grad_enabled() -> bool:
    return _fw.STATE.enabled


@contextlib.contextmanager
def _set_fwd_grad_enabled(mode: bool) -> Iterator[None]:
    prev = _fw.STATE.enabled
    _fw.set_fwd_grad_enabled(mode)
    try:
        yield
    finally:
        _fw.set_fwd_grad_enabled(prev)


def __getattr__(name: str) -> Any:
    if name == "_current_level":  # the level now entered (-1: none), read at each access
        return _fw.STATE.level
    raise AttributeError(f"module 'torch.autograd.forward_ad' has no attribute {name!r}")
