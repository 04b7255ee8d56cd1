"""A loss's ``target`` that requires grad, as PyTorch 2.13 treats it: in the graph where
the loss is differentiable in it (MSE, BCE, KL, ...), out of it where PyTorch's
composite only compares it (``hinge_embedding_loss``, ``cosine_embedding_loss``: no
``.grad``; compat gave it a zero gradient), PyTorch's error where its kernel has no
derivative for it (``soft_margin_loss``)."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
P = RNG.uniform(0.1, 0.9, (3, 4))

CASES = {
    "hinge_embedding_loss": (lambda F, x, y, t: F.hinge_embedding_loss(x, t), np.sign(A)),
    "cosine_embedding_loss": (
        lambda F, x, y, t: F.cosine_embedding_loss(x, y, t),
        np.array([1.0, -1.0, 1.0]),
    ),
    "margin_ranking_loss": (lambda F, x, y, t: F.margin_ranking_loss(x, y, t), np.sign(B)),
    "soft_margin_loss": (lambda F, x, y, t: F.soft_margin_loss(x, t), np.sign(A)),
    "multilabel_soft_margin_loss": (
        lambda F, x, y, t: F.multilabel_soft_margin_loss(x, t),
        (A > 0).astype(float),
    ),
    "binary_cross_entropy": (lambda F, x, y, t: F.binary_cross_entropy(x.sigmoid(), t), P),
    "bce_with_logits": (lambda F, x, y, t: F.binary_cross_entropy_with_logits(x, t), P),
    "kl_div": (lambda F, x, y, t: F.kl_div(x, t, reduction="batchmean"), P),
    "mse_loss": (lambda F, x, y, t: F.mse_loss(x, t), P),
    "smooth_l1_loss": (lambda F, x, y, t: F.smooth_l1_loss(x, t), P),
    "poisson_nll_loss": (lambda F, x, y, t: F.poisson_nll_loss(x, t), P),
}


def _record(lib, name):
    f, target = CASES[name]
    x = lib.tensor(A, requires_grad=True)
    y = lib.tensor(B, requires_grad=True)
    t = lib.tensor(target, requires_grad=True)
    try:
        loss = f(lib.nn.functional, x, y, t)
    except Exception as e:  # the error is the record
        return (type(e).__name__, str(e))
    loss.backward()
    with lib.no_grad():  # (no error there: nothing is recorded)
        f(lib.nn.functional, x, y, t)
    return (
        float(loss.detach()),
        None if t.grad is None else t.grad.numpy().round(12).tolist(),
        x.grad.numpy().round(12).tolist(),
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_target_gradient_as_pytorch(real_torch, name):
    c, t = _record(ctorch, name), _record(real_torch, name)
    if isinstance(t[0], str):
        assert c == t
        return
    assert c[0] == pytest.approx(t[0], rel=1e-12)
    assert (c[1] is None) == (t[1] is None)
    if t[1] is not None:
        np.testing.assert_allclose(c[1], t[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c[2], t[2], rtol=1e-10, atol=1e-12)


def _stats_record(lib, fn, training):
    x = lib.tensor(A, requires_grad=True)
    out = []
    for which in ("running_mean", "running_var", None):
        rm = lib.zeros(4, dtype=lib.float64, requires_grad=which == "running_mean")
        rv = lib.ones(4, dtype=lib.float64, requires_grad=which == "running_var")
        try:
            if fn == "batch_norm":
                y = lib.nn.functional.batch_norm(x, rm, rv, training=training)
            else:
                y = lib.nn.functional.instance_norm(
                    x[None].transpose(1, 2), rm[:3], rv[:3], use_input_stats=training
                )
            out.append(tuple(y.shape))
        except Exception as e:  # the error is the record
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("fn", ["batch_norm", "instance_norm"])
@pytest.mark.parametrize("training", [True, False])
def test_running_statistics_requiring_grad_refused_as_pytorch(real_torch, fn, training):
    # (a statistic of a norm layer is a buffer: PyTorch has no derivative for it)
    assert _stats_record(ctorch, fn, training) == _stats_record(real_torch, fn, training)


@pytest.mark.parametrize("target", [np.array(1.0), np.array([1])])
def test_nll_loss_of_a_0d_input_refused(target):
    """PyTorch's ``nll_loss`` wants 1+ dims (compat raised IndexError from inside)."""
    torch = pytest.importorskip("torch")
    msgs = []
    for lib in (ctorch, torch):
        with pytest.raises(ValueError) as info:
            lib.nn.functional.nll_loss(lib.tensor(1.0), lib.tensor(target), reduction="none")
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
