"""A compat ``Tensor``'s values leaving it: NumPy arrays, Python numbers and lists,
iteration, truth value and pickling (PyTorch's ``numpy``/``item``/``tolist`` and the
Python conversion protocols). :class:`ValueConversions` is a base of ``Tensor``; it reads
only the tensor's storage cell (``_st``) and ``_requires_grad``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core import tensor_checks as _tc
from compat._core.warn_once import WARN_ALWAYS
from funcgrad._compat_contract import MetaArray

#: ``float()`` of a tensor requiring grad has warned (PyTorch warns once per process)
_FLOAT_WARNED = False


def rebuild(cls: type, arr: np.ndarray, requires_grad: bool) -> Any:
    """Unpickle a tensor of class ``cls`` (what ``__reduce_ex__`` names)."""
    return cls._make(arr, requires_grad)


def _real_value(t: Any, ctype: str) -> Any:
    """The one element of ``t`` for ``float()``/``int()``: a complex one must have no
    imaginary part (PyTorch's conversion error otherwise, not Python's ``TypeError``)."""
    v = _tc.one_element(t)
    if isinstance(v, complex):
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        v = v.real
    return v


class ValueConversions:
    """The conversions of a tensor's value to NumPy and Python objects."""

    __slots__ = ()
    _st: Any
    _requires_grad: bool

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if type(self._st.a) is MetaArray:
            raise TypeError(
                "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the "
                "tensor to host memory first."
            )
        if self._requires_grad and _gm.is_grad_enabled() and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self._st.a.dtype == _dt.bfloat16.np:
            raise TypeError("Got unsupported ScalarType BFloat16")  # NumPy has no bfloat16
        return np.asarray(self._st.array)

    def item(self) -> Any:
        if self._st.a.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._st.a.size} elements cannot be converted to Scalar"
            )
        if type(self._st.a) is MetaArray:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return np.asarray(self._st.array).reshape(()).item()

    def tolist(self) -> Any:
        if type(self._st.a) is MetaArray:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return np.asarray(self._st.array).tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy(force=True) if type(self._st.a) is MetaArray else self._st.array
        a = np.asarray(a)
        return a.astype(dtype) if dtype is not None else a

    def __len__(self) -> int:
        if not self._st.a.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._st.a.shape[0]

    def __iter__(self) -> Any:
        if not self._st.a.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._st.a.shape[0]))  # type: ignore[index]

    def __bool__(self) -> bool:
        n = self._st.a.size
        if n != 1:
            which = "no values" if n == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {which} is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        global _FLOAT_WARNED
        if self._requires_grad and _gm._state.record and (not _FLOAT_WARNED or WARN_ALWAYS[0]):
            _FLOAT_WARNED = True
            warnings.warn(
                "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                "behavior.\nConsider using tensor.detach() first.",
                UserWarning,
                stacklevel=2,
            )
        return float(_real_value(self, "double"))

    def __int__(self) -> int:
        return int(_real_value(self, "int64_t"))

    def __index__(self) -> int:
        if _dt.kind(self._st.a.dtype) not in "iub" or self._st.a.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(_tc.one_element(self))

    def __reduce_ex__(self, proto: int) -> Any:
        return (rebuild, (type(self), np.asarray(self._st.array), self._requires_grad))
