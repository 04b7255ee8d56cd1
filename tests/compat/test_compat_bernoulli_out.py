"""``torch.bernoulli(p, out=t)`` as PyTorch 2.13's: the draws (the same random stream)
written into ``t`` in its own dtype (``bool`` and integers too), an empty ``t`` resized."""

from __future__ import annotations

from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("out_dtype", ["bool", "int16", "float32", "float64"])
@pytest.mark.parametrize("p_dtype", ["float32", "float64"])
def test_bernoulli_out(out_dtype: str, p_dtype: str) -> None:
    def run(lib: Any) -> tuple[bool, str, list[Any]]:
        lib.manual_seed(3)
        p = lib.rand(4, 5, dtype=getattr(lib, p_dtype))
        t = lib.empty(4, 5, dtype=getattr(lib, out_dtype))
        back = lib.bernoulli(p, out=t)
        return back is t, str(t.dtype), t.tolist()

    assert run(ctorch) == run(torch)


def test_bernoulli_out_resizes_an_empty_tensor() -> None:
    def run(lib: Any) -> tuple[tuple[int, ...], list[Any]]:
        lib.manual_seed(4)
        t = lib.empty(0)
        lib.bernoulli(lib.rand(2, 3), out=t)
        return tuple(t.shape), t.tolist()

    assert run(ctorch) == run(torch)
