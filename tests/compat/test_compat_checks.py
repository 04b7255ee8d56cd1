"""``torch._check`` and its family, and ``torch.is_signed``, against PyTorch 2.13: error
types, default and given messages, the checks of their arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

CHECKS = ["_check", "_check_index", "_check_value", "_check_type", "_check_not_implemented"]


def _outcome(call: Callable[[], Any]) -> tuple[str, str]:
    try:
        call()
    except Exception as e:  # (the outcome is compared with PyTorch's)
        return type(e).__name__, str(e)
    return "ok", ""


@pytest.mark.parametrize("name", CHECKS)
def test_check_family(name: str) -> None:
    def run(lib: Any) -> list[tuple[str, str]]:
        f = getattr(lib, name)
        return [
            _outcome(lambda: f(True)),
            _outcome(lambda: f(False)),
            _outcome(lambda: f(False, lambda: "the message")),
            _outcome(lambda: f(False, lambda: 42)),
            _outcome(lambda: f(lib.tensor(True))),
            _outcome(lambda: f(1)),
        ]

    assert run(ctorch) == run(torch)


def test_check_with_and_tensor_all() -> None:
    def run(lib: Any) -> list[tuple[str, str]]:
        return [
            _outcome(lambda: lib._check_with(KeyError, False, lambda: "k")),
            _outcome(lambda: lib._check_with(UserWarning, False, lambda: "w")),
            _outcome(lambda: lib._check_with(ValueError, False, "not callable")),
            _outcome(lambda: lib._check_tensor_all(lib.tensor([True, True]))),
            _outcome(lambda: lib._check_tensor_all(lib.tensor([True, False]), lambda: "m")),
            _outcome(lambda: lib._check_tensor_all(lib.tensor([1, 1]))),
            _outcome(lambda: lib._check_tensor_all(True)),
        ]

    assert run(ctorch) == run(torch)


def test_is_signed() -> None:
    def run(lib: Any) -> list[Any]:
        names = ["uint8", "int8", "int64", "bool", "float16", "bfloat16", "float64", "complex64"]
        out = [lib.is_signed(lib.tensor(0, dtype=getattr(lib, n))) for n in names]
        return [*out, _outcome(lambda: lib.is_signed(3))]

    assert run(ctorch) == run(torch)
