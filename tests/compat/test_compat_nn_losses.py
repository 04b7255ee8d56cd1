"""compat's ``nn.functional`` losses and loss modules (beyond ``mse_loss``, ``cross_entropy`` and
``nll_loss``, tested in test_compat_nn.py) against real PyTorch, margin losses included.

Each case runs the same numbers through ``compat.torch`` and PyTorch (``torch_oracle.compare``):
forward values, dtypes, shapes, the gradients of inputs (and targets where PyTorch
differentiates them) for every reduction, plus PyTorch's error types for bad shapes and
arguments.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import compare, npv, same_error

import compat.torch as torch
import compat.torch.nn as nn

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
T = RNG.uniform(0.05, 0.95, (3, 4))
P = RNG.uniform(0.02, 0.98, (3, 4))
SIGN = np.where(RNG.uniform(size=(3, 4)) > 0.5, 1.0, -1.0)
Y3 = np.array([1.0, -1.0, 1.0])
XZ = X.copy()
XZ[0, :2] = 0.0  # logits at the kink of max(x, 0) and |x|: PyTorch's gradient there

# name -> (fn(F, torch, *ts, reduction), arrays, indices requiring grad)
CASES = {
    "bce": (lambda F, L, a, b, r: F.binary_cross_entropy(a, b, reduction=r), (P, T), (0, 1)),
    "bce_weight": (
        lambda F, L, a, b, w, r: F.binary_cross_entropy(a, b, w, reduction=r),
        (P, T, T[0]),
        (0, 1),
    ),
    "bce_logits": (
        lambda F, L, a, b, r: F.binary_cross_entropy_with_logits(a, b, reduction=r),
        (XZ, T),
        (0, 1),
    ),
    "bce_logits_weights": (
        lambda F, L, a, b, w, pw, r: F.binary_cross_entropy_with_logits(
            a, b, w, reduction=r, pos_weight=pw
        ),
        (XZ, T, P[0], 1.0 + T[1]),
        (0, 1),
    ),
    "smooth_l1": (
        lambda F, L, a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.6),
        (X, T),
        None,
    ),
    "smooth_l1_beta0": (
        lambda F, L, a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.0),
        (X, T),
        None,
    ),
    "huber": (lambda F, L, a, b, r: F.huber_loss(a, b, reduction=r, delta=0.7), (X, T), None),
    "huber_weight": (
        lambda F, L, a, b, w, r: F.huber_loss(a, b, reduction=r, delta=0.7, weight=w),
        (X, T, P),
        (0, 1),
    ),
    "l1_weight": (lambda F, L, a, b, w, r: F.l1_loss(a, b, reduction=r, weight=w), (X, T, P), None),
    "kl": (lambda F, L, a, b, r: F.kl_div(a, b, reduction=r), (X, T), None),
    "kl_log_target": (
        lambda F, L, a, b, r: F.kl_div(a, b, reduction=r, log_target=True),
        (X, X[::-1].copy()),
        None,
    ),
    "poisson": (lambda F, L, a, b, r: F.poisson_nll_loss(a, b * 4, reduction=r), (X, T), (0,)),
    "poisson_full": (
        lambda F, L, a, b, r: F.poisson_nll_loss(a, b * 4, full=True, reduction=r),
        (X, T),
        (0,),
    ),
    "poisson_rate": (
        lambda F, L, a, b, r: F.poisson_nll_loss(a, b * 4, log_input=False, reduction=r),
        (P, T),
        (0,),
    ),
    "gaussian": (
        lambda F, L, a, b, v, r: F.gaussian_nll_loss(a, b, v, reduction=r),
        (X, T, P),
        None,
    ),
    "gaussian_full_clamped": (
        lambda F, L, a, b, v, r: F.gaussian_nll_loss(a, b, v, full=True, eps=0.3, reduction=r),
        (X, T, P),
        None,
    ),
    "soft_margin": (lambda F, L, a, y, r: F.soft_margin_loss(a, y, reduction=r), (X, SIGN), (0,)),
    "multilabel_soft_margin": (
        lambda F, L, a, y, w, r: F.multilabel_soft_margin_loss(a, y, w, reduction=r),
        (X, (SIGN > 0) * 1.0, P[0]),
        (0,),
    ),
    "cosine_embedding": (
        lambda F, L, a, b, y, r: F.cosine_embedding_loss(a, b, y, margin=0.1, reduction=r),
        (X, T, Y3),
        (0, 1),
    ),
    "margin_ranking": (
        lambda F, L, a, b, y, r: F.margin_ranking_loss(a, b, y, margin=0.2, reduction=r),
        (X, T, SIGN),
        (0, 1),
    ),
    "hinge_embedding": (
        lambda F, L, a, y, r: F.hinge_embedding_loss(a, y, margin=0.8, reduction=r),
        (X, SIGN),
        (0,),
    ),
    "triplet": (
        lambda F, L, a, p, n, r: F.triplet_margin_loss(a, p, n, reduction=r),
        (X, T, P),
        None,
    ),
    "triplet_p1_swap": (
        lambda F, L, a, p, n, r: F.triplet_margin_loss(a, p, n, p=1, swap=True, reduction=r),
        (X, T, P),
        None,
    ),
}


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_matches_torch(real_torch, name, reduction):
    fn, arrays, grads = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning is checked below
        compare(real_torch, lambda F, L, *ts: fn(F, L, *ts, reduction), arrays, grads)


@pytest.mark.parametrize("which", ["weight", "pos_weight"])
def test_bce_logits_weights_are_not_differentiable(real_torch, which):
    msgs = []
    for lib in (real_torch, torch):
        w = lib.tensor(T[0], requires_grad=True)
        x, y = lib.tensor(XZ), lib.tensor(T)
        with pytest.raises(RuntimeError, match=f"with respect to argument '{which}'") as e:
            lib.nn.functional.binary_cross_entropy_with_logits(x, y, **{which: w})
        msgs.append(str(e.value))
        with lib.no_grad():  # fine without recording
            lib.nn.functional.binary_cross_entropy_with_logits(x, y, **{which: w})
    assert msgs[0] == msgs[1]
    out = torch.nn.functional.binary_cross_entropy_with_logits(
        torch.tensor(XZ, requires_grad=True), torch.tensor(T)
    )
    assert out.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"


@pytest.mark.parametrize("name", ["bce", "kl", "triplet"])
def test_loss_float32(real_torch, name):
    fn, arrays, grads = CASES[name]
    arrays = tuple(np.asarray(a, np.float32) for a in arrays)
    compare(real_torch, lambda F, L, *ts: fn(F, L, *ts, "sum"), arrays, grads)


def test_bce_saturated_probabilities(real_torch):
    # log clamped at -100; gradient (x - t) / max(x (1 - x), 1e-12) stays finite
    x = np.array([0.0, 1.0, 0.5, 1.0, 0.0])
    t = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    tol = dict(rtol=1e-8, atol=1e-10)
    out = compare(
        real_torch,
        lambda F, L, a, b: F.binary_cross_entropy(a, b, reduction="none"),
        (x, t),
        (0,),
        tol=tol,
    )
    assert np.isfinite(npv(out)).all()


def test_kl_div_batchmean_and_mean_warning(real_torch):
    compare(real_torch, lambda F, L, a, b: F.kl_div(a, b, reduction="batchmean"), (X, T))
    with pytest.warns(UserWarning, match="batchmean"):
        torch.nn.functional.kl_div(torch.tensor(X), torch.tensor(T))


@pytest.mark.parametrize(
    "var",
    [np.full((3, 4), 0.5), P[:, 0], P[:, :1], 0.7],
    ids=["same", "one-fewer-dim", "broadcast-1", "float"],
)
def test_gaussian_nll_var_shapes(real_torch, var):
    if isinstance(var, float):
        compare(real_torch, lambda F, L, a, b: F.gaussian_nll_loss(a, b, var), (X, T))
    else:
        compare(real_torch, lambda F, L, a, b, v: F.gaussian_nll_loss(a, b, v), (X, T, var))


@pytest.mark.parametrize(
    "fn, arrays",
    [
        (lambda F, L, a, b: F.binary_cross_entropy(a, b), (P, T[:2])),
        (lambda F, L, a, b: F.binary_cross_entropy(a, b), (X, T)),
        (lambda F, L, a, b: F.binary_cross_entropy(a, b, reduction="avg"), (P, T)),
        (lambda F, L, a, b: F.smooth_l1_loss(a, b, beta=-1.0), (X, T)),
        (lambda F, L, a, b: F.huber_loss(a, b, delta=0.0), (X, T)),
        (lambda F, L, a, b, w: F.huber_loss(a, b, weight=w), (X, T, P[0])),
        (lambda F, L, a, b: F.kl_div(a, b, reduction="batch"), (X, T)),
        (lambda F, L, a, b, v: F.gaussian_nll_loss(a, b, v), (X, T, -P)),
        (lambda F, L, a, b, v: F.gaussian_nll_loss(a, b, v), (X, T, P[:2])),
        (lambda F, L, a, b, v: F.gaussian_nll_loss(a, b, v, reduction="x"), (X, T, P)),
        (lambda F, L, a, b, y: F.cosine_embedding_loss(a, b, y), (X, T, SIGN)),
        (lambda F, L, a, b, y: F.cosine_embedding_loss(a, b, y), (X[0], T, Y3)),
        (lambda F, L, a, b, y: F.margin_ranking_loss(a, b, y), (X, T, Y3)),
        (lambda F, L, a, p, n: F.triplet_margin_loss(a, p, n, margin=0.0), (X, T, P)),
        (lambda F, L, a, p, n: F.triplet_margin_loss(a, p, n), (X, T, P[0])),
        (lambda F, L, a, b: F.poisson_nll_loss(a, b, reduction="x"), (X, T)),
        (lambda F, L, a, y: F.multilabel_soft_margin_loss(a, y, reduction="x"), (X, T)),
    ],
)
def test_loss_errors(real_torch, fn, arrays):
    same_error(real_torch, fn, arrays)


# --- modules ------------------------------------------------------------------------------

MODULES = [
    ("BCELoss", {"reduction": "sum"}, (P, T)),
    ("SmoothL1Loss", {"beta": 0.5}, (X, T)),
    ("HuberLoss", {"delta": 0.3, "reduction": "none"}, (X, T)),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, (X, X[::-1].copy())),
    ("PoissonNLLLoss", {"full": True}, (X, T * 3)),
    ("SoftMarginLoss", {}, (X, SIGN)),
    ("MultiLabelSoftMarginLoss", {}, (X, (SIGN > 0) * 1.0)),
    ("CosineEmbeddingLoss", {"margin": 0.2}, (X, T, Y3)),
    ("MarginRankingLoss", {"margin": 0.1}, (X, T, SIGN)),
    ("HingeEmbeddingLoss", {"margin": 2.0}, (X, SIGN)),
    ("TripletMarginLoss", {"margin": 0.5, "p": 3.0}, (X, T, P)),
    ("PairwiseDistance", {"p": 1.0, "keepdim": True}, (X, T)),
    ("CosineSimilarity", {"dim": 0}, (X, T)),
]


@pytest.mark.parametrize("name, kwargs, arrays", MODULES, ids=[m[0] for m in MODULES])
def test_loss_module_matches_torch(real_torch, name, kwargs, arrays):
    def fn(F, L, *ts):
        return getattr(L.nn, name)(**kwargs)(*ts)

    compare(real_torch, fn, arrays, grads=(0,))


def test_gaussian_nll_and_bce_modules(real_torch):
    compare(
        real_torch,
        lambda F, L, a, b, v: L.nn.GaussianNLLLoss(full=True, eps=0.2)(a, b, v),
        (X, T, P),
    )
    compare(
        real_torch,
        lambda F, L, a, b, w: L.nn.BCELoss(weight=w)(a, b),
        (P, T, T[0]),
        grads=(0,),
    )
    with pytest.raises(ValueError):
        nn.TripletMarginLoss(margin=-1.0)
    assert repr(nn.BCELoss()) == repr(real_torch.nn.BCELoss())


def test_pairwise_distance_and_cosine_similarity(real_torch):
    compare(real_torch, lambda F, L, a, b: F.pairwise_distance(a, b, p=3.0), (X, T))
    compare(real_torch, lambda F, L, a, b: F.pairwise_distance(a, b), (X[0], T[0]))
    compare(real_torch, lambda F, L, a, b: F.pairwise_distance(a, b, p=float("inf")), (X, T))
    compare(real_torch, lambda F, L, a, b: F.cosine_similarity(a, b, dim=-1), (X, T[:1]))
    tiny = T * 1e-10  # norms below eps: clamped without gradient, as PyTorch
    compare(real_torch, lambda F, L, a, b: F.cosine_similarity(a, b, dim=0), (X, tiny))
    compare(real_torch, lambda F, L, a: F.normalize(a, p=1.0, dim=0), (X,))
    compare(real_torch, lambda F, L, a: F.normalize(a), (X,))
    y = torch.nn.functional.cosine_similarity(torch.tensor(X), torch.tensor(T))
    assert npv(y).shape == (3,)


# --- CTC ----------------------------------------------------------------------------------

CTC_LOGITS = np.random.default_rng(5).standard_normal((10, 3, 5))
CTC_TARGETS = np.array([[1, 2, 2, 3], [4, 1, 0, 0], [3, 3, 3, 0]])
CTC_IN, CTC_TGT = [10, 7, 9], [4, 2, 3]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("concatenated", [False, True])
def test_ctc_loss_matches_torch(real_torch, reduction, concatenated):
    if concatenated:
        targets = np.concatenate([r[:n] for r, n in zip(CTC_TARGETS, CTC_TGT)])
    else:
        targets = CTC_TARGETS

    def fn(F, L, x, t):
        lp = x.log_softmax(2)
        return F.ctc_loss(lp, t, L.tensor(CTC_IN), L.tensor(CTC_TGT), reduction=reduction)

    compare(real_torch, fn, (CTC_LOGITS, targets), grads=(0,))


def test_ctc_loss_gradient_wrt_log_probs(real_torch):
    # PyTorch's gradient w.r.t. log_probs is exp(log_probs) - alpha beta / p (not the plain
    # derivative); compat returns the same numbers
    lp = CTC_LOGITS - np.log(np.exp(CTC_LOGITS).sum(2, keepdims=True))
    compare(
        real_torch,
        lambda F, L, x, t: F.ctc_loss(x, t, CTC_IN, CTC_TGT, blank=0, reduction="sum"),
        (lp, CTC_TARGETS),
        grads=(0,),
    )


def test_ctc_loss_blank_zero_infinity_unbatched_and_module(real_torch):
    lp = CTC_LOGITS - np.log(np.exp(CTC_LOGITS).sum(2, keepdims=True))
    targets = np.array([[1, 1, 1, 2], [2, 3, 0, 0], [1, 2, 3, 4]])
    # the third sequence cannot be aligned in 3 steps: infinite loss, zeroed
    compare(
        real_torch,
        lambda F, L, x, t: L.nn.CTCLoss(blank=4, zero_infinity=True, reduction="none")(
            x, t, [10, 6, 3], [4, 2, 4]
        ),
        (lp, targets - (targets == 4) * 4),
        grads=(0,),
    )
    compare(
        real_torch,
        lambda F, L, x, t: F.ctc_loss(x, t, [8], [3]),
        (lp[:, 0].astype(np.float32), np.array([1, 2, 2])),
        grads=(0,),
    )
    same_error(
        real_torch,
        lambda F, L, x, t: F.ctc_loss(x, t, [10], [3], blank=7),
        (lp[:, 0], CTC_TARGETS[0]),
    )
    same_error(
        real_torch,
        lambda F, L, x, t: F.ctc_loss(x, t, [10, 7, 9], [4, 2, 3], reduction="x"),
        (lp, CTC_TARGETS),
    )


# ------------------------------------------------------------------- margin losses
# multi_margin_loss, multilabel_margin_loss and their modules: values, input gradients and
# node names for random inputs under every reduction (float64 to 1e-10), and PyTorch's
# errors with their messages.

REDUCTIONS = ("mean", "sum", "none")


def _margin_run(lib, fn, x, *rest):
    """``fn(F, nn, input, *rest)`` on ``lib``; returns (loss values, input gradient, loss)."""
    xt = lib.tensor(x, requires_grad=True)
    ts = [lib.tensor(a) if a is not None else None for a in rest]
    loss = fn(lib.nn.functional, lib.nn, xt, *ts)
    g = np.ones(tuple(loss.shape))
    loss.backward(lib.tensor(g, dtype=loss.dtype))
    return loss.detach().numpy(), xt.grad.numpy(), loss


def _margin_compare(real, fn, x, *rest):
    cv, cg, closs = _margin_run(torch, fn, x, *rest)
    tv, tg, tloss = _margin_run(real, fn, x, *rest)
    assert cv.shape == tv.shape and cv.dtype == tv.dtype
    np.testing.assert_allclose(cv, tv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cg, tg, rtol=1e-10, atol=1e-12)
    assert closs.grad_fn.name() == tloss.grad_fn.name()


def _margin_same_error(real, fn, *arrays):
    errs = []
    for lib in (torch, real):
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

    _margin_compare(real_torch, fn, x, y, w if weighted else None)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("target", (np.array(2), np.array([2])))
def test_multi_margin_loss_unbatched(real_torch, reduction, target):
    x = np.array([0.3, -0.2, 0.9, 1.4])

    def fn(F, nn, a, t):
        return F.multi_margin_loss(a, t, reduction=reduction)

    _margin_compare(real_torch, fn, x, target)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_module_and_float32(real_torch, reduction):
    x, y, w = _random_case(3, 6, 3)
    x = x.astype(np.float32)
    w = w.astype(np.float32)

    def fn(F, nn, a, t, wt):
        return nn.MultiMarginLoss(p=2, margin=0.7, weight=wt, reduction=reduction)(a, t)

    cv, cg, _ = _margin_run(torch, fn, x, y, w)
    tv, tg, _ = _margin_run(real_torch, fn, x, y, w)
    assert cv.dtype == tv.dtype == np.float32
    np.testing.assert_allclose(cv, tv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cg, tg, rtol=1e-5, atol=1e-6)
    m = torch.nn.MultiMarginLoss(weight=torch.tensor(w))
    assert "weight" in dict(m.named_buffers())


def test_multi_margin_legacy_reduction_args(real_torch):
    x, y, _ = _random_case(4, 3, 5)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        c = torch.nn.functional.multi_margin_loss(
            torch.tensor(x), torch.tensor(y), size_average=False
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
    _margin_same_error(real_torch, fn, *arrays)


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

    _margin_compare(real_torch, fn, x, t)

    def module(F, nn, a, tt):
        return nn.MultiLabelMarginLoss(reduction=reduction)(a, tt)

    _margin_compare(real_torch, module, x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_unbatched(real_torch, reduction):
    x = np.array([0.1, 0.2, 0.4, 0.8])
    t = np.array([3, 0, -1, 1])

    def fn(F, nn, a, tt):
        return F.multilabel_margin_loss(a, tt, reduction=reduction)

    _margin_compare(real_torch, fn, x, t)


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
    _margin_same_error(real_torch, lambda F, nn, a, t: F.multilabel_margin_loss(a, t), *arrays)


def test_multilabel_margin_bad_reduction(real_torch):
    _margin_same_error(
        real_torch,
        lambda F, nn, a, t: F.multilabel_margin_loss(a, t, reduction="foo"),
        X34,
        np.array([[0, -1, 0, 0]] * 3),
    )


def test_cross_entropy_of_zero_classes(real_torch) -> None:
    outs = []
    for lib in (torch, real_torch):
        loss = lib.nn.CrossEntropyLoss()
        outs.append(
            [
                float(loss(lib.rand(5, 0), lib.rand(5, 0))),
                float(loss(lib.rand(0, 3), lib.rand(0, 3))),
            ]
        )
    np.testing.assert_array_equal(outs[0], outs[1])  # NaN, as PyTorch's 0 / 0
