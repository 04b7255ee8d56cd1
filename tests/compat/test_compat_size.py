"""``torch.Size`` against PyTorch 2.13's: what it accepts (ints, NumPy integers,
one-element integer tensors) and refuses, slices, ``+`` and ``*`` with tuples (on either
side) giving ``Size``s, the errors of ``+`` with other sequences, pickling."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


class _Seq(Sequence):
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: Any) -> Any:
        return [7, 8][i]


class _Wild:
    def __radd__(self, other: Any) -> int:
        return 42


def _describe(value: Any) -> tuple[str, Any]:
    name = type(value).__name__
    return name, tuple(value) if isinstance(value, tuple) else value


FORMS: dict[str, Callable[[Any], Any]] = {
    "ints": lambda t: t.Size([1, 2, 3]),
    "numpy_ints": lambda t: t.Size([np.int64(2), np.int32(3)]),
    "int_tensor_items": lambda t: t.Size(t.tensor([2, 3])),
    "slice": lambda t: t.Size([1, 2, 3])[1:],
    "empty_slice": lambda t: t.Size([1, 2, 3])[0:0],
    "item": lambda t: t.Size([1, 2, 3])[-1],
    "add_tuple": lambda t: t.Size([1, 2]) + (3,),
    "radd_tuple": lambda t: (0,) + t.Size([1, 2]),
    "add_size": lambda t: t.Size([1]) + t.Size([2]),
    "mul": lambda t: t.Size([1, 2]) * 2,
    "rmul": lambda t: 2 * t.Size([1, 2]),
    "mul_zero": lambda t: t.Size([1, 2]) * 0,
    "wildcard": lambda t: t.Size([1]) + _Wild(),
    "pickled": lambda t: pickle.loads(pickle.dumps(t.Size([4, 5]))),
    "repr": lambda t: repr(t.Size([4, 5])),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_size_forms(name: str) -> None:
    assert _describe(FORMS[name](ctorch)) == _describe(FORMS[name](torch))


ERRORS: dict[str, Callable[[Any], Any]] = {
    "float_tensor": lambda t: t.Size(t.ones(3)),
    "float_item": lambda t: t.Size([1.5]),
    "add_list": lambda t: t.Size([1, 2]) + [3],
    "add_sequence": lambda t: t.Size([1, 2]) + _Seq(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_size_errors(name: str) -> None:
    with pytest.raises(TypeError) as want:
        ERRORS[name](torch)
    with pytest.raises(TypeError) as got:
        ERRORS[name](ctorch)
    assert str(got.value) == str(want.value).replace("'torch.Size'", "'Size'")


def test_sequence_plus_size_is_unsupported() -> None:
    for lib in (torch, ctorch):
        with pytest.raises(TypeError, match="unsupported operand type"):
            _Seq() + lib.Size([1])  # type: ignore[operator]
