"""Stand-in for ``torch.testing._internal.common_dtype``: the dtype lists tests loop over.

PyTorch's device-generic tests name one case per dtype (``test_x_cpu_float32``), so
these lists hold the same dtypes as PyTorch's (the swapped run then generates the
same test ids). A dtype compat lacks (``complex32``, the float8 and quantized types)
is left out of the lists that may hold it: the cases PyTorch generates for it are
then not collected and count as failures, which is what they are.
"""

from __future__ import annotations

from typing import Any

import torch  # swapped: the library under test

from tools.conformance.shims.swap import Missing


def _have(*names: str) -> tuple[Any, ...]:
    return tuple(getattr(torch, n) for n in names if hasattr(torch, n))


_FLOAT = _have("float32", "float64")
_COMPLEX = _have("complex64", "complex128")
_INT = _have("uint8", "int8", "int16", "int32", "int64")


_FLOAT8 = _have("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")


class _dispatch_dtypes(tuple):
    """A tuple of dtypes whose sum stays one (PyTorch's ``common_dtype`` type, which test
    files build their own lists with)."""

    def __add__(self, other: Any) -> _dispatch_dtypes:
        if not isinstance(other, tuple):
            raise AssertionError(f"expected a tuple of dtypes, got {type(other)}")
        return _dispatch_dtypes(tuple(self) + tuple(other))


def _and(base: tuple[Any, ...], extra: tuple[Any, ...]) -> tuple[Any, ...]:
    """``base`` and the ``extra`` dtypes compat has (a dtype it lacks, such as
    ``torch.complex32``, is the swap's placeholder: its cases are not collected)."""
    for d in extra:
        if not isinstance(d, (torch.dtype, Missing)):
            raise AssertionError(f"Expected dtype to be torch.dtype, got {type(d)}")
    return base + tuple(d for d in extra if not isinstance(d, Missing))


def empty_types() -> tuple[Any, ...]:
    return ()


def floating_types() -> tuple[Any, ...]:
    return _FLOAT


def floating_types_and_half() -> tuple[Any, ...]:
    return _FLOAT + (torch.float16,)


def floating_types_and(*dtypes: Any) -> tuple[Any, ...]:
    return _and(_FLOAT, dtypes)


def floating_and_complex_types() -> tuple[Any, ...]:
    return _FLOAT + _COMPLEX


def floating_and_complex_types_and(*dtypes: Any) -> tuple[Any, ...]:
    return _and(_FLOAT + _COMPLEX, dtypes)


def double_types() -> tuple[Any, ...]:
    return (torch.float64, torch.complex128)


def integral_types() -> tuple[Any, ...]:
    return _INT


def integral_types_and(*dtypes: Any) -> tuple[Any, ...]:
    return _and(_INT, dtypes)


def all_types() -> tuple[Any, ...]:
    return _FLOAT + _INT


def all_types_and(*dtypes: Any) -> tuple[Any, ...]:
    return _and(_FLOAT + _INT, dtypes)


def complex_types() -> tuple[Any, ...]:
    return _COMPLEX


def complex_types_and(*dtypes: Any) -> tuple[Any, ...]:
    return _and(_COMPLEX, dtypes)


def all_types_and_complex() -> tuple[Any, ...]:
    return _FLOAT + _INT + _COMPLEX


def all_types_and_complex_and(*dtypes: Any) -> tuple[Any, ...]:
    return _and(_FLOAT + _INT + _COMPLEX, dtypes)


def all_types_complex_float8_and(*dtypes: Any) -> tuple[Any, ...]:
    """All types, complex and the float8 types (those compat has: none at present)."""
    return _and(_FLOAT + _INT + _COMPLEX + _FLOAT8, dtypes)


def all_types_and_half() -> tuple[Any, ...]:
    return _FLOAT + _INT + (torch.float16,)


def custom_types(*dtypes: Any) -> tuple[Any, ...]:
    return _and((), dtypes)


def get_all_int_dtypes() -> list[Any]:
    return list(_INT)


def get_all_fp_dtypes(include_half: bool = True, include_bfloat16: bool = True) -> list[Any]:
    out = list(_FLOAT)
    if include_half:
        out.append(torch.float16)
    if include_bfloat16:
        out.append(torch.bfloat16)
    return out


def get_all_complex_dtypes(include_complex32: bool = False) -> list[Any]:
    return list(_have("complex32") if include_complex32 else ()) + list(_COMPLEX)


def get_all_dtypes(
    include_half: bool = True, include_bfloat16: bool = True, include_bool: bool = True,
    include_complex: bool = True, include_complex32: bool = False, include_qint: bool = False,
) -> list[Any]:  # fmt: skip
    """Integers, floats, ``bool`` and complex types, in PyTorch's order."""
    out = get_all_int_dtypes() + get_all_fp_dtypes(include_half, include_bfloat16)
    if include_bool:
        out.append(torch.bool)
    if include_complex:
        out += get_all_complex_dtypes(include_complex32)
    if include_qint:
        out += list(_have("qint8", "quint8", "qint32", "quint4x2", "quint2x4"))
    return out


def get_all_qint_dtypes() -> list[Any]:
    """The quantized dtypes compat has (none: quantized tensors are out of scope)."""
    return list(_have("qint8", "quint8", "qint32", "quint4x2", "quint2x4"))


def get_all_math_dtypes(device: str) -> list[Any]:
    """Integers, floats (half on CUDA only) and complex types."""
    half = str(device).startswith("cuda")
    return get_all_int_dtypes() + get_all_fp_dtypes(half, False) + get_all_complex_dtypes()


def highest_precision_float(device: Any) -> Any:
    return torch.float64


#: each real dtype's complex counterpart (``float16`` only where compat has ``complex32``)
float_to_corresponding_complex_type_map = dict(zip(_FLOAT, _COMPLEX))
if hasattr(torch, "complex32"):
    float_to_corresponding_complex_type_map[torch.float16] = torch.complex32
