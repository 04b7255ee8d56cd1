"""``Tensor.to`` / ``.cpu()`` / ``.cuda()``: dtype casts and moves between devices."""

from __future__ import annotations

from typing import Any

from compat._core import device as _dev
from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core import shape_ops as S
from compat._core.memory_formats import memory_format
from compat._core.tensor import Tensor


def _is_dtype(x: Any) -> bool:
    return isinstance(x, _dt.dtype) or x in (float, int, bool, complex)


def parse_to(args: tuple, kwargs: dict) -> tuple[Any, Any, bool, Any]:
    """``(device, dtype, copy, memory_format)`` from ``to``'s three signatures:
    ``to(dtype, ...)``, ``to(device=None, dtype=None, ...)`` and ``to(other, ...)``.

    ``memory_format`` is one of ``torch.contiguous_format`` & co (or ``None``) and changes
    nothing: compat's layout is XLA's, and PyTorch's ``to`` also returns the tensor itself
    when its dtype and device stay, whatever the format.
    """
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    fmt = kwargs.pop("memory_format", None)
    if fmt is not None and not isinstance(fmt, memory_format):
        raise TypeError(
            "to() received an invalid combination of arguments - got "
            f"(memory_format={type(fmt).__name__}, ...): memory_format must be a "
            "torch.memory_format"
        )
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest: list = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        device, dtype = other.device, other.dtype
    elif rest and _is_dtype(rest[0]):
        dtype = rest.pop(0)
    elif rest and (rest[0] is None or _dev.is_device_like(rest[0])):
        device = rest.pop(0)
        if rest and (_is_dtype(rest[0]) or rest[0] is None):
            dtype = rest.pop(0)
        elif rest:  # to(device, non_blocking) is no signature: the dtype comes first
            rest = ["no dtype"]
    if rest and not isinstance(rest[0], bool):
        raise TypeError(
            "to() received an invalid combination of arguments - got "
            f"({', '.join(type(a).__name__ for a in args)})"
        )
    if len(rest) > 1:
        copy = rest[1]
    return device, dtype, bool(copy), fmt


def move(t: Tensor, device: Any) -> Tensor:
    """``t`` on ``device``: itself when it is already there; else a new tensor, which keeps
    no graph (moving a tensor that requires grad between devices is not supported under
    grad mode: PyTorch would record a ``ToCopyBackward0`` across devices)."""
    if _dev.same_place(t._st.array, device):
        return t
    if t._requires_grad and _gm._state.record:
        raise NotImplementedError(
            "compat.torch: moving a tensor that requires grad to another device under grad "
            "mode (use torch.no_grad(), or move it before setting requires_grad)"
        )
    out = Tensor._wrap_result(_dev.place(t._st.array, device))
    return out


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device, dtype)``, ``to(other)``: same tensor when nothing changes."""
    device, dtype, copy, _fmt = parse_to(args, dict(kwargs))
    out = self
    if device is not None:
        out = move(out, device)
    if dtype is not None:
        out = S.to_dtype(out, dtype, copy and out is self)
    elif copy and out is self:
        out = S.clone(out)
    return out


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    """This tensor on the CPU (itself when already there)."""
    return move(self, _dev.CPU)


def cuda(self: Tensor, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Tensor:
    """This tensor on a CUDA device (jax's GPU); PyTorch's error when there is none."""
    if not _dev.gpus():
        raise AssertionError(_dev.NO_CUDA)
    if device is None:
        target = _dev.device("cuda", 0)
    elif isinstance(device, int):
        target = _dev.device("cuda", device)
    else:
        target = _dev.as_device(device)
    return move(self, target)


def xpu(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    raise AssertionError("Torch not compiled with XPU enabled")
