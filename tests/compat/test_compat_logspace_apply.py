"""``torch.logspace`` and ``Tensor.apply_``/``map_``/``map2_`` against PyTorch 2.13:
values and dtypes (integer dtypes truncate as PyTorch's kernel does), and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LOGSPACES: list[tuple[tuple, dict[str, Any]]] = [
    ((0, 3, 4), {}),
    ((0, 3, 4), {"base": 2, "dtype": "int64"}),
    ((-1, 2, 5), {"dtype": "float64"}),
    ((0.5, 3, 6), {"dtype": "int32"}),
    ((-2.5, 1.5, 7), {"base": 3.0, "dtype": "float64"}),
    ((0, 1, 1), {}),
    ((0, 1, 0), {}),
    ((1, -1, 9), {"base": 0.5}),
]


@pytest.mark.parametrize("args, kw", LOGSPACES)
def test_logspace(args: tuple, kw: dict[str, Any]) -> None:
    def run(lib: Any) -> tuple[str, np.ndarray]:
        k = {**kw, **({"dtype": getattr(lib, kw["dtype"])} if "dtype" in kw else {})}
        out = lib.logspace(*args, **k)
        return str(out.dtype), out.numpy()

    (da, a), (db, b) = run(ctorch), run(torch)
    assert da == db
    if a.dtype.kind in "iu":
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=2e-7 if a.dtype == np.float32 else 1e-15)


def test_logspace_of_tensors_requiring_grad_is_a_leaf() -> None:
    for lib in (torch, ctorch):
        out = lib.logspace(lib.tensor(0.0, requires_grad=True), 3.0, 4)
        assert not out.requires_grad


CALLS: dict[str, Callable[[Any], Any]] = {
    "apply_int": lambda t: t.arange(1, 6).apply_(lambda k: k * 2.7),
    "apply_bool": lambda t: t.tensor([True, False]).apply_(lambda v: not v),
    "apply_complex": lambda t: t.tensor([1 + 1j, 2]).apply_(lambda v: v * 2j),
    "map_broadcast": lambda t: (
        t.arange(6.0).reshape(2, 3).map_(t.tensor([1.0, 2, 3]), lambda a, b: a * b)
    ),
    "map2": lambda t: t.zeros(2, 2).map2_(
        t.tensor([1.0, 2]), t.tensor([[3.0], [4.0]]), lambda a, b, c: a + b - c
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_apply_and_maps(name: str) -> None:
    def run(lib: Any) -> tuple[str, list[Any]]:
        out = CALLS[name](lib)
        return str(out.dtype), out.tolist()

    assert run(ctorch) == run(torch)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "str_into_int": lambda t: t.arange(3).apply_(lambda v: "s"),
    "str_into_float": lambda t: t.ones(2).apply_(lambda v: "s"),
    "not_callable": lambda t: t.ones(2).map_(t.ones(2), "str"),
    "dtype": lambda t: t.ones(2).map_(t.ones(2, dtype=t.float64), lambda a, b: a),
    "requires_grad": lambda t: t.ones(2, requires_grad=True).apply_(lambda v: v),
    "other_requires_grad": lambda t: t.ones(2).map2_(
        t.ones(2), t.ones(2, requires_grad=True), lambda a, b, c: a
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    with pytest.raises((TypeError, RuntimeError)) as want:
        ERRORS[name](torch)
    with pytest.raises(want.type) as got:
        ERRORS[name](ctorch)
    assert str(got.value) == str(want.value)
