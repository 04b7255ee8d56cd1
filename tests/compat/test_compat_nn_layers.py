"""compat's pooling, normalisation, embedding and reshaping layers against real PyTorch.

Every test runs the same numbers through ``compat.torch`` and real PyTorch (the
``real_torch`` fixture, ``conftest.py``: skipped without PyTorch unless
``COMPAT_REQUIRE_TORCH=1``) and compares forward values, gradients of inputs and
parameters (incl. ``create_graph=True`` double backward), running statistics,
``state_dict`` round trips, ``repr`` and error types/messages. Max-pooling inputs are
small integers, so windows hold repeated maxima and the test checks that the whole
gradient goes to the element PyTorch picks.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from torch_oracle import compare, npv, same_error

import compat.torch as torch
import compat.torch.nn as nn
import compat.torch.nn.functional as F

F64 = dict(rtol=1e-10, atol=1e-10)


def _sd_to_torch(real_torch, module) -> dict:
    return {k: real_torch.from_numpy(np.array(v.numpy())) for k, v in module.state_dict().items()}


def _forward_backward(lib, fn, arrays, ct):
    """``fn(*tensors)``; gradients of ``sum(out * ct)`` w.r.t. every tensor."""
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    extra = None
    if isinstance(out, tuple):
        out, extra = out
    (out * lib.tensor(ct(tuple(out.shape)))).sum().backward()
    return out, extra, [t.grad for t in ts]


def _compare(real_torch, fn, arrays, seed=0, tol=F64):
    """Run ``fn(lib, *tensors)`` on both libraries; compare outputs and input gradients."""
    rng = np.random.default_rng(seed)
    cts: dict = {}

    def ct(shape):
        if shape not in cts:
            cts[shape] = rng.standard_normal(shape)
        return cts[shape]

    y, yi, gs = _forward_backward(torch, fn, arrays, ct)
    yt, yti, gts = _forward_backward(real_torch, fn, arrays, ct)
    assert tuple(y.shape) == tuple(yt.shape)
    assert str(y.dtype) == str(yt.dtype)
    np.testing.assert_allclose(npv(y), npv(yt), **tol)
    if yti is not None:
        assert str(yi.dtype) == str(yti.dtype) == "torch.int64"
        np.testing.assert_array_equal(npv(yi), npv(yti))
    for g, gt in zip(gs, gts):
        np.testing.assert_allclose(npv(g), npv(gt), **tol)
    return y


# ---------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------


def _out_size(n: int, k: int, p: int, s: int, d: int, ceil_mode: bool) -> int:
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return out - 1 if ceil_mode and (out - 1) * s >= n + p else out


@st.composite
def _pool_case(draw, nd: int, max_pool: bool):
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(nd)) if max_pool else (1,) * nd
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    # PyTorch's max pooling bounds padding by half the kernel, not only the dilated window
    limits = kernel if max_pool else eff
    padding = tuple(draw(st.integers(0, e // 2)) for e in limits)
    spatial = tuple(draw(st.integers(max(e - 2 * p, 1), e + 5)) for e, p in zip(eff, padding))
    if max_pool:  # no window entirely in the padding (PyTorch's index there is out of range)
        for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation):
            out = _out_size(n, k, p, s, d, ceil_mode=True)
            for o in range(out):
                taps = o * s - p + d * np.arange(k)
                assume(((taps >= 0) & (taps < n)).any())
    batched = draw(st.booleans())
    shape = ((2,) if batched else ()) + (draw(st.integers(1, 3)),) + spatial
    kw = dict(kernel_size=kernel, padding=padding, ceil_mode=draw(st.booleans()))
    if draw(st.booleans()) or stride != kernel:
        kw["stride"] = stride
    if max_pool:
        kw["dilation"] = dilation
    else:
        kw["count_include_pad"] = draw(st.booleans())
        if nd == 2 and draw(st.integers(0, 3)) == 0:
            kw["divisor_override"] = draw(st.integers(1, 5))
    # compact ints for the scalar forms PyTorch also accepts
    for k in ("kernel_size", "stride", "padding", "dilation"):
        if k in kw and len(set(kw[k])) == 1 and draw(st.booleans()):
            kw[k] = kw[k][0]
    return shape, kw, draw(st.integers(0, 2**16))


@pytest.mark.parametrize("nd", [1, 2])
def test_max_pool_vs_torch_with_ties(real_torch, nd):
    @given(_pool_case(nd, max_pool=True), st.booleans())
    def check(case, return_indices):
        shape, kw, seed = case
        # few distinct values: most windows have tied maxima
        x = np.random.default_rng(seed).integers(-2, 2, shape).astype(np.float64)

        def fn(lib, t):
            return getattr(lib.nn.functional, f"max_pool{nd}d")(
                t, **kw, return_indices=return_indices
            )

        _compare(real_torch, fn, [x], seed)

    check()


@pytest.mark.parametrize("nd", [1, 2])
def test_avg_pool_vs_torch(real_torch, nd):
    @given(_pool_case(nd, max_pool=False))
    def check(case):
        shape, kw, seed = case
        x = np.random.default_rng(seed).standard_normal(shape)

        def fn(lib, t):
            return getattr(lib.nn.functional, f"avg_pool{nd}d")(t, **kw)

        _compare(real_torch, fn, [x], seed)

    check()


def test_max_pool_tie_gradient_goes_to_first_maximum(real_torch):
    x = np.array([[[[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 3.0, 3.0], [0.0, 0.0, 5.0, 5.0]]]])
    y = _compare(real_torch, lambda lib, t: lib.nn.functional.max_pool2d(t, 2, 1), [x])
    xo = torch.tensor(x, requires_grad=True)
    F.max_pool2d(xo, 2, 1).sum().backward()
    # each window's single unit of gradient lands on its first maximum (row-major)
    expected = np.array([[[[0, 2, 1, 0], [1, 0, 0, 0], [0, 0, 2, 0]]]], dtype=np.float64)
    np.testing.assert_array_equal(npv(xo.grad), expected)
    assert y.grad_fn.name() == "MaxPool2DWithIndicesBackward0"


def test_max_pool_padding_is_minus_infinity(real_torch):
    x = -np.arange(1.0, 10.0).reshape(1, 1, 3, 3) - 100.0
    y = _compare(real_torch, lambda lib, t: lib.nn.functional.max_pool2d(t, 3, 1, 1), [x])
    assert np.all(npv(y) < -100.0)


def test_max_pool_nan_windows(real_torch):
    x = np.array([[[1.0, np.nan, 2.0, np.nan, 0.0, 3.0, np.nan, -1.0]]])
    for fn in (
        lambda lib, t: lib.nn.functional.max_pool1d(t, 4, 2, ceil_mode=True),
        lambda lib, t: lib.nn.functional.max_pool1d(t, 4, 2, return_indices=True),
        lambda lib, t: lib.nn.functional.max_pool2d(t.reshape(1, 1, 2, 4), 2, 1),
    ):
        _compare(real_torch, fn, [x], tol=dict(F64, equal_nan=True))


def test_float32_and_int_pooling(real_torch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    f32 = dict(rtol=1e-5, atol=1e-6)
    for fn in (
        lambda lib, t: lib.nn.functional.max_pool2d(t, 3, 2, 1, ceil_mode=True),
        lambda lib, t: lib.nn.functional.avg_pool2d(t, 3, 2, 1, count_include_pad=False),
        lambda lib, t: lib.nn.functional.adaptive_avg_pool2d(t, (3, 4)),
    ):
        _compare(real_torch, fn, [x], tol=f32)
    xi = rng.integers(-5, 5, (2, 6, 5))
    ours = F.max_pool2d(torch.tensor(xi), 2, padding=1)
    theirs = real_torch.nn.functional.max_pool2d(real_torch.tensor(xi), 2, padding=1)
    assert ours.dtype == torch.int64
    np.testing.assert_array_equal(npv(ours), npv(theirs))


@pytest.mark.parametrize(
    "in_shape,out",
    [
        ((2, 3, 8, 6), (4, 3)),
        ((2, 3, 8, 6), 1),
        ((2, 3, 8, 6), (1, 1)),
        ((2, 3, 7, 5), (3, 2)),  # not divisible: PyTorch's overlapping windows
        ((3, 7, 5), (5, 4)),
        ((2, 3, 7, 5), (None, 2)),
        ((2, 3, 4, 5), (6, 7)),  # upsampling
    ],
)
def test_adaptive_avg_pool2d_vs_torch(real_torch, in_shape, out):
    x = np.random.default_rng(2).standard_normal(in_shape)
    _compare(real_torch, lambda lib, t: lib.nn.functional.adaptive_avg_pool2d(t, out), [x])


def _double_backward(lib, fn, arrays):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    loss = (lib.tanh(out) * lib.sin(out)).sum()
    grads = lib.autograd.grad(loss, ts, create_graph=True)
    assert all(g.requires_grad for g in grads)
    sum(((g * g).sum() for g in grads), lib.zeros(())).backward()
    return [npv(g) for g in grads] + [npv(t.grad) for t in ts]


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: lib.nn.functional.max_pool2d(x, 2, 1, ceil_mode=True) * x.sum(),
        lambda lib, x: lib.nn.functional.max_pool1d(x.flatten(2), 3, 2, 1),
        lambda lib, x: lib.nn.functional.avg_pool2d(x * x, 3, 2, 1, count_include_pad=False),
        lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x * x, (2, 3)),
    ],
    ids=["max2d", "max1d", "avg2d", "adaptive"],
)
def test_pooling_double_backward_vs_torch(real_torch, fn):
    x = np.random.default_rng(3).integers(-2, 3, (2, 2, 5, 6)) + 0.5
    a = _double_backward(torch, fn, [x])
    b = _double_backward(real_torch, fn, [x])
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, **F64)


@pytest.mark.parametrize(
    "cls,args,kw,shape",
    [
        ("MaxPool1d", (3,), dict(stride=1, padding=1), (2, 3, 8)),
        ("MaxPool2d", (2,), {}, (2, 3, 8, 6)),
        ("MaxPool2d", ((3, 2),), dict(stride=(2, 1), dilation=(1, 2), ceil_mode=True), (3, 9, 7)),
        ("MaxPool2d", (2,), dict(return_indices=True), (1, 2, 4, 4)),
        ("AvgPool1d", (3,), dict(ceil_mode=True, count_include_pad=False, padding=1), (2, 3, 8)),
        ("AvgPool2d", ((2, 3), 1), dict(padding=(1, 1), divisor_override=4), (2, 3, 5, 6)),
        ("AvgPool2d", (3,), dict(stride=2, ceil_mode=True), (2, 3, 8, 8)),
        ("AdaptiveAvgPool2d", ((None, 3),), {}, (2, 3, 5, 7)),
        ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 7)),
    ],
)
def test_pooling_modules_vs_torch(real_torch, cls, args, kw, shape):
    ours, theirs = getattr(nn, cls)(*args, **kw), getattr(real_torch.nn, cls)(*args, **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    x = np.random.default_rng(4).integers(-3, 3, shape).astype(np.float64)
    _compare(real_torch, lambda lib, t: (ours if lib is torch else theirs)(t), [x])


# ---------------------------------------------------------------------------
# normalisation
# ---------------------------------------------------------------------------


def _randomize(module, rng) -> None:
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))


def _train_steps(real_torch, ctor, shape, steps, training=True, seed=0, create_graph=False):
    """Build the layer in both libraries from the same state, run ``steps`` forward/backward
    passes (each on a new batch); compare outputs, gradients and the final state."""
    rng = np.random.default_rng(seed)
    ours, theirs = ctor(nn).double(), ctor(real_torch.nn).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    _randomize(ours, rng)
    theirs.load_state_dict(_sd_to_torch(real_torch, ours))
    ours.train(training)
    theirs.train(training)
    for _ in range(steps):
        x = rng.standard_normal(shape) * 2.0 + 0.5
        ct = rng.standard_normal(shape)
        results = []
        for lib, m in ((torch, ours), (real_torch, theirs)):
            xt = lib.tensor(x, requires_grad=True)
            y = m(xt)
            loss = (y * lib.tensor(ct)).sum()
            params = list(m.parameters())
            if create_graph:
                grads = lib.autograd.grad(loss, [xt, *params], create_graph=True)
                sum(((g * g).sum() for g in grads), lib.zeros((), dtype=lib.float64)).backward()
                got = [*grads, xt.grad, *(p.grad for p in params)]
            else:
                loss.backward()
                got = [xt.grad, *(p.grad for p in params)]
                for p in params:
                    p.grad = None
            results.append([npv(y)] + [None if g is None else npv(g) for g in got])
        for a, b in zip(*results):
            if b is None:  # PyTorch leaves the .grad of an unused parameter None; so do we
                assert a is None
            else:
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    for (k, v), (k2, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert k == k2 and str(v.dtype) == str(v2.dtype), (k, v.dtype, v2.dtype)
        np.testing.assert_allclose(npv(v), npv(v2), rtol=1e-12, atol=1e-12, err_msg=k)
    return ours, theirs


@pytest.mark.parametrize(
    "ctor,shape",
    [
        (lambda n: n.BatchNorm1d(3), (6, 3)),
        (lambda n: n.BatchNorm1d(3, momentum=None), (4, 3, 5)),
        (lambda n: n.BatchNorm1d(4, momentum=0.3, eps=1e-3, affine=False), (5, 4)),
        (lambda n: n.BatchNorm2d(3), (4, 3, 2, 3)),
        (lambda n: n.BatchNorm2d(3, momentum=None, bias=False), (2, 3, 3, 2)),
        (lambda n: n.BatchNorm2d(2, track_running_stats=False), (3, 2, 2, 2)),
    ],
)
def test_batchnorm_training_and_running_stats_vs_torch(real_torch, ctor, shape):
    ours, _ = _train_steps(real_torch, ctor, shape, steps=3)
    if ours.track_running_stats:
        assert int(ours.num_batches_tracked) == 3
        assert ours.num_batches_tracked.dtype == torch.int64
        for buf in ours.buffers():
            assert not buf.requires_grad and buf.grad_fn is None
    # eval mode: the running statistics (or, untracked, the batch's) normalise
    _train_steps(real_torch, ctor, shape, steps=2, training=False, seed=1)


def test_batchnorm_eval_after_training_and_state_dict_round_trip(real_torch):
    rng = np.random.default_rng(5)
    ours, theirs = _train_steps(real_torch, lambda n: n.BatchNorm2d(3), (4, 3, 3, 3), steps=2)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((2, 3, 3, 3))
    _compare(real_torch, lambda lib, t: (ours if lib is torch else theirs)(t), [x])
    # real torch -> compat: fresh module takes the trained state, including buffers
    fresh = nn.BatchNorm2d(3).double()
    assert str(fresh.load_state_dict(theirs.state_dict())) == "<All keys matched successfully>"
    for (k, v), (_, v2) in zip(fresh.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_array_equal(npv(v), npv(v2), err_msg=k)
    assert fresh.num_batches_tracked.dtype == torch.int64
    # eval mode does not touch the buffers
    before = {k: npv(v).copy() for k, v in ours.state_dict().items()}
    ours(torch.tensor(x))
    for k, v in ours.state_dict().items():
        np.testing.assert_array_equal(npv(v), before[k])


def test_batchnorm_double_backward_vs_torch(real_torch):
    _train_steps(real_torch, lambda n: n.BatchNorm1d(3), (5, 3, 2), steps=1, create_graph=True)
    _train_steps(
        real_torch, lambda n: n.BatchNorm2d(2), (3, 2, 2, 2), 1, training=False, create_graph=True
    )


def test_batchnorm_buffers_follow_module_api(real_torch):
    bn = nn.BatchNorm1d(2)
    assert [n for n, _ in bn.named_buffers()] == [
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]
    assert len(list(bn.buffers())) == 3
    assert bn.state_dict()["num_batches_tracked"].dtype == torch.int64
    bn.double()
    assert bn.running_mean.dtype == torch.float64
    assert bn.num_batches_tracked.dtype == torch.int64
    untracked = nn.BatchNorm1d(2, track_running_stats=False)
    assert untracked.running_mean is None and list(untracked.state_dict()) == ["weight", "bias"]
    # the update records no graph, also when the input requires grad
    x = torch.randn(4, 2, requires_grad=True)
    bn.float()(x.float())
    assert bn.running_mean.grad_fn is None and not bn.running_var.requires_grad
    with torch.no_grad():
        y = bn(torch.randn(4, 2))
    assert y.grad_fn is None and int(bn.num_batches_tracked) == 2
    bn.reset_running_stats()
    assert int(bn.num_batches_tracked) == 0 and float(bn.running_var.sum()) == 2.0


def test_functional_batch_norm_updates_buffers_like_torch(real_torch):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 3, 4))
    rm, rv = rng.standard_normal(3), rng.random(3) + 0.5
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    bufs = {}
    for lib in (torch, real_torch):
        m, v = lib.tensor(rm), lib.tensor(rv)
        xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.batch_norm(xt, m, v, wt, bt, training=True, momentum=0.25)
        y.pow(2).sum().backward()
        bufs[lib] = [npv(t) for t in (y, m, v, xt.grad, wt.grad, bt.grad)]
    for a, b2 in zip(bufs[torch], bufs[real_torch]):
        np.testing.assert_allclose(a, b2, **F64)


@pytest.mark.parametrize(
    "ctor,shape",
    [
        (lambda n: n.LayerNorm(4), (2, 3, 4)),
        (lambda n: n.LayerNorm([3, 4], eps=1e-3), (2, 3, 4)),
        (lambda n: n.LayerNorm((4,), bias=False), (5, 4)),
        (lambda n: n.LayerNorm(4, elementwise_affine=False), (3, 4)),
        (lambda n: n.GroupNorm(2, 4), (2, 4, 3, 2)),
        (lambda n: n.GroupNorm(1, 3, affine=False), (2, 3, 5)),
        (lambda n: n.GroupNorm(3, 3, eps=1e-2, bias=False), (2, 3, 2)),
    ],
)
def test_layer_and_group_norm_vs_torch(real_torch, ctor, shape):
    _train_steps(real_torch, ctor, shape, steps=1)
    _train_steps(real_torch, ctor, shape, steps=1, create_graph=True)


def test_norm_layers_float32_and_dtype_argument(real_torch):
    for ctor, shape in (
        (lambda n: n.BatchNorm2d(3), (4, 3, 5, 5)),
        (lambda n: n.LayerNorm(5), (4, 3, 5)),
        (lambda n: n.GroupNorm(3, 3), (4, 3, 5)),
    ):
        ours, theirs = ctor(nn), ctor(real_torch.nn)
        x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
        for _ in range(2):
            y = ours(torch.tensor(x))
            yt = theirs(real_torch.tensor(x))
            assert y.dtype == torch.float32
            np.testing.assert_allclose(npv(y), npv(yt), rtol=1e-4, atol=1e-5)
        for (k, v), (_, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            np.testing.assert_allclose(npv(v), npv(v2), rtol=1e-5, atol=1e-6, err_msg=k)
    bn = nn.BatchNorm1d(2, dtype=torch.float64)
    assert bn.weight.dtype == bn.running_var.dtype == torch.float64
    assert nn.LayerNorm(3, dtype=torch.float64).bias.dtype == torch.float64


# ---------------------------------------------------------------------------
# embedding, flatten, identity
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("padding_idx", [None, 0, 3, -1])
def test_embedding_vs_torch(real_torch, padding_idx):
    torch.manual_seed(0)
    ours = nn.Embedding(6, 3, padding_idx=padding_idx).double()
    theirs = real_torch.nn.Embedding(6, 3, padding_idx=padding_idx).double()
    assert repr(ours) == repr(theirs) and ours.padding_idx == theirs.padding_idx
    if padding_idx is not None:  # the padding row starts at zero
        assert not npv(ours.weight)[ours.padding_idx].any()
    theirs.load_state_dict(_sd_to_torch(real_torch, ours))
    idx = np.array([[0, 2, 5, 3], [5, 5, 1, 0]])
    ct = np.random.default_rng(8).standard_normal((2, 4, 3))
    grads = []
    for lib, m in ((torch, ours), (real_torch, theirs)):
        y = m(lib.tensor(idx))
        (y * lib.tensor(ct)).sum().backward()
        grads.append((npv(y), npv(m.weight.grad)))
    np.testing.assert_allclose(grads[0][0], grads[1][0], **F64)
    np.testing.assert_allclose(grads[0][1], grads[1][1], **F64)
    if padding_idx is not None:
        assert not grads[0][1][ours.padding_idx].any()
    # int32 indices and the functional form
    y32 = F.embedding(torch.tensor(idx.astype(np.int32)), ours.weight)
    np.testing.assert_array_equal(npv(y32), grads[0][0])


def test_embedding_trains_with_optimizer_and_from_pretrained(real_torch):
    w = np.random.default_rng(9).standard_normal((5, 2))
    idx = np.array([1, 4, 4, 0])
    finals = []
    for lib in (torch, real_torch):
        emb = lib.nn.Embedding.from_pretrained(lib.tensor(w), freeze=False, padding_idx=4)
        opt = lib.optim.SGD(emb.parameters(), lr=0.5, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            emb(lib.tensor(idx)).pow(2).sum().backward()
            opt.step()
        finals.append(npv(emb.weight))
        frozen = lib.nn.Embedding.from_pretrained(lib.tensor(w))
        assert not frozen.weight.requires_grad
    np.testing.assert_allclose(finals[0], finals[1], **F64)
    np.testing.assert_array_equal(finals[0][4], w[4])


def test_flatten_unflatten_identity(real_torch):
    x = np.random.default_rng(10).standard_normal((2, 3, 4, 5))
    for ctor in (
        lambda n: n.Flatten(),
        lambda n: n.Flatten(0, 2),
        lambda n: n.Unflatten(1, (3, 1)),
        lambda n: n.Unflatten(-1, [5, 1]),
        lambda n: n.Unflatten(2, (2, -1)),
        lambda n: n.Identity(3, foo=1),
    ):
        ours, theirs = ctor(nn), ctor(real_torch.nn)
        assert repr(ours) == repr(theirs)
        _compare(real_torch, lambda lib, t: (ours if lib is torch else theirs)(t), [x])


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # compared across libraries
        return type(e), str(e).splitlines()[0] if str(e) else ""
    return None, None


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 4, 4), 3, padding=2),
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 4, 4), 2, stride=0),
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 4, 4), 2, dilation=0),
        lambda t: t.nn.functional.max_pool2d(t.zeros(2, 4, 4, 4, 1), 2),
        lambda t: t.nn.functional.max_pool2d(t.zeros(4, 4), 2),
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 2, 2), 3),
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 4, 4), (2, 2, 2)),
        lambda t: t.nn.functional.max_pool1d(t.zeros(1, 2, 2), 3),
        lambda t: t.nn.functional.max_pool1d(t.zeros(2), 1),
        lambda t: t.nn.functional.max_pool1d(t.zeros(1, 2, 4), 2, padding=2),
        lambda t: t.nn.functional.avg_pool2d(t.zeros(1, 2, 4, 4), 3, padding=2),
        lambda t: t.nn.functional.avg_pool2d(t.zeros(1, 2, 2, 2), 3),
        lambda t: t.nn.functional.avg_pool2d(t.zeros(1, 2, 4, 4), 2, stride=0),
        lambda t: t.nn.functional.avg_pool2d(t.zeros(1, 2, 4, 4), 2, divisor_override=0),
        lambda t: t.nn.functional.avg_pool2d(t.zeros(2, 4, 4, 4, 1), 2),
        lambda t: t.nn.functional.avg_pool1d(t.zeros(1, 2, 2), 3),
        lambda t: t.nn.functional.avg_pool1d(t.zeros(1, 2, 4), 2, padding=2),
        lambda t: t.nn.functional.avg_pool1d(t.zeros(4), 2),
        lambda t: t.nn.functional.adaptive_avg_pool2d(t.zeros(2, 4, 4, 4, 1), 2),
        lambda t: t.nn.functional.adaptive_avg_pool2d(t.zeros(2, 4, 4), (2, 2, 2)),
        lambda t: t.nn.functional.adaptive_avg_pool2d(t.zeros(2, 4, 4), [2]),
        lambda t: t.nn.functional.max_pool2d(
            t.zeros(1, 2, 6, 6), (3, 1), padding=(2, 0), dilation=2
        ),
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 4, 4), 2, padding=-1),
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 4, 4), 0, stride=1),
        lambda t: t.nn.functional.max_pool2d(t.zeros(1, 2, 4, 4), 2, stride=-1),
        lambda t: t.nn.functional.max_pool1d(t.zeros(1, 2, 4), 2, stride=0),
        lambda t: t.nn.functional.max_pool1d(t.zeros(1, 2, 4), 0, stride=1),
        lambda t: t.nn.functional.max_pool1d(t.zeros(1, 2, 4), 2, dilation=0),
        lambda t: t.nn.functional.max_pool1d(t.zeros(1, 2, 9), 3, padding=2, dilation=2),
        lambda t: t.nn.functional.avg_pool2d(t.zeros(1, 2, 4, 4), 2, padding=-1),
        lambda t: t.nn.BatchNorm1d(3)(t.zeros(1, 3)),
        lambda t: t.nn.BatchNorm1d(3)(t.zeros(2, 3, 4, 5)),
        lambda t: t.nn.BatchNorm2d(3)(t.zeros(2, 3, 4)),
        lambda t: t.nn.BatchNorm2d(3)(t.zeros(2, 4, 4, 4)),
        lambda t: t.nn.functional.batch_norm(t.zeros(2, 3), t.zeros(4), t.zeros(4)),
        lambda t: t.nn.functional.layer_norm(t.zeros(2, 3), (4,)),
        lambda t: t.nn.functional.layer_norm(t.zeros(2, 3), (2, 3, 4)),
        lambda t: t.nn.LayerNorm(4)(t.zeros(2, 3)),
        lambda t: t.nn.GroupNorm(3, 4),
        lambda t: t.nn.GroupNorm(2, 4)(t.zeros(2, 6, 3)),
        lambda t: t.nn.functional.group_norm(t.zeros(2, 6, 3), 4),
        lambda t: t.nn.Embedding(5, 3, padding_idx=5),
        lambda t: t.nn.Embedding(5, 3, padding_idx=-6),
        lambda t: t.nn.Embedding(5, 3)(t.tensor([5])),
        lambda t: t.nn.Embedding(5, 3)(t.tensor([[1, -1]])),
        lambda t: t.nn.Embedding(5, 3)(t.tensor([1.0])),
        lambda t: t.nn.functional.embedding(t.tensor([1]), t.zeros(5, 3), padding_idx=7),
        lambda t: t.nn.Unflatten(1, (2, 4))(t.zeros(2, 6)),
    ],
)
def test_errors_match_torch(real_torch, fn):
    ours, theirs = _error(torch, fn), _error(real_torch, fn)
    assert theirs[0] is not None and ours[0] is theirs[0], (ours, theirs)
    assert ours[1] == theirs[1], (ours[1], theirs[1])


def test_embedding_max_norm_matches_pytorch(real_torch):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 3)) * 2
    idx = np.array([[0, 2, 2], [5, 1, 0]])
    res = []
    for lib in (torch, real_torch):
        emb = lib.nn.Embedding(6, 3, max_norm=1.5, norm_type=1.0, dtype=lib.float64)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w))
        out = emb(lib.tensor(idx))
        (out * lib.arange(18.0, dtype=lib.float64).reshape(2, 3, 3)).sum().backward()
        again = lib.nn.functional.embedding(lib.tensor([3]), emb.weight, max_norm=0.5)
        res.append([npv(out), npv(emb.weight), npv(emb.weight.grad), npv(again)])
    for c, t in zip(*res):
        np.testing.assert_allclose(c, t, rtol=1e-12)


def test_unsupported_options_name_themselves():
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        F.embedding_bag(torch.tensor([1]), torch.zeros(5, 3), torch.tensor([0]),
                        scale_grad_by_freq=True)  # fmt: skip
    with pytest.raises(NotImplementedError, match="integer average pooling"):
        F.avg_pool2d(torch.zeros(1, 2, 4, 4, dtype=torch.int64), 2)


# ---------------------------------------------------------------------------
# end to end
# ---------------------------------------------------------------------------


def test_lenet_trains_like_torch(real_torch):
    """Conv2d → BatchNorm2d → ReLU → MaxPool2d → ... → Linear, 3 SGD steps in float64."""

    def build(lib):
        n = lib.nn
        return n.Sequential(
            n.Conv2d(1, 4, 3, padding=1),
            n.BatchNorm2d(4),
            n.ReLU(),
            n.MaxPool2d(2),
            n.Conv2d(4, 6, 3),
            n.BatchNorm2d(6, momentum=None),
            n.ReLU(),
            n.AvgPool2d(2, ceil_mode=True),
            n.Flatten(),
            n.Linear(6, 8),
            n.LayerNorm(8),
            n.ReLU(),
            n.Linear(8, 3),
        ).double()

    torch.manual_seed(0)
    ours, theirs = build(torch), build(real_torch)
    theirs.load_state_dict(_sd_to_torch(real_torch, ours))
    rng = np.random.default_rng(11)
    batches = [(rng.standard_normal((6, 1, 8, 8)), rng.integers(0, 3, 6)) for _ in range(3)]
    losses = []
    for lib, model in ((torch, ours), (real_torch, theirs)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        run = []
        for x, y in batches:
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            run.append(loss.item())
        model.eval()
        run.append(model(lib.tensor(batches[0][0])).sum().item())
        losses.append(run)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-10)
    for (k, v), (_, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(npv(v), npv(v2), rtol=1e-9, atol=1e-12, err_msg=k)


# ---------------------------------------------------------------------------
# instance normalisation
# ---------------------------------------------------------------------------

INSTANCE_NORMS = [
    (lambda n: n.InstanceNorm1d(3), (4, 3, 5)),
    (lambda n: n.InstanceNorm1d(3, affine=True), (2, 3, 6)),
    (lambda n: n.InstanceNorm1d(3, affine=True, track_running_stats=True), (4, 3, 5)),
    (lambda n: n.InstanceNorm1d(2, momentum=None, track_running_stats=True), (3, 2, 4)),
    (lambda n: n.InstanceNorm1d(3, affine=True, bias=False, eps=1e-3), (3, 4)),  # unbatched
    (lambda n: n.InstanceNorm2d(3), (2, 3, 4, 3)),
    (
        lambda n: n.InstanceNorm2d(2, affine=True, momentum=0.3, track_running_stats=True),
        (3, 2, 3, 4),
    ),
    (lambda n: n.InstanceNorm2d(3, affine=True, track_running_stats=True), (3, 2, 5)),  # unbatched
]


@pytest.mark.parametrize("ctor,shape", INSTANCE_NORMS)
def test_instance_norm_training_eval_and_running_stats_vs_torch(real_torch, ctor, shape):
    """Training steps (outputs, input/weight/bias gradients, running stats), then eval mode:
    the running statistics normalise when tracked, the instance's own otherwise."""
    ours, _ = _train_steps(real_torch, ctor, shape, steps=3)
    if ours.track_running_stats:
        assert int(ours.num_batches_tracked) == 0  # PyTorch never counts instance-norm batches
        for buf in ours.buffers():
            assert not buf.requires_grad and buf.grad_fn is None
        if ours.momentum is not None:  # momentum=None means 0.0 here: the buffers stay
            assert float(ours.running_var.sum()) != ours.num_features
    _train_steps(real_torch, ctor, shape, steps=2, training=False, seed=1)


@pytest.mark.parametrize("ctor,shape", INSTANCE_NORMS)
def test_instance_norm_double_backward_vs_torch(real_torch, ctor, shape):
    ours, _ = _train_steps(real_torch, ctor, shape, steps=1, create_graph=True)
    if ours.affine or not ours.track_running_stats:
        # (eval with running stats and no affine is linear in the input: PyTorch's gradient
        # still requires grad, compat's is a constant, as for BatchNorm)
        _train_steps(real_torch, ctor, shape, steps=1, training=False, create_graph=True)


def test_instance_norm_state_dict_round_trip_and_eval_vs_torch(real_torch):
    rng = np.random.default_rng(12)
    ctor = lambda n: n.InstanceNorm2d(3, affine=True, track_running_stats=True)
    ours, theirs = _train_steps(real_torch, ctor, (4, 3, 3, 3), steps=2)
    assert list(ours.state_dict()) == [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]
    assert ours.state_dict()["num_batches_tracked"].dtype == torch.int64
    ours.eval()
    theirs.eval()
    x = rng.standard_normal((2, 3, 3, 3))
    _compare(real_torch, lambda lib, t: (ours if lib is torch else theirs)(t), [x])
    # eval mode leaves the buffers as they are (up to PyTorch's mean of N equal copies)
    before = {k: npv(v).copy() for k, v in ours.state_dict().items()}
    ours(torch.tensor(x))
    for k, v in ours.state_dict().items():
        np.testing.assert_allclose(npv(v), before[k], rtol=1e-15, atol=0, err_msg=k)
    # real torch -> fresh compat module, and compat -> fresh torch module
    fresh = ctor(nn).double()
    assert str(fresh.load_state_dict(theirs.state_dict())) == "<All keys matched successfully>"
    back = ctor(real_torch.nn).double()
    back.load_state_dict(_sd_to_torch(real_torch, ours))
    for (k, v), (_, v2), (_, v3) in zip(
        fresh.state_dict().items(), theirs.state_dict().items(), back.state_dict().items()
    ):
        np.testing.assert_array_equal(npv(v), npv(v2), err_msg=k)
        np.testing.assert_allclose(npv(v3), npv(v2), rtol=1e-12, atol=1e-12, err_msg=k)
    fresh.eval()
    np.testing.assert_allclose(
        npv(fresh(torch.tensor(x))), npv(theirs(real_torch.tensor(x))), rtol=1e-10, atol=1e-10
    )
    untracked = nn.InstanceNorm1d(4)
    assert list(untracked.state_dict()) == [] and untracked.running_mean is None


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("shape", [(3, 2, 5), (2, 2, 3, 4)])
def test_functional_instance_norm_vs_torch(real_torch, use_input_stats, shape):
    """Outputs, gradients w.r.t. input/weight/bias, buffer updates and the graph's top nodes."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal(shape) * 3.0 - 1.0
    rm, rv = rng.standard_normal(2), rng.random(2) + 0.5
    w, b = rng.standard_normal(2), rng.standard_normal(2)
    got = {}
    for lib in (torch, real_torch):
        m, v = lib.tensor(rm), lib.tensor(rv)
        xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lib.nn.functional.instance_norm(xt, m, v, wt, bt, use_input_stats, 0.25, 1e-4)
        names = [y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()]
        assert names == ["ViewBackward0", "NativeBatchNormBackward0"]
        (y.pow(3) * lib.tensor(x)).sum().backward()
        got[lib] = [npv(t) for t in (y, m, v, xt.grad, wt.grad, bt.grad)]
        # without buffers, affine parameters or gradients
        plain = lib.nn.functional.instance_norm(lib.tensor(x))
        got[lib].append(npv(plain))
    for a, b2 in zip(got[torch], got[real_torch]):
        np.testing.assert_allclose(a, b2, rtol=1e-10, atol=1e-12)
    if use_input_stats:
        assert not np.allclose(got[torch][1], rm)


def test_instance_norm_float32_and_feature_mismatch_warning(real_torch):
    x = np.random.default_rng(14).standard_normal((4, 3, 6)).astype(np.float32)
    for kw in ({}, dict(affine=True, track_running_stats=True)):
        ours, theirs = nn.InstanceNorm1d(3, **kw), real_torch.nn.InstanceNorm1d(3, **kw)
        for training in (True, True, False):
            ours.train(training)
            theirs.train(training)
            y, yt = ours(torch.tensor(x)), theirs(real_torch.tensor(x))
            assert y.dtype == torch.float32
            np.testing.assert_allclose(npv(y), npv(yt), rtol=1e-4, atol=1e-5)
        for (k, v), (_, v2) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            assert str(v.dtype) == str(v2.dtype)
            np.testing.assert_allclose(npv(v), npv(v2), rtol=1e-5, atol=1e-6, err_msg=k)
    assert nn.InstanceNorm2d(2, affine=True, dtype=torch.float64).weight.dtype == torch.float64
    # affine=False: num_features is unused, a mismatch only warns (as in PyTorch)
    for lib in (torch, real_torch):
        with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
            y = lib.nn.InstanceNorm1d(5)(lib.tensor(x))
        assert tuple(y.shape) == x.shape


def test_instance_norm_repr_and_exports(real_torch):
    for args, kw in [
        ((3,), {}),
        ((4,), dict(affine=True, bias=False)),
        ((2,), dict(momentum=None)),
    ]:
        for cls in ("InstanceNorm1d", "InstanceNorm2d"):
            assert repr(getattr(nn, cls)(*args, **kw)) == repr(
                getattr(real_torch.nn, cls)(*args, **kw)
            )
    assert "instance_norm" in F.__all__ and "InstanceNorm2d" in nn.__all__
    assert issubclass(nn.InstanceNorm1d, nn.Module)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.nn.functional.instance_norm(t.zeros(2, 3, 4), use_input_stats=False),
        lambda t: t.nn.functional.instance_norm(t.zeros(2, 3, 1)),
        lambda t: t.nn.functional.instance_norm(t.zeros(3)),
        lambda t: t.nn.functional.instance_norm(
            t.zeros(3), t.zeros(3), t.ones(3), use_input_stats=False
        ),
        lambda t: t.nn.functional.instance_norm(t.zeros(2, 3, 4), weight=t.ones(2)),
        lambda t: t.nn.functional.instance_norm(t.zeros(2, 3, 4), bias=t.ones(4)),
        lambda t: t.nn.functional.instance_norm(t.zeros(2, 3, 4), t.zeros(2), t.ones(3)),
        lambda t: t.nn.functional.instance_norm(t.zeros(2, 3, 4), t.zeros(3), t.ones(2)),
        lambda t: t.nn.InstanceNorm1d(3)(t.zeros(4)),
        lambda t: t.nn.InstanceNorm1d(3)(t.zeros(2, 3, 4, 5)),
        lambda t: t.nn.InstanceNorm2d(3)(t.zeros(3, 4)),
        lambda t: t.nn.InstanceNorm2d(3)(t.zeros(2, 3, 4, 5, 6)),
        lambda t: t.nn.InstanceNorm2d(3, affine=True)(t.zeros(2, 4, 3, 3)),
        lambda t: t.nn.InstanceNorm1d(3, affine=True)(t.zeros(4, 3)),
        lambda t: t.nn.InstanceNorm2d(3)(t.zeros(2, 3, 1, 1)),
        lambda t: t.nn.InstanceNorm1d(3)(t.zeros(3, 1)),
    ],
)
def test_instance_norm_errors_match_torch(real_torch, fn):
    ours, theirs = _error(torch, fn), _error(real_torch, fn)
    assert theirs[0] is not None and ours[0] is theirs[0], (ours, theirs)
    assert ours[1] == theirs[1], (ours[1], theirs[1])


# ---------------------------------------------------------------------------
# adaptive pooling (1-D and 3-D, max pooling with indices; torch_oracle.compare)
# ---------------------------------------------------------------------------

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 4, 5, 6))
X3 = RNG.standard_normal((2, 4, 7))
X5 = RNG.standard_normal((1, 2, 3, 4, 5))
INTS = np.round(RNG.standard_normal((2, 3, 7, 5, 4)) * 2)  # repeated maxima: tie-breaking


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda F, L, a: F.adaptive_avg_pool1d(a, 3), X3),
        (lambda F, L, a: F.adaptive_avg_pool3d(a, (2, None, 4)), X5),
        (lambda F, L, a: F.adaptive_avg_pool3d(a, 2), X5[0]),
        (lambda F, L, a: F.adaptive_max_pool1d(a, 4), INTS[0, :, :, 0]),
        (lambda F, L, a: F.adaptive_max_pool1d(a, 3, return_indices=True), INTS[:, :, :, 0, 0]),
        (lambda F, L, a: F.adaptive_max_pool2d(a, (3, 2)), INTS[:, :, :, :, 0]),
        (
            lambda F, L, a: F.adaptive_max_pool2d(a, (5, 4), return_indices=True),
            INTS[0, :, :, :, 0],
        ),
        (lambda F, L, a: F.adaptive_max_pool3d(a, (3, 2, 3), return_indices=True), INTS),
    ],
)
def test_adaptive_pools_match_torch(real_torch, fn, x):
    compare(real_torch, fn, (x,))


def test_adaptive_pool_modules(real_torch):
    for name, args in [
        ("AdaptiveAvgPool1d", (2,)),
        ("AdaptiveAvgPool3d", ((1, 2, 3),)),
        ("AdaptiveMaxPool1d", (3,)),
        ("AdaptiveMaxPool2d", ((2, 3),)),
        ("AdaptiveMaxPool3d", (2,)),
    ]:
        assert repr(getattr(nn, name)(*args)) == repr(getattr(real_torch.nn, name)(*args))
    compare(real_torch, lambda F, L, a: L.nn.AdaptiveMaxPool2d((2, 3))(a), (X4,))
    compare(real_torch, lambda F, L, a: L.nn.AdaptiveAvgPool1d(2)(a), (X3,))
    same_error(real_torch, lambda F, L, a: F.adaptive_max_pool2d(a, 2), (X3[0],))
