"""``torch.gradient`` against PyTorch 2.13's: uniform spacings (one number, or one per
dimension), 1-D coordinates, both edge orders, chosen dimensions, integer and complex
inputs (values and dtypes), its errors, and a gradient through it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
DATA = {
    "f32_5": RNG.standard_normal(5).astype(np.float32),
    "f64_4x6": RNG.standard_normal((4, 6)),
    "i64_3x4x5": RNG.integers(-9, 9, (3, 4, 5)),
    "c64_4x3": (RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))).astype(
        np.complex64
    ),
    "f32_2x3": RNG.standard_normal((2, 3)).astype(np.float32),
}

#: (data, spacing kind, dim, edge_order)
CASES = [
    ("f32_5", "none", None, 1),
    ("f32_5", "number", None, 2),
    ("f32_5", "coords", 0, 2),
    ("f64_4x6", "list", None, 1),
    ("f64_4x6", "coords", (1, 0), 2),
    ("f64_4x6", "number", -1, 2),
    ("i64_3x4x5", "none", (0, 2), 1),
    ("i64_3x4x5", "int", (2,), 2),
    ("i64_3x4x5", "coords_int", (1,), 1),
    ("c64_4x3", "coords", None, 2),
    ("c64_4x3", "number", 0, 1),
    ("f32_2x3", "none", None, 1),
]


def _spacing(lib: Any, kind: str, shape: tuple[int, ...], dims: list[int]) -> Any:
    if kind == "number":
        return 0.5
    if kind == "int":
        return 2
    if kind == "list":
        return [0.5 + i for i in range(len(dims))]
    if kind == "coords":
        return [lib.tensor(np.cumsum(np.linspace(0.5, 1.5, shape[d]))) for d in dims]
    if kind == "coords_int":
        return [lib.tensor(np.cumsum(np.arange(1, shape[d] + 1))) for d in dims]
    return None


def _run(lib: Any, case: tuple) -> list[tuple[str, np.ndarray]]:
    name, kind, dim, edge = case
    x = lib.tensor(DATA[name])
    dims = list(range(x.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [d % x.ndim for d in dims]
    kw: dict[str, Any] = {"edge_order": edge}
    if dim is not None:
        kw["dim"] = dim
    spacing = _spacing(lib, kind, tuple(x.shape), dims)
    if spacing is not None:
        kw["spacing"] = spacing
    return [(str(g.dtype), g.numpy()) for g in lib.gradient(x, **kw)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_values_and_dtypes(case: tuple) -> None:
    got, want = _run(ctorch, case), _run(torch, case)
    assert [d for d, _ in got] == [d for d, _ in want]
    for (_, a), (_, b) in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-5)


def test_zero_dim_input_gives_no_gradients() -> None:
    assert ctorch.gradient(ctorch.tensor(3.0)) == torch.gradient(torch.tensor(3.0)) == ()


ERRORS: dict[str, dict[str, Any]] = {
    "one_spacing_two_dims": {"spacing": (2,)},
    "three_spacings": {"spacing": (2.0, 2.0, 2.0)},
    "spacing_dim_lengths": {"spacing": [1.0, 2.0], "dim": 0},
    "edge_order_3": {"edge_order": 3},
    "too_short_for_order": {"edge_order": 2},
    "repeated_dim": {"dim": (0, 0)},
    "dim_out_of_range": {"dim": 5},
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    kw = ERRORS[name]
    with pytest.raises((RuntimeError, IndexError)) as want:
        torch.gradient(torch.ones(2, 2), **kw)
    with pytest.raises(want.type) as got:
        ctorch.gradient(ctorch.ones(2, 2), **kw)
    assert str(got.value) == str(want.value)


def test_mixed_numbers_and_coordinates_error() -> None:
    with pytest.raises(TypeError, match="expected Tensor as element 0 in argument 1"):
        torch.gradient(torch.ones(3, 3), spacing=[1.5, torch.arange(3.0)])
    with pytest.raises(TypeError, match="expected Tensor as element 0 in argument 1"):
        ctorch.gradient(ctorch.ones(3, 3), spacing=[1.5, ctorch.arange(3.0)])


def test_coordinates_of_two_dimensions_error() -> None:
    with pytest.raises(RuntimeError) as want:
        torch.gradient(torch.ones(3, 3), spacing=[torch.ones(3, 3)], dim=0)
    with pytest.raises(RuntimeError) as got:
        ctorch.gradient(ctorch.ones(3, 3), spacing=[ctorch.ones(3, 3)], dim=0)
    assert str(got.value) == str(want.value)


def test_backward_through_gradient() -> None:
    def run(lib: Any) -> np.ndarray:
        x = lib.tensor(DATA["f64_4x6"], requires_grad=True)
        coords = lib.tensor(np.cumsum(np.linspace(0.5, 1.5, 6)))
        gy, gx = lib.gradient(x, spacing=[lib.arange(4.0) * 1.5, coords], edge_order=2)
        (gy.sin().sum() + (gx**2).sum()).backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(ctorch), run(torch), rtol=1e-10, atol=1e-12)
