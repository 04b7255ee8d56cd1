"""Dtypes as PyTorch's messages name them (``Float``, ``c10::Half``), and casts of masks."""

from __future__ import annotations

from typing import Any

import numpy as np

import compat.torch as torch
from compat.torch.nn.functional._arguments import Tensor

_TENSOR_TYPE = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "uint8": "Byte",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


_SCALAR_NAME = {"Half": "c10::Half", "BFloat16": "c10::BFloat16"}


def _type_name(t: Tensor) -> str:
    return _TENSOR_TYPE.get(np.dtype(t._npdtype).name, str(t.dtype))


def _to_dtype(t: Tensor, dtype: Any) -> Tensor:
    """``t.to(dtype)``: used on masks built from comparisons (no gradient involved)."""
    if t.dtype == dtype:
        return t
    return t.to(dtype)


def _is_floating(t: Tensor) -> bool:
    is_fp = getattr(t, "is_floating_point", None)
    if is_fp is not None:
        return bool(is_fp())
    return t.dtype in (torch.float32, torch.float64)
