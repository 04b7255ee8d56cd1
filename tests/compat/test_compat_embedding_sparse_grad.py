"""``nn.Embedding(sparse=True)`` / ``F.embedding(sparse=True)`` / ``F.embedding_bag(sparse=True)``
give the weight a sparse COO gradient (its indices, values, uncoalesced entries and
accumulation as PyTorch's), and ``F.embedding(scale_grad_by_freq=True)`` divides each use's
gradient by its index's count: against real PyTorch 2.13."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import npv

import compat.torch as torch


def _sparse_parts(g):
    """A gradient as (is_sparse, indices, values, dense, coalesced)."""
    if g.is_sparse:
        return True, npv(g._indices()), npv(g._values()), npv(g.to_dense()), g.is_coalesced()
    return False, None, None, npv(g), None


def _assert_same_grad(ours, ref):
    a, b = _sparse_parts(ours), _sparse_parts(ref)
    assert a[0] == b[0]
    assert a[4] == b[4]
    for x, y in zip(a[1:4], b[1:4]):
        if y is None:
            assert x is None
        else:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def _embedding_grad(lib, idx, padding_idx, twice):
    lib.manual_seed(0)
    emb = lib.nn.Embedding(7, 3, padding_idx=padding_idx, sparse=True).double()
    x = lib.tensor(idx, dtype=lib.int64)
    g = lib.arange(float(x.numel() * 3), dtype=lib.float64).reshape(*x.shape, 3)
    emb(x).backward(g)
    if twice:
        emb(x.flip(-1)).backward(g * 2)
    return emb.weight.grad


@pytest.mark.parametrize("idx", [[3], [1, 4, 4, 2], [[0, 2, 6], [6, 5, 0]], []])
@pytest.mark.parametrize("padding_idx", [None, 0, -2])
@pytest.mark.parametrize("twice", [False, True])
def test_embedding_sparse_grad(real_torch, idx, padding_idx, twice):
    ours = _embedding_grad(torch, idx, padding_idx, twice)
    ref = _embedding_grad(real_torch, idx, padding_idx, twice)
    assert ours.shape == ref.shape and ours.layout is torch.sparse_coo
    if twice and len(set(np.ravel(idx))) < np.size(idx):
        # PyTorch's in-place sparse add merges some repeated entries of two uncoalesced
        # gradients (its own order); compat concatenates them: the same tensor
        assert ours.is_sparse and not ours.is_coalesced()
        np.testing.assert_allclose(npv(ours.to_dense()), npv(ref.to_dense()), rtol=1e-12)
        return
    _assert_same_grad(ours, ref)


def test_second_backward_concatenates(real_torch):
    """PyTorch's ``test_embedding_backward``: two backwards of distinct indices give the
    entries of both, in order."""
    res = []
    for lib in (torch, real_torch):
        emb = lib.nn.Embedding(10, 3, sparse=True).double()
        x = lib.tensor([[7, 1, 3]])
        emb(x[0]).sum().backward()
        x[0, 0] = 8  # (the first gradient's indices do not alias the input)
        emb(x[0]).sum().backward()
        res.append(emb.weight.grad)
    _assert_same_grad(*res)
    np.testing.assert_array_equal(npv(res[0]._indices()), [[7, 1, 3, 8, 1, 3]])


def _mixed(lib, order):
    """A weight reached by a sparse embedding and by a dense op, in one backward or two."""
    w = lib.arange(12.0, dtype=lib.float64).reshape(4, 3).requires_grad_()
    x = lib.tensor([1, 3, 1])

    def sparse_part():
        return (lib.nn.functional.embedding(x, w, sparse=True) ** 2).sum()

    def dense_part():
        return (w * lib.arange(3.0, dtype=lib.float64)).sum()

    if order == "together":
        (sparse_part() + dense_part()).backward()
    else:
        parts = [sparse_part, dense_part] if order == "sparse_first" else [dense_part, sparse_part]
        for part in parts:
            part().backward()
    return w.grad


@pytest.mark.parametrize("order", ["together", "sparse_first", "dense_first"])
def test_sparse_and_dense_gradients_accumulate(real_torch, order):
    _assert_same_grad(_mixed(torch, order), _mixed(real_torch, order))


def test_autograd_grad_is_sparse(real_torch):
    res = []
    for lib in (torch, real_torch):
        w = lib.ones(5, 2, dtype=lib.float64, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([[4, 0], [4, 4]]), w, sparse=True)
        (g,) = lib.autograd.grad((out * 3).sum(), w)
        res.append(g)
    _assert_same_grad(*res)


def test_non_leaf_weight_gets_the_dense_sum(real_torch):
    """Through a non-leaf weight compat hands the next node the dense gradient (PyTorch
    passes the sparse one on: the leaf's ``.grad`` is sparse there): equal as dense."""
    grads = []
    for lib in (torch, real_torch):
        w = lib.arange(8.0, dtype=lib.float64).reshape(4, 2).requires_grad_()
        lib.nn.functional.embedding(lib.tensor([1, 1, 3]), w * 2, sparse=True).sum().backward()
        grads.append(w.grad.to_dense() if w.grad.is_sparse else w.grad)
    assert not grads[0].is_sparse
    np.testing.assert_array_equal(npv(grads[0]), npv(grads[1]))


_BAG_CASES = [
    (mode, psw, pad, ilo)
    for mode, psw, pad, ilo in itertools.product(
        ["sum", "mean"], [False, True], [None, 2], [False, True]
    )
    if not (psw and mode != "sum")
]


def _bag(lib, mode, psw, pad, ilo, sparse):
    w = lib.tensor(np.arange(30.0).reshape(10, 3) / 7, requires_grad=True)
    inp = lib.tensor([1, 2, 4, 4, 3, 2, 9, 0, 2])
    kw = {"per_sample_weights": lib.tensor(np.linspace(0.1, 1, 9))} if psw else {}
    out = lib.nn.functional.embedding_bag(
        inp, w, lib.tensor([0, 3, 3, 7]), mode=mode, sparse=sparse, padding_idx=pad,
        include_last_offset=ilo, **kw,
    )  # fmt: skip
    out.backward(lib.arange(1.0, out.numel() + 1, dtype=lib.float64).reshape(out.shape))
    return npv(out.detach()), w.grad


@pytest.mark.parametrize(("mode", "psw", "pad", "ilo"), _BAG_CASES)
def test_embedding_bag_sparse_grad(real_torch, mode, psw, pad, ilo):
    out, grad = _bag(torch, mode, psw, pad, ilo, True)
    ref_out, ref_grad = _bag(real_torch, mode, psw, pad, ilo, True)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)
    assert grad.is_sparse
    _assert_same_grad(grad, ref_grad)
    # the dense option's gradient is the sparse one's sum
    _, dense = _bag(torch, mode, psw, pad, ilo, False)
    np.testing.assert_allclose(npv(dense), npv(grad.to_dense()), rtol=1e-12)


def test_embedding_bag_2d_sparse_and_max_refused(real_torch):
    for lib in (torch, real_torch):
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            lib.nn.EmbeddingBag(5, 2, mode="max", sparse=True)(lib.tensor([[1, 2]]))
    res = []
    for lib in (torch, real_torch):
        bag = lib.nn.EmbeddingBag(5, 2, mode="mean", sparse=True).double()
        with lib.no_grad():
            bag.weight.copy_(lib.arange(10.0).reshape(5, 2))
        bag(lib.tensor([[3, 1, 1], [1, 4, 0]])).backward(lib.tensor([[1.0, 2], [3, 4]]).double())
        res.append(bag.weight.grad)
    _assert_same_grad(*res)


@settings(max_examples=25, deadline=None)
@given(
    idx=st.lists(st.integers(0, 5), min_size=1, max_size=12),
    padding_idx=st.sampled_from([None, 0, 3]),
)
def test_scale_grad_by_freq(idx, padding_idx):
    real_torch = pytest.importorskip("torch")
    grads = []
    for lib in (torch, real_torch):
        w = lib.ones(6, 2, dtype=lib.float64, requires_grad=True)
        x = lib.tensor(idx)
        g = lib.arange(1.0, 2 * len(idx) + 1, dtype=lib.float64).reshape(len(idx), 2)
        lib.nn.functional.embedding(x, w, padding_idx, scale_grad_by_freq=True).backward(g)
        grads.append(npv(w.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_scale_grad_by_freq_with_sparse_refused_at_backward(real_torch):
    for lib in (torch, real_torch):
        emb = lib.nn.Embedding(4, 2, scale_grad_by_freq=True, sparse=True)
        out = emb(lib.tensor([1, 1, 2])).sum()
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            out.backward()


def test_embedding_bag_scale_grad_by_freq_refused():
    """PyTorch's CPU kernel scales the k-th distinct index's gradient by another index's
    count; compat refuses rather than give either that or a different value."""
    w = torch.ones(4, 2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        torch.nn.functional.embedding_bag(
            torch.tensor([1, 1, 2]), w, torch.tensor([0]), scale_grad_by_freq=True
        )


def test_scalar_weight_error(real_torch):
    for lib in (torch, real_torch):
        with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
            lib.nn.functional.embedding(lib.tensor([0]), lib.tensor(1.0))


def test_from_pretrained_shares_the_tensor(real_torch):
    """``from_pretrained``'s weight is the given tensor: ``max_norm``'s in-place rescaling
    shows in it (PyTorch's ``test_embedding_from_pretrained_options``)."""
    res = []
    for lib in (torch, real_torch):
        a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64)
        emb = lib.nn.Embedding.from_pretrained(a, max_norm=2.0, norm_type=0.5, sparse=True)
        out = emb(lib.tensor([0, 1]))
        res.append((npv(a), npv(out), emb.weight.requires_grad))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)
    assert res[0][2] == res[1][2] is False


@pytest.mark.parametrize("sparse", [False, True])
def test_every_padding_index_in_turn(real_torch, sparse):
    """One program serves every padding index (an argument of the op, not a constant): each
    value in turn still pads its own rows, in ``embedding`` and ``embedding_bag``."""
    idx = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
    res = []
    for lib in (torch, real_torch):
        w = lib.tensor(np.arange(30.0).reshape(10, 3), requires_grad=True)
        outs = []
        for pad in sorted(set(idx)):
            bag = lib.nn.functional.embedding_bag(
                lib.tensor(idx), w, lib.tensor([0, 4, 7]), padding_idx=pad, mode="mean",
                sparse=sparse,
            )  # fmt: skip
            emb = lib.nn.functional.embedding(lib.tensor(idx), w, padding_idx=pad, sparse=sparse)
            (bag.sum() + emb.sum() * 0.5).backward()
            outs.append((npv(bag), npv(emb), npv(w.grad.to_dense() if sparse else w.grad)))
            w.grad = None
        res.append(outs)
    for ours, ref in zip(*res):
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=1e-12)
