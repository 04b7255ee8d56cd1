"""``torch.normal`` with tensor arguments against PyTorch 2.13: shapes that do not
broadcast raise PyTorch's ``RuntimeError`` (a NumPy ``ValueError`` before), ``out=``
takes the draws (the same random stream), resizing with PyTorch's warning."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

PAIRS = [((120,), (2, 3, 4, 5)), ((2, 3, 4, 5), (120,)), ((2, 3, 4, 5), (4,))]


@pytest.mark.parametrize("shapes", PAIRS)
def test_shapes_that_do_not_broadcast(shapes: tuple) -> None:
    a, b = shapes
    with pytest.raises(RuntimeError) as want:
        torch.normal(torch.rand(a), torch.rand(b))
    with pytest.raises(RuntimeError) as got:
        ctorch.normal(ctorch.rand(a), ctorch.rand(b))
    assert str(got.value) == str(want.value)


def test_out() -> None:
    def run(lib: Any) -> list[Any]:
        lib.manual_seed(11)
        mean, std = lib.rand(2, 3), lib.rand(2, 1) + 0.5
        out = lib.zeros(2, 3)
        back = lib.normal(mean, std, out=out)
        small = lib.zeros(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.normal(mean, 2.0, out=small)
        return [back is out, out.reshape(-1).tolist(), tuple(small.shape), len(caught)]

    got, want = run(ctorch), run(torch)
    assert got[0] == want[0] and got[2:] == want[2:]
    assert got[1] == pytest.approx(want[1], rel=1e-6)
