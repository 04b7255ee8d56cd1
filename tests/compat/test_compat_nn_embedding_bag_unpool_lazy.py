"""``nn.EmbeddingBag``/``F.embedding_bag``, ``MaxUnpool``/``max_unpool``, the ``*_with_indices``
pools, ``LPPool``/``lp_pool`` and the ``Lazy*`` convolution and normalisation modules
against real PyTorch 2.13: values, gradients, node names, ``repr`` and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@settings(max_examples=12, deadline=None)
@given(
    cuts=st.lists(st.integers(0, 9), min_size=3, max_size=3),
    idx=st.lists(st.integers(0, 9), min_size=9, max_size=9),
    mode=st.sampled_from(["sum", "mean", "max"]),
)
def test_embedding_bag_property_per_bag_reduction(cuts, idx, mode):
    """Any bags (empty ones included) reduce as NumPy's per-bag sum, mean or max; an empty
    bag is zero."""
    offsets = np.array([0, *sorted(cuts)])
    idx = np.array(idx)
    y = ctorch.nn.functional.embedding_bag(
        ctorch.tensor(idx), ctorch.tensor(W), ctorch.tensor(offsets), mode=mode
    ).numpy()
    ends = [*offsets[1:], idx.size]
    for b, (start, end) in enumerate(zip(offsets, ends, strict=True)):
        rows = W[idx[start:end]]
        want = np.zeros(3) if rows.size == 0 else getattr(np, mode)(rows, axis=0)
        np.testing.assert_allclose(y[b], want, rtol=1e-12, atol=1e-12)


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


X2 = RNG.standard_normal((2, 3, 5, 6))
X3 = RNG.standard_normal((2, 2, 4, 6, 4))


def _pool_then_unpool(lib, nd, x, pool_kw, unpool_kw, output_size=None, module=False):
    """Max-pool with indices, unpool (functional or module), weighted-sum backward."""
    t = lib.tensor(x, requires_grad=True)
    y, i = getattr(lib.nn.functional, f"max_pool{nd}d")(t, return_indices=True, **pool_kw)
    if module:
        layer = getattr(lib.nn, f"MaxUnpool{nd}d")(**unpool_kw)
        u = layer(y, i, output_size=output_size)
        name = repr(layer)
    else:
        fn = getattr(lib.nn.functional, f"max_unpool{nd}d")
        u = fn(y, i, output_size=output_size, **unpool_kw)
        name = u.grad_fn.name()
    (u * lib.tensor(np.arange(u.numel()).reshape(u.shape) % 7 + 1.0)).sum().backward()
    return name, u.detach().numpy(), t.grad.numpy()


UNPOOL_CASES = {
    "1d": (1, X2[0], dict(kernel_size=2), dict(kernel_size=2), None, False),
    "1d_batched_output_size": (1, X2[:, :, 0], dict(kernel_size=2), dict(kernel_size=2), [7], True),
    "2d": (2, X2, dict(kernel_size=2), dict(kernel_size=2), None, False),
    "2d_overlapping": (2, X2, dict(kernel_size=3, stride=1), dict(kernel_size=3, stride=1), None, False),
    "2d_padding_unbatched": (
        2, X2[0], dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=3, stride=2, padding=1),
        X2[0].shape[-2:], True,
    ),
    "3d": (3, X3, dict(kernel_size=2), dict(kernel_size=2), None, False),
    "3d_output_size": (3, X3, dict(kernel_size=2), dict(kernel_size=(2, 2, 2)), (5, 7, 5), True),
}  # fmt: skip


@pytest.mark.parametrize("case", list(UNPOOL_CASES))
def test_max_unpool_matches_pytorch(real_torch, case):
    nd, x, pool_kw, unpool_kw, output_size, module = UNPOOL_CASES[case]
    (rn, ru, rg), (cn, cu, cg) = (
        _pool_then_unpool(lib, nd, x, pool_kw, unpool_kw, output_size, module)
        for lib in (real_torch, ctorch)
    )
    assert cn == rn
    np.testing.assert_array_equal(cu, ru)
    np.testing.assert_allclose(cg, rg, rtol=1e-12, atol=1e-12)


def _unpool_errors(lib):
    F = lib.nn.functional
    y, i = F.max_pool2d(lib.tensor(X2), 2, return_indices=True)
    y3, i3 = F.max_pool3d(lib.tensor(X3), 2, return_indices=True)
    y1, i1 = F.max_pool1d(lib.tensor(X2[:, :, 0]), 2, return_indices=True)
    # from their values: index checks read values (skipped while a lazy value is pending)
    bad, negative, bad1 = (t.numpy().copy() for t in (i, i, i1))
    bad[0, 1, 0, 1] = 30
    negative[1, 0, 1, 0] = -3
    bad1[1, 2, 1] = 6
    bad, negative, bad1 = (lib.tensor(t) for t in (bad, negative, bad1))
    return [
        lambda: F.max_unpool2d(y, i, 2, output_size=(6, 5)),
        lambda: F.max_unpool2d(y, i, 2, output_size=(5,)),
        lambda: F.max_unpool2d(y, i[..., :1], 2),
        lambda: F.max_unpool2d(y, i.int(), 2),
        lambda: F.max_unpool2d(y, bad, 2),
        lambda: F.max_unpool2d(y, negative, 2),
        lambda: F.max_unpool2d(y[0, 0], i[0, 0], 2),
        lambda: F.max_unpool2d(y[:, :0], i[:, :0], 2),
        lambda: F.max_unpool2d(y.long(), i, 2),
        lambda: F.max_unpool1d(y1[0, 0], i1[0, 0], 2),
        lambda: F.max_unpool1d(y1, bad1, 2),
        lambda: F.max_unpool3d(y3[0, 0], i3[0, 0], 2),
        lambda: F.max_unpool3d(y3, i3[..., :1], 2),
        lambda: F.max_unpool3d(y3, i3.int(), 2),
    ]


@pytest.mark.parametrize("k", range(len(_unpool_errors(ctorch))))
def test_max_unpool_errors(real_torch, k):
    with pytest.raises(Exception) as expected:
        _unpool_errors(real_torch)[k]()
    with pytest.raises(type(expected.value)) as got:
        _unpool_errors(ctorch)[k]()
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_with_indices_forms_match_pytorch(real_torch, nd):
    x = {1: X2[:, :, 0], 2: X2, 3: X3}[nd]
    results = []
    for lib in (real_torch, ctorch):
        F = lib.nn.functional
        t = lib.tensor(x)
        pooled = getattr(F, f"max_pool{nd}d_with_indices")(t, 2, return_indices=False)
        adaptive = getattr(F, f"adaptive_max_pool{nd}d_with_indices")(t, 3)
        results.append([a.numpy() for a in (*pooled, *adaptive)])
    for c, r in zip(*reversed(results), strict=True):
        np.testing.assert_array_equal(c, r)


LP_CASES = {
    "1d": (1, X2[:, :, 0], dict(norm_type=2, kernel_size=2)),
    "1d_ceil_unbatched": (1, X2[0, 0], dict(norm_type=3.0, kernel_size=3, stride=2, ceil_mode=True)),
    "2d": (2, X2, dict(norm_type=2, kernel_size=2)),
    "2d_p1_rect": (2, np.abs(X2), dict(norm_type=1.5, kernel_size=(2, 3), stride=(1, 2))),
    "2d_inf": (2, X2, dict(norm_type=float("inf"), kernel_size=2)),
    "2d_minus_inf": (2, X2, dict(norm_type=-float("inf"), kernel_size=3, stride=1)),
    "3d": (3, X3, dict(norm_type=2, kernel_size=2)),
    "3d_ceil": (3, X3, dict(norm_type=4, kernel_size=(2, 3, 2), stride=2, ceil_mode=True)),
}  # fmt: skip


@pytest.mark.parametrize("case", list(LP_CASES))
def test_lp_pool_matches_pytorch(real_torch, case):
    nd, x, kw = LP_CASES[case]
    results = []
    for lib in (real_torch, ctorch):
        layer = getattr(lib.nn, f"LPPool{nd}d")(**kw)
        t = lib.tensor(x, requires_grad=True)
        y = layer(t)
        y.sum().backward()
        f = getattr(lib.nn.functional, f"lp_pool{nd}d")(lib.tensor(x), **kw)
        results.append((repr(layer), y.detach().numpy(), t.grad.numpy(), f.numpy()))
    (rr, ry, rg, _), (cr, cy, cg, cf) = results
    assert cr == rr
    np.testing.assert_allclose(cy, ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cg, rg, rtol=1e-10, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(cf, ry, rtol=1e-12, atol=1e-12)


LAZY = {
    "LazyConv1d": ((4, 2), dict(stride=2, groups=2), 1),
    "LazyConv2d": ((4, 3), dict(padding=1, bias=False), 2),
    "LazyConv3d": ((2, 2), dict(), 3),
    "LazyConvTranspose1d": ((3, 2), dict(stride=2, output_padding=1), 1),
    "LazyConvTranspose2d": ((4, 3), dict(groups=2), 2),
    "LazyConvTranspose3d": ((2, 2), dict(), 3),
    "LazyBatchNorm1d": ((), dict(momentum=0.3), 1),
    "LazyBatchNorm2d": ((), dict(affine=False), 2),
    "LazyBatchNorm3d": ((), dict(), 3),
    "LazyInstanceNorm1d": ((), dict(), 1),
    "LazyInstanceNorm2d": ((), dict(track_running_stats=False, affine=True), 2),
    "LazyInstanceNorm3d": ((), dict(eps=1e-3), 3),
}
XL = RNG.standard_normal((2, 4, 5, 6, 5))


def _lazy_input(lib, nd, batched=True):
    x = XL[(slice(None), slice(None)) + (0,) * (3 - nd)]
    return lib.tensor(x if batched else x[0], dtype=lib.float64)


@pytest.mark.parametrize("name", list(LAZY))
def test_lazy_modules_match_pytorch(real_torch, name):
    args, kw, nd = LAZY[name]
    mods, first = [], []
    for lib in (real_torch, ctorch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            m = getattr(lib.nn, name)(*args, **kw, dtype=lib.float64)
        before = (repr(m), m.has_uninitialized_params())
        m(_lazy_input(lib, nd))  # infers the channels, initialises, becomes the eager class
        first.append(
            (
                before,
                type(m).__name__,
                repr(m),
                [(k, tuple(v.shape)) for k, v in m.state_dict().items()],
            )
        )
        mods.append(m)
    assert first[1] == first[0]
    rm, cm = mods
    with ctorch.no_grad():  # PyTorch's initialised weights and statistics into compat's module
        for k, v in rm.state_dict().items():
            cm.state_dict()[k].copy_(ctorch.tensor(v.numpy()))
    results = []
    for lib, m in ((real_torch, rm), (ctorch, cm)):
        x = _lazy_input(lib, nd).requires_grad_()
        y = m(x)
        (y * lib.tensor(np.arange(y.numel()).reshape(y.shape) % 5 + 1.0)).sum().backward()
        grads = [p.grad.numpy() for p in m.parameters()]
        results.append(
            (y.detach().numpy(), x.grad.numpy(), grads, [b.numpy() for b in m.buffers()])
        )
    (ry, rx, rg, rb), (cy, cx, cg, cb) = results
    np.testing.assert_allclose(cy, ry, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(cx, rx, rtol=1e-10, atol=1e-10)
    for c, r in zip(cg + cb, rg + rb, strict=True):
        np.testing.assert_allclose(c, r, rtol=1e-10, atol=1e-10)


def test_lazy_conv_initialisation_and_unbatched_input():
    """The first call runs Conv2d's initialisation with the inferred fan-in (uniform on
    ±1/sqrt(fan_in)); an unbatched input gives the channel count from dimension 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = ctorch.nn.LazyConv2d(64, 3)
    m(_lazy_input(ctorch, 2, batched=False).float())
    w = m.weight.detach().numpy()
    bound = 1 / np.sqrt(4 * 9)
    assert w.shape == (64, 4, 3, 3) and np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound


def _lazy_errors(lib):
    def call(name, *args, x, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            m = getattr(lib.nn, name)(*args, **kw)
        return m(x)

    return [
        lambda: call("LazyConv2d", 4, 3, x=lib.ones(1, 2, 3, 4, 5)),
        lambda: call("LazyConv1d", 4, 3, groups=2, x=lib.ones(1, 3, 5)),
        lambda: call("LazyConvTranspose3d", 4, 3, x=lib.ones(2, 3)),
        lambda: call("LazyBatchNorm2d", x=lib.ones(2, 3, 4)),
    ]


@pytest.mark.parametrize("k", range(len(_lazy_errors(ctorch))))
def test_lazy_errors(real_torch, k):
    with pytest.raises(Exception) as expected:
        _lazy_errors(real_torch)[k]()
    with pytest.raises(type(expected.value)) as got:
        _lazy_errors(ctorch)[k]()
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_of_an_empty_batch(real_torch, nd):
    """PyTorch's ``test_MaxUnpool_zero_batch_dim``: pooling then unpooling a batch of none,
    and the backward through both (compat's reshape to planes failed on ``-1``)."""
    res = []
    for lib in (ctorch, real_torch):
        pool = getattr(lib.nn, f"MaxPool{nd}d")(2, stride=2, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(2, stride=2)
        inp = lib.zeros(0, 10, *([10] * nd), requires_grad=True)
        out = unpool(*pool(inp))
        out.sum().backward()
        res.append((tuple(out.shape), tuple(inp.grad.shape), out.dtype == lib.float32))
    assert res[0] == res[1]
