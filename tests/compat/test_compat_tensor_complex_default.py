"""``torch.tensor`` of Python complex numbers takes the complex counterpart of the default
dtype (``complex128`` under ``float64``), as PyTorch 2.13's; and the promotions built on it."""

from __future__ import annotations

from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _dtypes(lib: Any, default: str) -> list[str]:
    saved = lib.get_default_dtype()
    lib.set_default_dtype(getattr(lib, default))
    try:
        made = [
            lib.tensor([2j, 2j]),
            lib.tensor(1j),
            lib.tensor([1, 2.5j]),
            lib.tensor([[True, 1j], [2, 3.0]]),
            1j * lib.ones(2),
            lib.ones(2) + 1j,
            lib.ones(2, dtype=lib.float32) * 1j,
            lib.tensor([1.0, 2.0]),
        ]
        return [str(t.dtype) for t in made]
    finally:
        lib.set_default_dtype(saved)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_complex_data_follows_the_default_dtype(default: str) -> None:
    assert _dtypes(ctorch, default) == _dtypes(torch, default)
