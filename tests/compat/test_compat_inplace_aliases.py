"""``Tensor.true_divide_``, ``divide_``, ``multiply_`` and ``subtract_`` (PyTorch's other
spellings of ``div_``, ``mul_``, ``sub_``) against PyTorch 2.13: values, dtypes, the
graph node, and the in-place cast error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]

CALLS = {
    "true_divide_": lambda t, o: t.true_divide_(o),
    "divide_": lambda t, o: t.divide_(o),
    "divide_floor": lambda t, o: t.divide_(o, rounding_mode="floor"),
    "multiply_": lambda t, o: t.multiply_(o),
    "subtract_": lambda t, o: t.subtract_(o),
    "subtract_alpha": lambda t, o: t.subtract_(o, alpha=2.5),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("other", ["tensor", "number"])
def test_values_and_gradients(name: str, other: str) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 3)), rng.uniform(0.5, 2.0, (2, 3))
    results = []
    for lib in LIBS:
        leaf = lib.tensor(x, requires_grad=True)
        t = leaf.clone()
        o: Any = lib.tensor(y) if other == "tensor" else 1.5
        out = CALLS[name](t, o)
        assert out is t
        out.sum().backward()
        results.append((out.detach().numpy(), str(out.dtype), leaf.grad.numpy()))
    assert results[0][1] == results[1][1]
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)


def test_integer_true_divide_refuses_the_cast() -> None:
    msgs = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.ones(3, dtype=lib.long).true_divide_(2)
        msgs.append(str(info.value))
        t = lib.ones(3, dtype=lib.long)
        t.multiply_(3)
        assert t.tolist() == [3, 3, 3] and t.dtype == lib.long
    assert msgs[0] == msgs[1]
