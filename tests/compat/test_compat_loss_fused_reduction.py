"""smooth_l1_loss (beta > 0) and huber_loss are one op with their reduction, PyTorch's
single SmoothL1LossBackward0 / HuberLossBackward0 node: values, gradients and the node's
name against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

X = np.array([[0.3, -2.0, 0.1], [1.5, -0.2, 0.9]], np.float32)
Y = np.array([[0.0, 0.5, 0.2], [-1.0, 0.1, 0.9]], np.float32)


def _run(t, loss, reduction, **kw):
    x = t.tensor(X, requires_grad=True)
    out = getattr(t.nn.functional, loss)(x, t.tensor(Y), reduction=reduction, **kw)
    (out.sum() if reduction == "none" else out).backward()
    return out.grad_fn.name(), out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(
    ("loss", "kw"),
    [
        ("smooth_l1_loss", {}),
        ("smooth_l1_loss", {"beta": 0.5}),
        ("smooth_l1_loss", {"beta": 0.0}),
        ("huber_loss", {}),
        ("huber_loss", {"delta": 0.7}),
    ],
)
def test_matches_pytorch(real_torch, loss, kw, reduction):
    name, val, grad = _run(ctorch, loss, reduction, **kw)
    ref_name, ref_val, ref_grad = _run(real_torch, loss, reduction, **kw)
    if not (kw.get("beta") == 0.0 and reduction == "none"):
        # (beta=0 unreduced: PyTorch's l1_loss composite ends in AbsBackward0, compat's
        # one op is named SmoothL1LossBackward0; unchanged here)
        assert name == ref_name
    np.testing.assert_allclose(val, ref_val, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_huber_weight_reduced_after_weighting(reduction):
    w = np.array([[1.0, 2.0, 0.5], [0.0, 3.0, 1.0]], np.float32)
    x = ctorch.tensor(X, requires_grad=True)
    out = ctorch.nn.functional.huber_loss(
        x, ctorch.tensor(Y), reduction=reduction, delta=0.7, weight=ctorch.tensor(w)
    )
    plain = ctorch.nn.functional.huber_loss(
        ctorch.tensor(X), ctorch.tensor(Y), reduction="none", delta=0.7
    ).numpy()
    ref = {"mean": (plain * w).mean(), "sum": (plain * w).sum(), "none": plain * w}[reduction]
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-6)
    assert out.grad_fn.name() == "HuberLossBackward0"
