"""``put``/``put_`` and ``index_put``/``index_put_`` against PyTorch 2.13: values
(negative flat indices, non-contiguous ``self``, bool masks, partial indices, repeated
indices with ``accumulate=True``), gradients, and PyTorch's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

BASE = np.arange(12, dtype=np.float32).reshape(3, 4)

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "put_negative": lambda t, x: x.put_(t.tensor([-1, -12, 5]), t.tensor([1.0, 2.0, 3.0])),
    "put_accumulate": lambda t, x: x.put_(t.tensor([1, 1, 4]), t.tensor([5.0, 6.0, 7.0]), True),
    "put_transposed": lambda t, x: x.t().put_(t.tensor([1, 2]), t.tensor([-1.0, -2.0])),
    "put_function": lambda t, x: t.put(x, t.tensor([[0, 3]]), t.tensor([[9.0, 8.0]])),
    "index_put_pairs": lambda t, x: t.index_put(
        x, (t.tensor([1, 2]), t.tensor([0, 3])), t.tensor(-5.0)
    ),
    "index_put_rows_accumulate": lambda t, x: x.index_put_(
        (t.tensor([0, 0, 2]),), t.ones(4), accumulate=True
    ),
    "index_put_mask": lambda t, x: x.index_put_((x > 6,), t.tensor(0.5), accumulate=True),
    "index_put_repeats": lambda t, x: x.index_put_(
        (t.tensor([1, 1]), t.tensor([2, 2])), t.tensor([1.0, 10.0]), True
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values(name: str) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor(BASE)
        return CASES[name](lib, x).tolist()

    assert run(ctorch) == run(torch)


def test_gradients() -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor(BASE, requires_grad=True)
        src = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.put(x * 2, lib.tensor([0, 0, 7]), src, accumulate=True)
        # (distinct positions: with repeated ones, compat's scatter gives the gradient to
        # one of the values written there, PyTorch's to each; see docs/conformance.md)
        z = lib.index_put(y, (lib.tensor([2]),), src[:1].expand(4) * 3)
        (z.sin() * lib.arange(12.0).reshape(3, 4)).sum().backward()
        return [x.grad.numpy().round(5).tolist(), src.grad.numpy().round(5).tolist()]

    assert run(ctorch) == run(torch)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "put_out_of_range": lambda t: t.zeros(2, 3).put_(t.tensor([7]), t.tensor([1.0])),
    "put_float_index": lambda t: t.zeros(2, 3).put_(t.tensor([1.0]), t.tensor([1.0])),
    "put_dtypes": lambda t: t.zeros(2, 3).put_(t.tensor([1]), t.tensor([1.0], dtype=t.float64)),
    "put_counts": lambda t: t.zeros(2, 3).put_(t.tensor([1, 2]), t.tensor([1.0])),
    "index_put_dtypes": lambda t: t.zeros(2, 3).index_put_(
        (t.tensor([0]),), t.tensor([1.0], dtype=t.float64)
    ),
    "index_put_none": lambda t: t.zeros(2, 3).index_put_((None, t.tensor([1])), t.tensor(1.0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    with pytest.raises((RuntimeError, IndexError, TypeError)) as want:
        ERRORS[name](torch)
    with pytest.raises(want.type) as got:
        ERRORS[name](ctorch)
    if want.type is not TypeError:
        assert str(got.value) == str(want.value)
