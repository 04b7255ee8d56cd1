"""``chunk``/``split`` at their edges as PyTorch 2.13's: a size-0 dimension chunks into
``chunks`` empty pieces (views, with a gradient), and a negative or zero split size is
PyTorch's error (a negative one gave no pieces at all)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

SHAPES: dict[str, Callable[[Any], Any]] = {
    "chunk_empty_dim_3": lambda t: t.chunk(t.ones(0, 1, 3, 0), 3, dim=0),
    "chunk_empty_dim_last": lambda t: t.ones(0, 1, 3, 0).chunk(2, -1),
    "chunk_nonempty_dim": lambda t: t.ones(0, 1, 3, 0).chunk(3, 2),
    "unsafe_chunk_empty_dim": lambda t: t.unsafe_chunk(t.ones(2, 0), 4, 1),
    "split_zero_on_empty": lambda t: t.split(t.ones(0, 1, 3, 0), 0, dim=0),
    "split_sizes_zeros": lambda t: t.ones(0, 2).split([0, 0]),
    "chunk_uneven": lambda t: t.ones(7, 2).chunk(3),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_piece_shapes(name: str) -> None:
    def shapes(lib: Any) -> list[tuple[int, ...]]:
        return [tuple(p.shape) for p in SHAPES[name](lib)]

    assert shapes(ctorch) == shapes(torch)


def test_empty_chunks_are_views_with_a_gradient() -> None:
    def run(lib: Any) -> tuple[str, bool, tuple[int, ...]]:
        x = lib.ones(0, 3, requires_grad=True)
        pieces = x.chunk(3)
        sum(p.sum() for p in pieces).backward()
        return pieces[0].grad_fn.name(), pieces[2]._base is x, tuple(x.grad.shape)

    assert run(ctorch) == run(torch)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "zero_on_nonempty": lambda t: t.ones(0, 1, 3).split(0, 1),
    "zero_on_nonempty_1d": lambda t: t.ones(4).split(0),
    "negative": lambda t: t.ones(4).split(-1),
    "negative_section": lambda t: t.ones(4).split([2, -1, 3]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_split_size_errors(name: str) -> None:
    with pytest.raises(RuntimeError) as want:
        ERRORS[name](torch)
    with pytest.raises(RuntimeError) as got:
        ERRORS[name](ctorch)
    assert str(got.value) == str(want.value)
