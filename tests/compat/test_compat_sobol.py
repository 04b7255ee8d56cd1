"""``torch.quasirandom.SobolEngine`` against PyTorch 2.13's: unscrambled and scrambled
points (bit for bit, several dimensions and seeds), draw/fast_forward/reset/draw_base2
sequences, dtypes, ``out=``, ``repr`` and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _sequence(lib: Any, dimension: int, scramble: bool, seed: int | None) -> list[Any]:
    e = lib.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed)
    out = [e.draw().numpy(), e.draw(7, dtype=lib.float64).numpy()]
    e.fast_forward(9)
    out.append(e.draw(5).numpy())
    e.reset()
    e.fast_forward(3)
    out.append(e.draw(4, dtype=lib.float64).numpy())
    e.reset()
    out += [e.draw_base2(3).numpy(), e.draw_base2(3).numpy(), str(e.draw(2).dtype)]
    out.append(repr(e))
    return out


@pytest.mark.parametrize(
    "dimension, scramble, seed",
    [(1, False, None), (7, False, None), (300, False, None), (2, True, 123456), (40, True, 7)],
)
def test_points_as_pytorch(dimension: int, scramble: bool, seed: int | None) -> None:
    got, want = (
        _sequence(ctorch, dimension, scramble, seed),
        _sequence(torch, dimension, scramble, seed),
    )
    assert got[-2:] == want[-2:]
    for a, b in zip(got[:-2], want[:-2]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_default_dtype_and_out() -> None:
    def run(lib: Any) -> list[Any]:
        e = lib.quasirandom.SobolEngine(3, scramble=True, seed=5)
        saved = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            first = e.draw(2)
        finally:
            lib.set_default_dtype(saved)
        out = lib.empty(0)
        back = e.draw(3, out=out)
        return [str(first.dtype), first.tolist(), back is out, out.tolist()]

    assert run(ctorch) == run(torch)


def test_errors() -> None:
    for lib in (torch, ctorch):
        with pytest.raises(ValueError, match=r"Supported range of dimensionality .* \[1, 21201\]"):
            lib.quasirandom.SobolEngine(lib.quasirandom.SobolEngine.MAXDIM + 1)
        with pytest.raises(ValueError, match="Supported range"):
            lib.quasirandom.SobolEngine(0)
        e = lib.quasirandom.SobolEngine(2)
        e.draw(3)
        with pytest.raises(ValueError, match="balance properties of Sobol' points"):
            e.draw_base2(2)
