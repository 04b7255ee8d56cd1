"""``addcdiv`` of two integer (or bool) tensors raises PyTorch 2.13's ``RuntimeError``
(out of place and in place; compat returned a float tensor); an integer input with a
float tensor is still a float result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

CALLS: dict[str, Callable[[Any], Any]] = {
    "ints": lambda t: t.addcdiv(
        t.ones(2, dtype=t.int64), t.ones(2, dtype=t.int64), t.ones(2, dtype=t.int64)
    ),
    "float_input_int8s": lambda t: t.addcdiv(
        t.ones(2), t.ones(2, dtype=t.int8), t.ones(2, dtype=t.int8)
    ),
    "inplace_int_and_bool": lambda t: t.ones(2).addcdiv_(
        t.ones(2, dtype=t.int64), t.ones(2, dtype=t.bool)
    ),
    "method": lambda t: t.ones(2, dtype=t.int32).addcdiv(
        t.ones(2, dtype=t.int32), t.ones(2, dtype=t.int32), value=2
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_integer_division_refused(name: str) -> None:
    with pytest.raises(RuntimeError) as want:
        CALLS[name](torch)
    with pytest.raises(RuntimeError) as got:
        CALLS[name](ctorch)
    assert str(got.value) == str(want.value)


def test_integer_input_with_a_float_tensor() -> None:
    def run(lib: Any) -> tuple[str, list[float]]:
        out = lib.addcdiv(
            lib.ones(2, dtype=lib.int64), lib.ones(2), lib.full((2,), 4, dtype=lib.int8)
        )
        return str(out.dtype), out.tolist()

    assert run(ctorch) == run(torch)
