"""``multi_margin_loss``, ``multilabel_margin_loss`` (and their modules) and
``DistributedSampler`` against real PyTorch: loss values, shapes and input gradients for
random inputs under every reduction, PyTorch's errors, and the sampler's index lists."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

REDUCTIONS = ("mean", "sum", "none")


def _run(lib, fn, x, *rest):
    """``fn(F, nn, input, *rest)`` on ``lib``; returns (loss values, input gradient, loss)."""
    xt = lib.tensor(x, requires_grad=True)
    ts = [lib.tensor(a) if a is not None else None for a in rest]
    loss = fn(lib.nn.functional, lib.nn, xt, *ts)
    g = np.ones(tuple(loss.shape))
    loss.backward(lib.tensor(g, dtype=loss.dtype))
    return loss.detach().numpy(), xt.grad.numpy(), loss


def _compare(real, fn, x, *rest):
    cv, cg, closs = _run(ctorch, fn, x, *rest)
    tv, tg, tloss = _run(real, fn, x, *rest)
    assert cv.shape == tv.shape and cv.dtype == tv.dtype
    np.testing.assert_allclose(cv, tv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cg, tg, rtol=1e-10, atol=1e-12)
    assert closs.grad_fn.name() == tloss.grad_fn.name()


def _same_error(real, fn, *arrays):
    errs = []
    for lib in (ctorch, real):
        ts = [lib.tensor(a) for a in arrays]
        with pytest.raises(Exception) as info:
            fn(lib.nn.functional, lib.nn, *ts)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1]), errs
    assert str(errs[0]) == str(errs[1]), errs


def _random_case(seed, n, c):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c)) * 0.8
    y = rng.integers(0, c, n)
    w = rng.uniform(0.2, 2.0, c)
    return x, y, w


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", (1, 2))
@pytest.mark.parametrize("weighted", (False, True))
@pytest.mark.parametrize("seed", (0, 1, 2))
def test_multi_margin_loss_matches_torch(real_torch, reduction, p, weighted, seed):
    x, y, w = _random_case(seed, 5, 4)
    margin = (1.0, 0.5, 2.0)[seed]

    def fn(F, nn, a, t, wt):
        return F.multi_margin_loss(a, t, p=p, margin=margin, weight=wt, reduction=reduction)

    _compare(real_torch, fn, x, y, w if weighted else None)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("target", (np.array(2), np.array([2])))
def test_multi_margin_loss_unbatched(real_torch, reduction, target):
    x = np.array([0.3, -0.2, 0.9, 1.4])

    def fn(F, nn, a, t):
        return F.multi_margin_loss(a, t, reduction=reduction)

    _compare(real_torch, fn, x, target)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_module_and_float32(real_torch, reduction):
    x, y, w = _random_case(3, 6, 3)
    x = x.astype(np.float32)
    w = w.astype(np.float32)

    def fn(F, nn, a, t, wt):
        return nn.MultiMarginLoss(p=2, margin=0.7, weight=wt, reduction=reduction)(a, t)

    cv, cg, _ = _run(ctorch, fn, x, y, w)
    tv, tg, _ = _run(real_torch, fn, x, y, w)
    assert cv.dtype == tv.dtype == np.float32
    np.testing.assert_allclose(cv, tv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cg, tg, rtol=1e-5, atol=1e-6)
    m = ctorch.nn.MultiMarginLoss(weight=ctorch.tensor(w))
    assert "weight" in dict(m.named_buffers())


def test_multi_margin_legacy_reduction_args(real_torch):
    x, y, _ = _random_case(4, 3, 5)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        c = ctorch.nn.functional.multi_margin_loss(
            ctorch.tensor(x), ctorch.tensor(y), size_average=False
        )
    with pytest.warns(UserWarning):
        t = real_torch.nn.functional.multi_margin_loss(
            real_torch.tensor(x), real_torch.tensor(y), size_average=False
        )
    np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-12)


X34 = np.zeros((3, 4))
MULTI_MARGIN_ERRORS = [
    (lambda F, nn, a, t: F.multi_margin_loss(a, t), (X34, np.array([1, 2, 4]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t), (X34, np.array([1, 2, -1]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t), (X34, np.array([1, 2]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t), (np.zeros((3, 4, 2)), np.array([1, 2, 1]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t), (np.zeros(4), np.array([[1]]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t, p=3), (X34, np.array([1, 2, 1]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t, reduction="foo"), (X34, np.array([1, 2, 1]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t), (X34, np.array([1.0, 2.0, 1.0]))),
    (lambda F, nn, a, t: F.multi_margin_loss(a, t), (X34, np.array([1, 2, 1], np.int32))),
    (
        lambda F, nn, a, t, w: F.multi_margin_loss(a, t, weight=w),
        (X34, np.array([1, 2, 1]), np.ones((2, 2))),
    ),
    (
        lambda F, nn, a, t, w: F.multi_margin_loss(a, t, weight=w),
        (X34, np.array([1, 2, 1]), np.ones(3)),
    ),
    (
        lambda F, nn, a, t, w: F.multi_margin_loss(a, t, weight=w),
        (X34, np.array([1, 2, 1]), np.ones(4, np.float32)),
    ),
    (lambda F, nn, w: nn.MultiMarginLoss(p=0), (np.ones(3),)),
    (lambda F, nn, w: nn.MultiMarginLoss(weight=w), (np.ones((3, 1)),)),
]


@pytest.mark.parametrize("fn, arrays", MULTI_MARGIN_ERRORS)
def test_multi_margin_errors(real_torch, fn, arrays):
    _same_error(real_torch, fn, *arrays)


def _label_target(rng, n, c):
    """Rows of class labels (possibly repeated) padded with -1, junk after the first -1."""
    t = np.full((n, c), -1)
    for i in range(n):
        k = int(rng.integers(0, c + 1))
        t[i, :k] = rng.integers(0, c, k)
        if k < c - 1:
            t[i, k + 1 :] = rng.integers(-1, c, c - k - 1)
    return t


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", (0, 1, 2, 3))
def test_multilabel_margin_loss_matches_torch(real_torch, reduction, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((6, 5)) * 0.6
    t = _label_target(rng, 6, 5)

    def fn(F, nn, a, tt):
        return F.multilabel_margin_loss(a, tt, reduction=reduction)

    _compare(real_torch, fn, x, t)

    def module(F, nn, a, tt):
        return nn.MultiLabelMarginLoss(reduction=reduction)(a, tt)

    _compare(real_torch, module, x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_unbatched(real_torch, reduction):
    x = np.array([0.1, 0.2, 0.4, 0.8])
    t = np.array([3, 0, -1, 1])

    def fn(F, nn, a, tt):
        return F.multilabel_margin_loss(a, tt, reduction=reduction)

    _compare(real_torch, fn, x, t)


MULTILABEL_ERRORS = [
    (X34, np.array([1, 2, 1])),
    (X34, np.array([[1, 2, 1, 4]] * 3)),
    (X34, np.array([[1, 2, -2, 0]] * 3)),
    (np.zeros(4), np.array([1, -1, 5, 0])),
    (np.zeros((3, 4, 1)), np.array([[1, 2, 1, -1]] * 3)),
    (np.zeros((1, 4)), np.array([1, -1, 3, 0])),
    (np.zeros(4), np.array([[1, -1, 3, 0]])),
    (np.zeros(4), np.array([1, -1, 3, 0], np.int32)),
]


@pytest.mark.parametrize("arrays", MULTILABEL_ERRORS)
def test_multilabel_margin_errors(real_torch, arrays):
    _same_error(real_torch, lambda F, nn, a, t: F.multilabel_margin_loss(a, t), *arrays)


def test_multilabel_margin_bad_reduction(real_torch):
    _same_error(
        real_torch,
        lambda F, nn, a, t: F.multilabel_margin_loss(a, t, reduction="foo"),
        X34,
        np.array([[0, -1, 0, 0]] * 3),
    )


# ---------------------------------------------------------------- DistributedSampler


def _indices(lib, n, epoch=0, **kwargs):
    s = lib.utils.data.distributed.DistributedSampler(list(range(n)), **kwargs)
    s.set_epoch(epoch)
    return list(s), len(s), s.num_samples, s.total_size


SAMPLER_CASES = [
    (n, replicas, rank, drop_last)
    for n in (0, 1, 3, 10, 11)
    for replicas in (1, 3, 4)
    for rank in sorted({0, replicas - 1})
    for drop_last in (False, True)
]


@pytest.mark.parametrize("n, replicas, rank, drop_last", SAMPLER_CASES)
def test_distributed_sampler_unshuffled_matches_torch(real_torch, n, replicas, rank, drop_last):
    kw = dict(num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
    assert _indices(ctorch, n, **kw) == _indices(real_torch, n, **kw)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (11, 4, True), (7, 2, False)])
@pytest.mark.parametrize("epoch", (0, 1, 5))
@pytest.mark.parametrize("seed", (0, 3))
def test_distributed_sampler_shuffled_matches_torch(
    real_torch, n, replicas, drop_last, epoch, seed
):
    """Shuffled shares equal PyTorch's index for index: compat's ``randperm`` under a
    Generator seeded with ``seed + epoch`` draws PyTorch's mt19937 stream."""
    kw = dict(num_replicas=replicas, drop_last=drop_last, seed=seed)
    for rank in range(replicas):
        assert _indices(ctorch, n, epoch, rank=rank, **kw) == _indices(
            real_torch, n, epoch, rank=rank, **kw
        )


def test_distributed_sampler_pads_short_dataset_by_cycling(real_torch):
    kw = dict(num_replicas=7, shuffle=False)
    for rank in range(7):
        assert _indices(ctorch, 2, rank=rank, **kw) == _indices(real_torch, 2, rank=rank, **kw)


@pytest.mark.parametrize(
    "kwargs",
    [dict(num_replicas=3, rank=3), dict(num_replicas=3, rank=-1), dict(), dict(num_replicas=2)],
)
def test_distributed_sampler_errors(real_torch, kwargs):
    errs = []
    for lib in (ctorch, real_torch):
        with pytest.raises(Exception) as info:
            lib.utils.data.distributed.DistributedSampler(list(range(5)), **kwargs)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1]) is ValueError
    assert str(errs[0]) == str(errs[1])


def test_distributed_sampler_in_dataloader(real_torch):
    out = []
    for lib in (ctorch, real_torch):
        ds = lib.utils.data.TensorDataset(lib.arange(10))
        s = lib.utils.data.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
        dl = lib.utils.data.DataLoader(ds, batch_size=3, sampler=s)
        out.append([b[0].tolist() for b in dl])
    assert out[0] == out[1] == [[1, 3, 5], [7, 9]]
