"""Values where compat differed from PyTorch 2.13 silently: NaN (and -0.0) through
``relu`` and ``threshold``; ``cosine_similarity`` with a zero vector (its gradient was
NaN), broadcast inputs, 0-d inputs and integer inputs; ``normalize`` of a 0-d input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]

SPECIAL = np.array([np.nan, -1.0, 0.0, -0.0, 2.0, np.inf, -np.inf, 0.25], dtype=np.float32)

FORMS: dict[str, Callable[[Any, Any], Any]] = {
    "relu": lambda lib, t: lib.relu(t),
    "relu_inplace": lambda lib, t: lib.nn.functional.relu(t.clone(), inplace=True),
    "relu6": lambda lib, t: lib.nn.functional.relu6(t),
    "threshold_0": lambda lib, t: lib.nn.functional.threshold(t, 0.0, 7.0),
    "threshold_half": lambda lib, t: lib.nn.functional.threshold(t, 0.5, -1.0),
    "threshold_nan": lambda lib, t: lib.nn.functional.threshold(t, float("nan"), 7.0),
    "threshold_inf": lambda lib, t: lib.nn.functional.threshold(t, float("inf"), 7.0),
    "threshold_inplace": lambda lib, t: lib.nn.functional.threshold_(t.clone(), 0.0, 3.0),
}


@pytest.mark.parametrize("name", list(FORMS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_nan_and_signed_zero(name: str, dtype: str) -> None:
    outs = []
    for lib in LIBS:
        t = lib.tensor(SPECIAL).to(getattr(lib, dtype))
        outs.append(FORMS[name](lib, t).float().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    # -0.0 kept as PyTorch's relu and threshold keep it (not yet by the in-place relu_ and
    # hardtanh's clamp, nor alike by PyTorch's bfloat16 kernels)
    if dtype != "bfloat16" and name in ("relu", "threshold_0", "threshold_nan", "threshold_inf"):
        assert (np.signbit(outs[0]) == np.signbit(outs[1])).all()


def test_relu_gradient_unchanged() -> None:
    grads = []
    for lib in LIBS:
        t = lib.tensor(SPECIAL[1:], requires_grad=True)  # NaN's gradient is NaN in both
        lib.relu(t).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_cosine_similarity_zero_vector_gradient() -> None:
    x = np.random.default_rng(0).standard_normal(10)
    grads = []
    for lib in LIBS:
        a = lib.tensor(x, requires_grad=True)
        b = lib.zeros(10, dtype=lib.float64, requires_grad=True)
        lib.cosine_similarity(a, b, 0).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*grads):
        assert np.isfinite(ours).all()
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize(
    "shapes,dim", [(((2, 3, 4), (3, 1)), 1), (((2, 3), (1, 1)), 1), (((2, 3), (1,)), 1), (((), ()), 0), (((), ()), -1), (((4,), ()), 0)]
)  # fmt: skip
def test_cosine_similarity_broadcast_and_0d(shapes: tuple, dim: int) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib in LIBS:
        a, b = (lib.tensor(v, requires_grad=True) for v in arrays)
        out = lib.nn.functional.cosine_similarity(a, b, dim=dim)
        out.sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_cosine_similarity_dtypes() -> None:
    outs, errors = [], []
    for lib in LIBS:
        f = lib.nn.functional.cosine_similarity
        out = f(lib.tensor([3.0, 4.0]).to(lib.int8), lib.tensor([4.0, 3.0]), dim=0)
        outs.append((str(out.dtype), round(out.item(), 6)))
        with pytest.raises(RuntimeError) as info:
            f(lib.tensor([1, 2], dtype=lib.int8), lib.tensor([1, 2], dtype=lib.int8), dim=0)
        errors.append(str(info.value))
        with pytest.raises(IndexError):
            f(lib.tensor(1.0), lib.tensor(2.0), dim=1)
    assert outs[0] == outs[1] and errors[0] == errors[1]


@pytest.mark.parametrize("p,dim", [(1.0, -1), (2.0, 0), (3.0, -1)])
def test_normalize_0d(p: float, dim: int) -> None:
    results = []
    for lib in LIBS:
        t = lib.tensor(-3.0, dtype=lib.float64, requires_grad=True)
        out = lib.nn.functional.normalize(t, p=p, dim=dim)
        out.backward()
        results.append((out.detach().numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, atol=1e-15)
