"""PyTorch-style dtype objects mapped onto NumPy dtypes, and PyTorch's promotion rules."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad._compat_contract import compile_cache
from funcgrad.numpy import bfloat16 as _bfloat16
from funcgrad.numpy import finfo as _np_finfo

#: NumPy's bfloat16 (ml_dtypes', as JAX's); its NumPy kind letter is "V", not "f"
_BF16 = np.dtype(_bfloat16)


def kind(npd: np.dtype) -> str:
    """NumPy's kind letter of ``npd`` ("b", "i", "u", "f", "c"), bfloat16 counted as "f"."""
    return "f" if npd == _BF16 else npd.kind


class dtype:
    """A tensor element type (``torch.float32`` ...), wrapping a NumPy dtype."""

    __slots__ = ("is_complex", "is_floating_point", "is_signed", "itemsize", "name", "np")

    def __init__(self, name: str, np_dtype: Any) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = kind(self.np) == "f"
        self.is_complex = kind(self.np) == "c"
        self.is_signed = kind(self.np) in "fic"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> Any:
        return (from_np, (self.np,))

    def to_real(self) -> dtype:
        return self


float16 = half = dtype("float16", np.float16)
bfloat16 = dtype("bfloat16", _BF16)
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

_ALL = (
    float16,
    bfloat16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    bool,
    complex64,
    complex128,
)
_BY_NP: dict[np.dtype, dtype] = {d.np: d for d in _ALL}

_default_float = [float32]

# Python type objects accepted where a dtype is expected (``dtype=float``): PyTorch reads
# them as the C types of Python's numbers, whatever the default dtype (float is double)
_PYTYPES = {
    builtins.float: float64,
    builtins.int: int64,
    builtins.bool: bool,
    builtins.complex: complex128,
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
        return _PYTYPES[d]
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


_KIND_CAT = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def category(npd: np.dtype) -> builtins.int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    return _KIND_CAT[kind(npd)]


_SCALAR_CAT = {builtins.bool: 0, builtins.int: 1, builtins.float: 2, builtins.complex: 3}


def default_for_category(cat: builtins.int) -> np.dtype:
    if cat == 0:
        return np.dtype(np.bool_)
    if cat == 1:
        return np.dtype(np.int64)
    if cat == 2:
        return get_default_dtype().np
    return np.dtype(np.complex128 if get_default_dtype() is float64 else np.complex64)


#: ``result_type``'s answers by what decides them: per argument a tensor's ``(dtype,
#: dimensioned)`` or a scalar's type, and the default dtype (emptied when full)
_RESULT_TYPES: dict[tuple, np.dtype] = {}
compile_cache.register(
    "compat_result_types", size=lambda: len(_RESULT_TYPES), clear=_RESULT_TYPES.clear
)


def result_type(*args: Any) -> np.dtype:
    """PyTorch's type promotion: dimensioned tensors > zero-dim tensors > Python scalars,
    each group's dtypes promoted together, a lower group deciding only where its category
    (bool < integer < float < complex) is higher than the groups above it."""
    key: list = [_default_float[0]]
    for a in args:
        d = getattr(a, "_npdtype", None)
        key.append((d, a.ndim != 0) if d is not None else type(a))
    key_t = tuple(key)
    out = _RESULT_TYPES.get(key_t)
    if out is None:
        if len(_RESULT_TYPES) >= 1024:
            _RESULT_TYPES.clear()
        out = _RESULT_TYPES[key_t] = _result_type(args)
    return out


def _result_type(args: Sequence[Any]) -> np.dtype:
    # PyTorch's three groups, each promoted within itself (float64 with complex64 is
    # complex128), then combined by category: a lower group decides only where it is of a
    # higher category than the groups above it
    dim = zero = wrapped = None
    for a in args:
        d = getattr(a, "_npdtype", None)
        if d is None:  # a Python number: its category's default dtype
            d = default_for_category(_SCALAR_CAT.get(type(a), 2))
            wrapped = d if wrapped is None else promote(wrapped, d)
        elif a.ndim:
            dim = d if dim is None else promote(dim, d)
        else:
            zero = d if zero is None else promote(zero, d)
    out = _combine(dim, _combine(zero, wrapped))
    if out is None:
        raise TypeError("result_type needs at least one tensor or number")
    return out


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """The dtype of a higher-priority group's ``higher`` with a lower one's ``lower``: the
    lower counts only where its category is higher (a complex ``lower`` makes a float
    ``higher`` complex of the same width)."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    kh, kl = kind(higher), kind(lower)
    if kh == "c":
        return higher
    if kl == "c":
        if kh != "f":
            return lower
        return np.dtype(np.complex128 if higher == np.float64 else np.complex64)
    if kh == "f":
        return higher
    if kh == "b" or kl == "f":
        return promote(higher, lower)  # (a float ``lower``: it, as an integer ``higher``'s)
    return higher


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """``np.promote_types`` with PyTorch's rules where they differ: an integer or bool with
    a float or complex dtype is that dtype (int64 with float32 is float32, not float64);
    bfloat16 with float16 is float32, with a wider float that float."""
    ka, kb = kind(a), kind(b)
    if (ka in "fc") != (kb in "fc"):
        return a if ka in "fc" else b
    if a != _BF16 and b != _BF16:
        return np.promote_types(a, b)
    other = b if a == _BF16 else a
    if other == _BF16 or kind(other) in "biu":
        return _BF16
    if other == np.float16:
        return np.dtype(np.float32)
    return np.promote_types(other, np.float32)


def float_type(npd: np.dtype) -> np.dtype:
    """``npd`` if floating, else the default float dtype (integer inputs to float functions)."""
    return npd if kind(npd) in "fc" else get_default_dtype().np


_SCALAR_TYPE = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint64": "UInt64",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


#: PyTorch's legacy tensor type names (``t.type()``: ``FloatTensor``, ``LongTensor``, ...)
TENSOR_TYPE_NAMES = {k: v + "Tensor" for k, v in _SCALAR_TYPE.items()}


def scalar_type_name(npd: np.dtype) -> str:
    """PyTorch's ScalarType name of a dtype (``Float``, ``Long``, ...), as its errors say."""
    return _SCALAR_TYPE.get(np.dtype(npd).name, np.dtype(npd).name)


#: C++ type names of dtypes (``TypeMeta``)
_TYPE_META = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def type_meta_name(npd: np.dtype) -> str:
    """PyTorch's C++ type name of a dtype (``float``, ``long int``, ``c10::Half``), as some
    of its errors say (the ``.grad`` setter's, a softmax's ``out=`` dtype check)."""
    return _TYPE_META.get(np.dtype(npd).name, np.dtype(npd).name)


class finfo:
    """``torch.finfo(dtype=None)``: the numerical limits of a floating (or complex: its
    real part's) dtype, as Python floats; the default dtype when none is given."""

    def __init__(self, type: Any = None) -> None:
        d = get_default_dtype() if type is None else to_dtype(type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError(
                "torch.finfo() requires a floating point input type. "
                "Use torch.iinfo to handle 'torch.finfo'"
            )
        real = {"complex64": float32, "complex128": float64}.get(d.name, d)
        info = _np_finfo(real.np)
        self.bits = builtins.int(info.bits)
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -builtins.int(np.floor(-np.log10(self.eps)))
        self.dtype = real.name

    def __eq__(self, other: object) -> builtins.bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """``torch.iinfo(dtype)``: the limits of an integer (or bool-free) dtype, as ints."""

    def __init__(self, type: Any) -> None:
        d = to_dtype(type)
        if kind(d.np) not in "iu":
            raise TypeError(
                "torch.iinfo() requires an integer input type. "
                "Use torch.finfo to handle 'torch.iinfo'"
            )
        info = np.iinfo(d.np)
        self.bits, self.max, self.min = (
            builtins.int(info.bits),
            builtins.int(info.max),
            builtins.int(info.min),
        )
        self.dtype = d.name

    def __eq__(self, other: object) -> builtins.bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
