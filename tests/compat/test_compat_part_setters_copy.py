"""``t.real = v``/``t.imag = v`` write into the tensor as PyTorch 2.13's setters do, and
``copy_`` from a source that does not broadcast to the destination raises PyTorch's
``RuntimeError`` with its message (a ``ValueError`` before)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _set(attr: str, value: Callable[[Any], Any], data: list[Any]) -> Callable[[Any], Any]:
    def run(lib: Any) -> tuple[str, list[Any]]:
        x = lib.tensor(data)
        setattr(x, attr, value(lib))
        return str(x.dtype), x.tolist()

    return run


SETS: dict[str, Callable[[Any], Any]] = {
    "real_tensor": _set("real", lambda t: t.tensor([5.0, 6.0]), [1 + 2j, 3 + 4j]),
    "imag_number": _set("imag", lambda t: 7.0, [1 + 2j, 3 + 4j]),
    "real_broadcast": _set("real", lambda t: t.tensor(0.5), [[1 + 2j], [3 + 4j]]),
    "real_of_real": _set("real", lambda t: 7.0, [1.0, 2.0]),
    "real_int_value": _set("real", lambda t: t.tensor([1, 2]), [1 + 2j, 3 + 4j]),
}


@pytest.mark.parametrize("name", sorted(SETS))
def test_part_setters(name: str) -> None:
    assert SETS[name](ctorch) == SETS[name](torch)


def test_imag_of_real_tensor_raises() -> None:
    with pytest.raises(RuntimeError) as want:
        torch.ones(2).imag = 1.0
    with pytest.raises(RuntimeError) as got:
        ctorch.ones(2).imag = 1.0
    assert str(got.value) == str(want.value)


COPIES: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "mismatch": ((5, 6), (30,)),
    "empty_source": ((1, 2, 3), (0, 2, 3)),
    "more_dims": ((2, 3), (4, 1, 3)),
    "leading_one": ((2, 3), (1, 1, 3)),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_broadcast_errors(name: str) -> None:
    dst, src = COPIES[name]
    with pytest.raises(RuntimeError) as want:
        torch.zeros(dst).copy_(torch.ones(src))
    with pytest.raises(RuntimeError) as got:
        ctorch.zeros(dst).copy_(ctorch.ones(src))
    assert str(got.value) == str(want.value)


def test_copy_broadcasts_a_smaller_source() -> None:
    def run(lib: Any) -> list[Any]:
        return lib.zeros(2, 3).copy_(lib.arange(3)).tolist()

    assert run(ctorch) == run(torch)
