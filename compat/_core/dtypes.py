"""PyTorch-style dtype objects mapped onto NumPy dtypes, and PyTorch's promotion rules."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np


class dtype:
    """A tensor element type (``torch.float32`` ...), wrapping a NumPy dtype."""

    __slots__ = ("is_complex", "is_floating_point", "is_signed", "itemsize", "name", "np")

    def __init__(self, name: str, np_dtype: Any) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fic"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> Any:
        return (from_np, (self.np,))

    def to_real(self) -> dtype:
        return self


float16 = half = dtype("float16", np.float16)
float32 = float = dtype("float32", np.float32)
float64 = double = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = short = dtype("int16", np.int16)
int32 = int = dtype("int32", np.int32)
int64 = long = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)
complex64 = cfloat = dtype("complex64", np.complex64)
complex128 = cdouble = dtype("complex128", np.complex128)

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64, complex128)
_BY_NP: dict[np.dtype, dtype] = {d.np: d for d in _ALL}

_default_float = [float32]

# Python type objects accepted where a dtype is expected (``dtype=float``)
_PYTYPES = {
    builtins.float: None,
    builtins.int: int64,
    builtins.bool: bool,
    builtins.complex: complex64,
}


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (``float32`` unless changed)."""
    return _default_float[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (``float32`` or ``float64``)."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float[0] = d


def from_np(npd: Any) -> dtype:
    npd = np.dtype(npd)
    try:
        return _BY_NP[npd]
    except KeyError:
        raise TypeError(f"compat has no dtype for NumPy dtype {npd}") from None


def to_dtype(d: Any) -> dtype:
    """Accept a compat dtype, a NumPy dtype or a Python type (``float``, ``int``, ``bool``)."""
    if isinstance(d, dtype):
        return d
    if d in _PYTYPES:
        r = _PYTYPES[d]
        return get_default_dtype() if r is None else r
    if isinstance(d, str):
        d = d.replace("torch.", "").replace("oneflow.", "")
        for cand in _ALL:
            if cand.name == d:
                return cand
        aliases = {
            "float": float32,
            "double": float64,
            "long": int64,
            "int": int32,
            "half": float16,
        }
        if d in aliases:
            return aliases[d]
    return from_np(d)


def np_dtype(d: Any) -> np.dtype:
    return to_dtype(d).np


def category(npd: np.dtype) -> builtins.int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[npd.kind]


_SCALAR_CAT = {builtins.bool: 0, builtins.int: 1, builtins.float: 2, builtins.complex: 3}


def default_for_category(cat: builtins.int) -> np.dtype:
    if cat == 0:
        return np.dtype(np.bool_)
    if cat == 1:
        return np.dtype(np.int64)
    if cat == 2:
        return get_default_dtype().np
    return np.dtype(np.complex128 if get_default_dtype() is float64 else np.complex64)


def result_type(*args: Any) -> np.dtype:
    """PyTorch's type promotion: dimensioned tensors > zero-dim tensors > Python scalars,
    each group consulted only if it holds the highest category present."""
    groups: tuple[list, list] = ([], [])
    scal_cats = []
    for a in args:
        d = getattr(a, "_npdtype", None)
        if d is not None:
            groups[0 if a.ndim else 1].append(d)
        else:
            scal_cats.append(_SCALAR_CAT.get(type(a), 2))
    cats = [category(d) for g in groups for d in g] + scal_cats
    top = max(cats)
    for g in groups:
        ds = [d for d in g if category(d) == top]
        if ds:
            out = ds[0]
            for d in ds[1:]:
                out = np.promote_types(out, d)
            return out
    return default_for_category(top)


def float_type(npd: np.dtype) -> np.dtype:
    """``npd`` if floating, else the default float dtype (integer inputs to float functions)."""
    return npd if npd.kind in "fc" else get_default_dtype().np


_SCALAR_TYPE = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def scalar_type_name(npd: np.dtype) -> str:
    """PyTorch's ScalarType name of a dtype (``Float``, ``Long``, ...), as its errors say."""
    return _SCALAR_TYPE.get(np.dtype(npd).name, np.dtype(npd).name)
