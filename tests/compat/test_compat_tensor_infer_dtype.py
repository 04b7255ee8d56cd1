"""``torch.tensor`` of nested data infers its dtype as PyTorch 2.13's: tensors, NumPy arrays
and NumPy scalars inside a list keep their dtypes, combined by ``promote_types`` with the
Python numbers beside them; ``torch.full`` takes its fill value's kind only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

#: data builders, each given the library (its tensors go inside the data)
DATA: dict[str, Callable[[Any], Any]] = {
    "complex128_items": lambda t: [
        t.tensor(1j, dtype=t.complex128),
        t.tensor(0j, dtype=t.complex128),
    ],
    "int16_item": lambda t: [t.tensor(1, dtype=t.int16)],
    "float64_item": lambda t: [t.tensor(1.0, dtype=t.float64)],
    "float16_nested": lambda t: [[t.tensor(1.0, dtype=t.float16)]],
    "bool_and_uint8": lambda t: [True, t.tensor(2, dtype=t.uint8)],
    "int8_and_bool": lambda t: [t.tensor(1, dtype=t.int8), True],
    "int8_and_float": lambda t: [t.tensor(1, dtype=t.int8), 2.5],
    "int16_and_int": lambda t: [t.tensor(3, dtype=t.int16), 4],
    "float64_and_complex": lambda t: [t.tensor(1.0, dtype=t.float64), 1j],
    "bfloat16_and_float16": lambda t: [t.tensor(1, dtype=t.bfloat16), t.tensor(1, dtype=t.float16)],
    "uint8_and_int8": lambda t: [t.tensor(1, dtype=t.uint8), t.tensor(-1, dtype=t.int8)],
    "np_float64": lambda t: [np.float64(1.5), 2],
    "np_int32": lambda t: [np.int32(1), np.int32(7)],
    "np_bool": lambda t: [np.bool_(True)],
    "np_array_row": lambda t: [np.ones(2, np.float32)],
    "np_array_and_list": lambda t: [np.ones(2, np.int16), [1, 2]],
    "empty_rows": lambda t: [[], []],
    "plain": lambda t: [[1, 2], [3, 4]],
}


def _made(lib: Any, name: str) -> tuple[str, list[Any]]:
    out = lib.tensor(DATA[name](lib))
    return str(out.dtype), out.tolist()


@pytest.mark.filterwarnings("ignore:Creating a tensor from a list of numpy")  # PyTorch's
@pytest.mark.parametrize("name", sorted(DATA))
def test_nested_data_dtype_and_values(name: str) -> None:
    assert _made(ctorch, name) == _made(torch, name)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_nested_data_under_a_default_dtype(default: str) -> None:
    def made(lib: Any) -> list[str]:
        saved = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            return [str(lib.tensor(DATA[n](lib)).dtype) for n in ("int8_and_float", "empty_rows")]
        finally:
            lib.set_default_dtype(saved)

    assert made(ctorch) == made(torch)


FILLS: dict[str, Callable[[Any], Any]] = {
    "np_int32": lambda t: np.int32(2),
    "np_float64": lambda t: np.float64(2.5),
    "np_complex128": lambda t: np.complex128(1j),
    "np_bool": lambda t: np.bool_(True),
    "int8_tensor": lambda t: t.tensor(2, dtype=t.int8),
    "float64_tensor": lambda t: t.tensor(2.5, dtype=t.float64),
    "bool_tensor": lambda t: t.tensor(True),
    "bool": lambda t: True,
    "int": lambda t: 3,
    "float": lambda t: 3.0,
    "complex": lambda t: 1j,
}


@pytest.mark.parametrize("name", sorted(FILLS))
def test_full_takes_the_fill_values_kind(name: str) -> None:
    def made(lib: Any) -> tuple[str, list[Any]]:
        out = lib.full((2,), FILLS[name](lib))
        return str(out.dtype), out.tolist()

    assert made(ctorch) == made(torch)


def test_uninferable_item_is_pytorchs_error() -> None:
    with pytest.raises(RuntimeError, match="Could not infer dtype of object"):
        torch.tensor([object()])
    with pytest.raises(RuntimeError, match="Could not infer dtype of object"):
        ctorch.tensor([object()])


@pytest.mark.parametrize("data", ["abc", b"ab", [1.0, "a"]], ids=["str", "bytes", "nested"])
def test_text_data_is_pytorchs_type_error(data: Any) -> None:
    errors = []
    for lib in (torch, ctorch):
        with pytest.raises(TypeError) as info:
            lib.tensor(data)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


OVERFLOWS = {
    "nan-int64": ([1.0, float("nan")], "int64"),
    "inf-int32": ([float("inf")], "int32"),
    "big-float-int64": ([1e30], "int64"),
    "float-over-uint8": ([255.9], "uint8"),
    "negative-float-uint8": ([-0.9], "uint8"),
    "int-over-uint8": ([300], "uint8"),
    "int-under-int8": ([-129], "int8"),
    "negative-wraps-uint8": ([[1, 2], [3, -1]], "uint8"),
    "negative-too-big-uint8": ([-256], "uint8"),
    "numpy-scalar-over-uint8": ([np.int64(300)], "uint8"),
    "scalar-nan-int64": (float("nan"), "int64"),
    "truncated": ([1.7, -2.5], "int64"),
    "float16-overflows-to-inf": ([1e10], "float16"),
    "bool-target": ([1.0, float("nan")], "bool"),
}


@pytest.mark.parametrize("name", sorted(OVERFLOWS))
def test_numbers_that_overflow_the_dtype_are_refused(name: str) -> None:
    """PyTorch's overflow check of Python and NumPy numbers written into an integer tensor
    (a float out of range, NaN, an integer out of range; a negative integer wraps for an
    unsigned type while its magnitude fits)."""
    data, dt = OVERFLOWS[name]

    def made(lib: Any) -> Any:
        try:
            return lib.tensor(data, dtype=getattr(lib, dt)).tolist()
        except RuntimeError as e:
            return str(e)

    assert made(ctorch) == made(torch)
