"""``nn.utils.parametrizations.orthogonal`` against PyTorch 2.13 with the same weights:
the orthogonal weight and the gradients reaching the unconstrained original for the
matrix-exponential, Cayley and Householder maps (square, batched; rectangular ones, whose
base PyTorch completes with random columns, by their properties), without
trivialization, assignment, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]


def _orthogonal(lib: Any, w: np.ndarray, **kwargs: Any) -> Any:
    m = lib.nn.Linear(1, 1).double()
    m.weight = lib.nn.Parameter(lib.tensor(w))
    return lib.nn.utils.parametrizations.orthogonal(m, **kwargs)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"orthogonal_map": "cayley"}, {"orthogonal_map": "householder"},
     {"orthogonal_map": "householder", "use_trivialization": False}],
)  # fmt: skip
def test_square_against_pytorch(shape: tuple, kwargs: dict) -> None:
    rng = np.random.default_rng(0)
    w, g = rng.standard_normal(shape), rng.standard_normal(shape)
    results = []
    for lib in LIBS:
        m = _orthogonal(lib, w, **kwargs)
        weight = m.weight
        (weight * lib.tensor(g)).sum().backward()
        results.append((weight.detach().numpy(), m.parametrizations.weight.original.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize(
    "shape,kwargs", [((5, 3), {}), ((3, 5), {}), ((6, 2), {"orthogonal_map": "cayley"})]
)
def test_rectangular_is_orthogonal(shape: tuple, kwargs: dict) -> None:
    w = np.random.default_rng(1).standard_normal(shape)
    m = _orthogonal(ctorch, w, **kwargs)
    q = m.weight.detach().numpy()
    q = q if shape[0] >= shape[1] else q.T
    np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-12)
    m.weight.sum().backward()
    assert m.parametrizations.weight.original.grad.shape == shape


def test_assignment_and_errors() -> None:
    rng = np.random.default_rng(2)
    target = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    outs, errors = [], []
    for lib in LIBS:
        m = _orthogonal(lib, rng.standard_normal((3, 3)))
        m.weight = lib.tensor(target)  # an orthogonal value is kept as it is
        outs.append(m.weight.detach().numpy())
        for call in (
            lambda: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr"),
            lambda: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "bias"),
            lambda: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "nothing"),
            lambda: setattr(_orthogonal(lib, np.eye(3), orthogonal_map="cayley", use_trivialization=False),
                            "weight", lib.eye(3, dtype=lib.float64)),
        ):  # fmt: skip
            with pytest.raises((ValueError, NotImplementedError)) as info:
                call()
            errors.append((type(info.value).__name__, str(info.value).split("'")[0]))
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-12)
    np.testing.assert_allclose(outs[0], target, atol=1e-12)
    assert errors[:4] == errors[4:]


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 5, 3)])
def test_rectangular_householder_without_trivialization(shape: tuple) -> None:
    """Householder without a base on a tall or wide weight: no random columns are drawn, so
    the weight, an assigned matrix's Q part and the gradient reaching the original are
    PyTorch's (compat's right_inverse added an n x n sign diagonal to the n x k factors)."""
    rng = np.random.default_rng(3)
    w, assigned = rng.standard_normal(shape), rng.standard_normal(shape)
    res = []
    for lib in LIBS:
        m = _orthogonal(lib, w, orthogonal_map="householder", use_trivialization=False)
        first = m.weight.detach().numpy().copy()
        m.weight = lib.tensor(assigned)
        (m.weight * lib.arange(float(np.prod(shape))).reshape(shape)).sum().backward()
        grad = m.parametrizations.weight.original.grad.numpy()
        res.append((first, m.weight.detach().numpy().copy(), grad.copy()))
    for ours, ref in zip(*res):
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-10)
