"""``torch.utils.dlpack``: tensors to and from DLPack, the array-exchange protocol.

``to_dlpack`` hands out a DLPack capsule over the tensor's current values (its backing
array, through ``funcgrad.numpy``'s arrays, which export any dtype, bfloat16 included;
64-bit mode on, as at compat's other entry points). A
compat tensor holds an immutable array: like ``Tensor.numpy()``, the capsule is a view to
read; writes made through it are not the tensor's (PyTorch's consumer shares a mutable
storage).

``from_dlpack`` takes an object with ``__dlpack__`` (a NumPy or JAX array, a PyTorch
tensor) or a capsule and makes a tensor holding a copy of its values, as ``from_numpy``
does: an immutable array cannot alias memory its producer may still write.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from compat._core.creation import _leaf
from compat._core.tensor import Tensor
from funcgrad._compat_contract import x64

__all__ = ["from_dlpack", "to_dlpack"]

#: DLPack's device type of the host (``kDLCPU``)
_CPU = 1


@x64
def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule over ``tensor``'s values (read-only for compat: see the module)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"to_dlpack(): argument 'tensor' must be Tensor, not {type(tensor).__name__}"
        )
    return fnp.asarray(tensor._st.array).__dlpack__()


class _Capsule:
    """A bare capsule as a DLPack producer (``__dlpack__`` once), for the consumers that
    take producers only."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_CPU, 0)


@x64
def from_dlpack(ext_tensor: Any) -> Tensor:
    """A new tensor holding a copy of a DLPack producer's values (an object with
    ``__dlpack__``, or a capsule from ``to_dlpack``)."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack(): expected an object with __dlpack__ or a DLPack capsule, got "
            f"{type(ext_tensor).__name__}"
        )
    arr = fnp.from_dlpack(ext_tensor, copy=True)
    return _leaf(np.asarray(arr), False)
