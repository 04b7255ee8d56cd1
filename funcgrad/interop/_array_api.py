"""The array API standard's inspection namespace and ``from_dlpack`` for
``funcgrad.numpy`` (``jax.numpy.__array_namespace_info__``, ``jax.numpy.from_dlpack``).

funcgrad's concrete arrays are the runtime's arrays, so the devices and the dtypes are
the runtime's: 64-bit types only under ``jax_enable_x64``."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes

__all__ = ["ArrayNamespaceInfo", "array_namespace_info", "from_dlpack"]

#: the array API's dtype kinds and the names of their members (64-bit ones with x64)
_KINDS: dict[str, tuple[str, ...]] = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class ArrayNamespaceInfo:
    """What ``funcgrad.numpy`` supports, in the array API's terms (capabilities,
    devices, default and available dtypes)."""

    def capabilities(self) -> dict[str, Any]:
        """No boolean-mask indexing and no data-dependent output shapes (every shape is
        known when a program is traced); at most 64 dimensions."""
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def default_device(self) -> None:
        """``None``: arrays go where the runtime puts them."""
        return None

    def devices(self) -> list[Any]:
        """``None`` (the default placement) and every device of every backend."""
        return [None, *jax.devices()]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        """The dtypes of Python floats, complex numbers and integers, and of indices."""
        del device  # the same on every device
        integer = dtypes.default_dtype(1)
        return {
            "real floating": dtypes.default_dtype(2),
            "complex floating": dtypes.default_dtype(3),
            "integral": integer,
            "indexing": integer,
        }

    def dtypes(
        self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype]:
        """The supported dtypes of ``kind`` (a kind name, a tuple of them, or ``None``
        for all), by name."""
        del device
        kinds = (
            ("bool", "numeric") if kind is None else kind if isinstance(kind, tuple) else (kind,)
        )
        out: dict[str, np.dtype] = {}
        for k in kinds:
            if not isinstance(k, str) or k not in _KINDS:
                raise KeyError(
                    f"unknown dtype kind {k!r}: expected one of {sorted(_KINDS)} or a tuple of them"
                )
            for name in _KINDS[k]:
                if dtypes.canonicalize(name) == np.dtype(name):
                    out[name] = np.dtype(name)
        return out


def array_namespace_info() -> ArrayNamespaceInfo:
    """The array API's inspection object for ``funcgrad.numpy``."""
    return ArrayNamespaceInfo()


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array from any object with ``__dlpack__`` (a NumPy array, a PyTorch tensor,
    another framework's array), shared with it when it lives on a device the runtime
    can read and ``copy`` is not ``True``."""
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack needs an object with __dlpack__, got {type(x).__name__}")
    return jax.dlpack.from_dlpack(x, device=device, copy=copy)
