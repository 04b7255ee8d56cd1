"""``nn.EmbeddingBag``/``F.embedding_bag``, ``MaxUnpool``/``max_unpool``, the ``*_with_indices``
pools, ``LPPool``/``lp_pool`` and the ``Lazy*`` convolution and normalisation modules
against real PyTorch 2.13: values, gradients, node names, ``repr`` and errors."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(93)
W = RNG.standard_normal((10, 3))
W[3] = W[5]  # tied rows: max mode's gradient goes to the first
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 3, 5])
OFFSETS = np.array([0, 3, 3, 7])


def _bag_run(lib, kw, psw, idx=IDX, offsets=OFFSETS):
    w = lib.tensor(W, requires_grad=True)
    p = lib.tensor(np.linspace(0.5, 2.0, idx.size).reshape(idx.shape), requires_grad=True)
    off = None if offsets is None else lib.tensor(offsets)
    y = lib.nn.functional.embedding_bag(
        lib.tensor(idx), w, off, per_sample_weights=p if psw else None, **kw
    )
    (y * lib.tensor(np.arange(y.numel()).reshape(y.shape) + 1.0)).sum().backward()
    return y.grad_fn.name(), y.detach().numpy(), w.grad.numpy(), p.grad


BAG_CASES = {
    "sum": (dict(mode="sum"), False),
    "mean": (dict(mode="mean"), False),
    "max": (dict(mode="max"), False),
    "max_padding": (dict(mode="max", padding_idx=2), False),
    "mean_padding_negative": (dict(mode="mean", padding_idx=-6), False),
    "sum_last_offset": (dict(mode="sum", include_last_offset=True), False),
    "sum_weights": (dict(mode="sum"), True),
}


@pytest.mark.parametrize("case", list(BAG_CASES))
def test_embedding_bag_matches_pytorch(real_torch, case):
    kw, psw = BAG_CASES[case]
    offsets = np.array([0, 3, 3, 7, 10]) if kw.get("include_last_offset") else OFFSETS
    (rn, ry, rg, rp), (cn, cy, cg, cp) = (
        _bag_run(lib, kw, psw, offsets=offsets) for lib in (real_torch, ctorch)
    )
    assert cn == rn == "EmbeddingBagBackward0"
    np.testing.assert_allclose(cy, ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cg, rg, rtol=1e-12, atol=1e-12)
    if psw:
        np.testing.assert_allclose(cp.numpy(), rp.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_input(real_torch, mode):
    idx = IDX[:8].reshape(2, 4)
    (_, ry, rg, _), (_, cy, cg, _) = (
        _bag_run(lib, dict(mode=mode, padding_idx=4), False, idx=idx, offsets=None)
        for lib in (real_torch, ctorch)
    )
    np.testing.assert_allclose(cy, ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cg, rg, rtol=1e-12, atol=1e-12)


def test_embedding_bag_max_norm_renormalises_in_place(real_torch):
    outs = []
    for lib in (real_torch, ctorch):
        w = lib.tensor(W * 2.0)
        y = lib.nn.functional.embedding_bag(
            lib.tensor(IDX[:6]), w, lib.tensor([0, 2]), max_norm=1.5, norm_type=1.0
        )
        outs.append((y.numpy(), w.numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-12)


def test_embedding_bag_module_and_from_pretrained(real_torch):
    results = []
    for lib in (real_torch, ctorch):
        m = lib.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-2, max_norm=1.0)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(W, dtype=lib.float32))
        y = m(lib.tensor(IDX), lib.tensor(OFFSETS))
        y.sum().backward()
        fresh = lib.nn.EmbeddingBag(4, 2, padding_idx=1)
        pre = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(W[:4]), mode="sum")
        results.append(
            (
                repr(m),
                m.padding_idx,
                y.detach().numpy(),
                m.weight.grad.numpy(),
                fresh.weight[1].detach().numpy(),
                pre.weight.requires_grad,
                pre(lib.tensor([[0, 1], [2, 3]])).numpy(),
            )
        )
    (rr, ri, ry, rg, rz, rq, rp), (cr, ci, cy, cg, cz, cq, cp) = results
    assert (cr, ci, cq) == (rr, ri, rq)
    np.testing.assert_allclose(cy, ry, rtol=1e-6)
    np.testing.assert_allclose(cg, rg, rtol=1e-6)
    np.testing.assert_array_equal(cz, rz)
    np.testing.assert_allclose(cp, rp, rtol=1e-12)


def _errors(lib):
    F = lib.nn.functional
    w = lib.tensor(W)
    i = lib.tensor(IDX)
    off = lib.tensor([0, 4])
    return [
        lambda: F.embedding_bag(i, w, lib.tensor([1, 4])),
        lambda: F.embedding_bag(i, w, lib.tensor([0, 11])),
        lambda: F.embedding_bag(i.float(), w, off),
        lambda: F.embedding_bag(lib.tensor([1, 12]), w, lib.tensor([0])),
        lambda: F.embedding_bag(lib.tensor([1, -1]), w, lib.tensor([0])),
        lambda: F.embedding_bag(i, w, off, per_sample_weights=lib.ones(10), mode="sum"),
        lambda: F.embedding_bag(i, w, off, per_sample_weights=lib.ones(10), mode="mean"),
        lambda: F.embedding_bag(i, w, off, per_sample_weights=lib.ones(9), mode="sum"),
        lambda: F.embedding_bag(i, w, off, padding_idx=10),
        lambda: F.embedding_bag(i, w, off, padding_idx=-11),
        lambda: F.embedding_bag(i, w, off, mode="bad"),
        lambda: F.embedding_bag(i.reshape(2, 5), w, off),
        lambda: F.embedding_bag(i.reshape(1, 2, 5), w),
        lambda: F.embedding_bag(i, w),
        lambda: F.embedding_bag(i, w, off.reshape(1, 2)),
        lambda: F.embedding_bag(i, w[0], off),
        lambda: F.embedding_bag(i, w.long(), off),
        lambda: F.embedding_bag(i, w, off, scale_grad_by_freq=True, mode="max"),
        lambda: F.embedding_bag(i, w, off, sparse=True, mode="max"),
        lambda: lib.nn.EmbeddingBag(10, 3, padding_idx=10),
        lambda: lib.nn.EmbeddingBag(10, 3, _weight=lib.zeros(3, 3)),
        lambda: lib.nn.EmbeddingBag.from_pretrained(lib.zeros(3)),
        lambda: lib.nn.EmbeddingBag(10, 3)(i),
    ]


@pytest.mark.parametrize("k", range(len(_errors(ctorch))))
def test_embedding_bag_errors(real_torch, k):
    with pytest.raises(Exception) as expected:
        _errors(real_torch)[k]()
    with pytest.raises(type(expected.value)) as got:
        _errors(ctorch)[k]()
    # PyTorch appends the offending scalar tensor to some messages ("[ torch.LongTensor{} ]")
    assert str(got.value) == str(expected.value).split("\n")[0]


def test_embedding_bag_old_argument_order_warns(real_torch):
    for lib in (real_torch, ctorch):
        with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag"):
            y = lib.nn.functional.embedding_bag(
                lib.tensor(W), lib.tensor(IDX), lib.tensor([0, 4]), mode="sum"
            )
        expected = np.stack([W[IDX[:4]].sum(0), W[IDX[4:]].sum(0)])
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12)
