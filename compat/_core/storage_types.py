"""PyTorch's storage classes as names: ``torch.TypedStorage``, ``torch.UntypedStorage`` and
the legacy ``torch.FloatStorage``, ``torch.ByteStorage``, ...

A compat storage is a root tensor's memory (:class:`compat._core.views.TypedStorage`); the
classes here make new ones as PyTorch's constructors do (a size, a sequence of elements,
or nothing) and read bytes (``from_buffer``). As in PyTorch, a legacy class makes a
``TypedStorage`` of its dtype, and ``isinstance(s, torch.FloatStorage)`` asks for a typed
storage of ``float32``."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import views as _views
from compat._core.tensor import Tensor

__all__ = [
    "BFloat16Storage",
    "BoolStorage",
    "ByteStorage",
    "CharStorage",
    "ComplexDoubleStorage",
    "ComplexFloatStorage",
    "DoubleStorage",
    "FloatStorage",
    "HalfStorage",
    "IntStorage",
    "LongStorage",
    "ShortStorage",
    "TypedStorage",
    "UntypedStorage",
]


#: ``torch.UntypedStorage`` and ``torch.TypedStorage`` are the classes of compat's storages
UntypedStorage = _views.UntypedStorage
TypedStorage = _views.TypedStorage


class _LegacyStorageType(type):
    """The class of ``torch.FloatStorage`` and its kind: calling one makes a
    ``TypedStorage`` of its dtype; ``isinstance`` asks for a typed storage of that dtype."""

    dtype: Any

    def __call__(cls, *args: Any, device: Any = None) -> Any:
        return TypedStorage(*args, dtype=cls.dtype)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _views.TypedStorage) and obj.dtype == cls.dtype


class _LegacyStorage(metaclass=_LegacyStorageType):
    @classmethod
    def from_buffer(
        cls, buffer: Any, byte_order: str | None = None, count: int = -1, offset: int = 0
    ) -> Any:
        """A new storage of the buffer's bytes from ``offset``, read as elements of the
        class's dtype in ``byte_order`` (``'native'``, ``'little'``, ``'big'``; needed for
        dtypes of several bytes); a bool is true where its byte is not 0."""
        npd = _dt.np_dtype(cls.dtype)
        data = memoryview(buffer).cast("B")
        if npd.itemsize > 1 and byte_order is None:
            raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
        if byte_order not in (None, "native", "little", "big"):
            raise ValueError(
                f"invalid byte_order '{byte_order}' (expected 'big', 'little', or 'native')"
            )
        order = {"little": "<", "big": ">"}.get(byte_order or "native", "=")
        n = len(data) - offset
        if count < 0:
            if n % npd.itemsize:
                raise ValueError(
                    f"buffer size ({len(data)}) must be a multiple of element size ({npd.itemsize})"
                )
            count = n // npd.itemsize
        elif count * npd.itemsize > n:
            raise ValueError(
                f"buffer has only {n} elements after offset {offset}, but "
                f"specified a size of {count}"
            )
        raw = np.frombuffer(data, np.uint8, count * npd.itemsize, offset)
        if npd == np.bool_:
            values = raw != 0
        else:
            values = raw.view(npd.newbyteorder(order)).astype(npd)
        return TypedStorage(Tensor._make(values.copy(), False))


def _legacy(name: str, npd: Any) -> Any:
    dtype = _dt.to_dtype(np.dtype(npd))
    doc = f"``torch.{name}``: a ``TypedStorage`` of ``{dtype}`` (PyTorch's legacy class)."
    attrs = {"dtype": dtype, "__doc__": doc, "__module__": "compat.torch"}
    return _LegacyStorageType(name, (_LegacyStorage,), attrs)


ByteStorage = _legacy("ByteStorage", np.uint8)
CharStorage = _legacy("CharStorage", np.int8)
ShortStorage = _legacy("ShortStorage", np.int16)
IntStorage = _legacy("IntStorage", np.int32)
LongStorage = _legacy("LongStorage", np.int64)
HalfStorage = _legacy("HalfStorage", np.float16)
FloatStorage = _legacy("FloatStorage", np.float32)
DoubleStorage = _legacy("DoubleStorage", np.float64)
BoolStorage = _legacy("BoolStorage", np.bool_)
BFloat16Storage = _legacy("BFloat16Storage", _dt.bfloat16.np)
ComplexFloatStorage = _legacy("ComplexFloatStorage", np.complex64)
ComplexDoubleStorage = _legacy("ComplexDoubleStorage", np.complex128)
