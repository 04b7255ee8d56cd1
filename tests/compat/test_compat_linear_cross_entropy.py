"""``nn.functional.linear_cross_entropy`` and ``nn.LinearCrossEntropyLoss`` against
PyTorch 2.13 (reference path): values and gradients for class indices, class
probabilities, K-dimensional heads, biases, weights, reductions, label smoothing and
``ignore_index``; the checks; ``options=`` refused."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(0)
X = RNG.normal(size=(6, 4))
W = RNG.normal(size=(5, 4))
WK = RNG.normal(size=(5, 3, 4))
T = np.array([0, 4, 2, 2, 1, 3])
TK = RNG.integers(0, 5, size=(6, 3))
P = RNG.dirichlet(np.ones(5), size=6)


CASES = [
    ("indices", {}),
    ("indices", {"reduction": "sum", "label_smoothing": 0.2}),
    ("indices", {"reduction": "none", "ignore_index": 2}),
    ("indices_bias_weight", {"reduction": "mean"}),
    ("probabilities", {}),
    ("kdim", {"reduction": "none"}),
    ("kdim_bias", {"label_smoothing": 0.1}),
    ("unbatched", {}),
]


def _args(lib, case):
    x = lib.tensor(X[0] if case == "unbatched" else X, requires_grad=True)
    w = lib.tensor(WK if case.startswith("kdim") else W, requires_grad=True)
    kw = {}
    if case.endswith("bias") or case == "indices_bias_weight":
        shape = tuple(w.shape[:-1])
        bias = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
        kw["linear_bias"] = lib.tensor(bias, requires_grad=True)
    if case == "indices_bias_weight":
        kw["weight"] = lib.tensor([1.0, 2.0, 0.5, 1.0, 3.0], dtype=lib.float64)
    target = {
        "probabilities": lib.tensor(P),
        "unbatched": lib.tensor(3),
    }.get(case, lib.tensor(TK if case.startswith("kdim") else T))
    return x, w, target, kw


@pytest.mark.parametrize(("case", "kwargs"), CASES)
def test_values_and_gradients(case, kwargs, real_torch):
    results = []
    for lib in (real_torch, ctorch):
        x, w, target, kw = _args(lib, case)
        y = lib.nn.functional.linear_cross_entropy(x, w, target, **kw, **kwargs)
        leaves = [x, w] + ([kw["linear_bias"]] if "linear_bias" in kw else [])
        grads = lib.autograd.grad(y.sum(), leaves)
        results.append([y.detach().numpy(), *(g.numpy() for g in grads)])
    for c, t in zip(results[1], results[0]):
        np.testing.assert_allclose(c, t, rtol=1e-10, atol=1e-12)


def test_module(real_torch):
    results = []
    for lib in (real_torch, ctorch):
        m = lib.nn.LinearCrossEntropyLoss(4, 5, out_features=(3,), bias=True, label_smoothing=0.1)
        with lib.no_grad():
            m.linear.weight.copy_(lib.tensor(WK.reshape(15, 4)))
            m.linear.bias.copy_(lib.tensor(np.linspace(-1, 1, 15)))
        loss = m(lib.tensor(X, dtype=lib.float32), lib.tensor(TK))
        loss.backward()
        results.append((loss.item(), m.linear.weight.grad.numpy(), m.linear.bias.grad.numpy()))
        assert tuple(m.linear.weight.shape) == (15, 4)
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: (lib.ones(2, 3, 4), lib.ones(5, 4), lib.zeros(2, dtype=lib.int64), {}),
        lambda lib: (lib.ones(2, 4), lib.ones(4), lib.zeros(2, dtype=lib.int64), {}),
        lambda lib: (lib.ones(2, 4), lib.ones(5, 3), lib.zeros(2, dtype=lib.int64), {}),
        lambda lib: (
            lib.ones(2, 4),
            lib.ones(5, 4),
            lib.zeros(2, dtype=lib.int64),
            {"linear_bias": lib.ones(4)},
        ),
        lambda lib: (lib.ones(4), lib.ones(5, 3, 4), lib.zeros(3, dtype=lib.int64), {}),
        lambda lib: (lib.ones(2, 4), lib.ones(5, 4), lib.ones(2, 5) / 5, {"ignore_index": 1}),
    ],
)
def test_checks(make, real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        x, w, t, kw = make(lib)
        with pytest.raises(RuntimeError) as e:
            lib.nn.functional.linear_cross_entropy(x, w, t, **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError, match="expected label_smoothing to be in range"):
        ctorch.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5)


def test_options_refused():
    with pytest.raises(NotImplementedError, match="options="):
        ctorch.nn.functional.linear_cross_entropy(
            ctorch.ones(2, 4),
            ctorch.ones(5, 4),
            ctorch.zeros(2, dtype=ctorch.int64),
            options=object(),
        )
