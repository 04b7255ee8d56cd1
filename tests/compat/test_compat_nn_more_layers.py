"""compat's transposed/3-D convolutions, padding, interpolation, pixel shuffle, adaptive
pooling and channel/alpha dropout (functional and modules) against real PyTorch.

Forward values, dtypes and gradients of inputs and weights are compared on the same
numbers; modules are compared after copying compat's initial parameters into PyTorch's.
Dropout masks come from different generators, so those tests check structure (whole
channels dropped, PyTorch's scaling, the eval-mode identity) rather than equality.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from nn_more_helpers import compare, npv, same_error

import compat.torch as torch
import compat.torch.nn as nn
import compat.torch.nn.functional as F

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 4, 5, 6))
X3 = RNG.standard_normal((2, 4, 7))
X5 = RNG.standard_normal((1, 2, 3, 4, 5))


# --- transposed and 3-D convolution ---------------------------------------------------------

CONV_T = [
    (2, X4, (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1), True),
    (2, X4, (4, 3, 3, 2), dict(stride=(2, 1), padding=(0, 2), groups=2, dilation=(1, 2)), False),
    (2, X4, (4, 3, 3, 3), dict(padding=3), False),
    (2, X4[0], (4, 2, 2, 2), dict(stride=3, output_padding=(2, 0)), True),
    (1, X3, (4, 2, 3), dict(stride=3, output_padding=2, groups=2), True),
    (3, X5, (2, 2, 2, 3, 2), dict(stride=(1, 2, 2), padding=(1, 0, 1)), True),
]


@pytest.mark.parametrize("nd, x, w_shape, kw, bias", CONV_T)
def test_conv_transpose_matches_torch(real_torch, nd, x, w_shape, kw, bias):
    w = RNG.standard_normal(w_shape)
    b = RNG.standard_normal(w_shape[1] * kw.get("groups", 1))

    def fn(F, L, *ts):
        return getattr(F, f"conv_transpose{nd}d")(*ts, **kw)

    compare(real_torch, fn, (x, w, b) if bias else (x, w))


def test_conv3d_matches_torch(real_torch):
    w = RNG.standard_normal((4, 1, 2, 3, 2))
    b = RNG.standard_normal(4)
    compare(
        real_torch, lambda F, L, *t: F.conv3d(*t, stride=(1, 2, 1), padding=1, groups=2), (X5, w, b)
    )
    compare(
        real_torch,
        lambda F, L, *t: F.conv3d(*t, padding="same", dilation=2),
        (X5, w[:, :1].repeat(2, 1)),
    )
    compare(
        real_torch,
        lambda F, L, *t: F.conv3d(*t),
        (X5[0].astype(np.float32), w[:2].repeat(2, 1).astype(np.float32)),
    )


@pytest.mark.parametrize(
    "fn, arrays",
    [
        (
            lambda F, L, x, w: F.conv_transpose2d(x, w, output_padding=1),
            (X4, np.ones((4, 3, 3, 3))),
        ),
        (lambda F, L, x, w: F.conv_transpose2d(x, w), (X4, np.ones((3, 3, 3, 3)))),
        (lambda F, L, x, w: F.conv_transpose2d(x, w), (X4[0, 0], np.ones((4, 3, 3, 3)))),
        (
            lambda F, L, x, w, b: F.conv_transpose2d(x, w, b),
            (X4, np.ones((4, 3, 3, 3)), np.ones(4)),
        ),
        (lambda F, L, x, w: F.conv_transpose1d(x, w, stride=0), (X3, np.ones((4, 3, 3)))),
        (lambda F, L, x, w: F.conv3d(x, w), (X5, np.ones((2, 3, 1, 1, 1)))),
    ],
)
def test_conv_transpose_errors(real_torch, fn, arrays):
    same_error(real_torch, fn, arrays)


def _copy_params(real_torch, src, dst):
    with real_torch.no_grad():
        for (n, p), (n2, q) in zip(src.named_parameters(), dst.named_parameters()):
            assert n == n2
            q.copy_(real_torch.from_numpy(np.array(npv(p))))


MODULES = [
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), X4),
    ("ConvTranspose3d", (2, 3, (1, 2, 2)), dict(dilation=2), X5),
    ("Conv1d", (4, 2, 3), dict(padding=2, padding_mode="reflect"), X3),
    ("Conv2d", (4, 3, (3, 2)), dict(padding=(1, 2), padding_mode="replicate"), X4),
    ("Conv2d", (4, 3, 3), dict(padding="same", padding_mode="circular", dilation=2), X4),
    ("Conv3d", (2, 2, 3), dict(padding=1, padding_mode="circular"), X5),
]


@pytest.mark.parametrize("name, args, kw, x", MODULES, ids=[f"{m[0]}-{m[2]}" for m in MODULES])
def test_conv_modules_match_torch(real_torch, name, args, kw, x):
    torch.manual_seed(0)
    m = getattr(nn, name)(*args, **kw, dtype=torch.float64)
    mt = getattr(real_torch.nn, name)(*args, **kw, dtype=real_torch.float64)
    _copy_params(real_torch, m, mt)
    assert repr(m) == repr(mt)
    assert [tuple(p.shape) for p in m.parameters()] == [tuple(p.shape) for p in mt.parameters()]
    outs = []
    for mod, lib in ((m, torch), (mt, real_torch)):
        a = lib.tensor(x, requires_grad=True)
        y = mod(a)
        (y * y).sum().backward()
        outs.append([npv(y), npv(a.grad), *(npv(p.grad) for p in mod.parameters())])
    for c, t in zip(*outs):
        np.testing.assert_allclose(c, t, rtol=1e-9, atol=1e-10)


def test_conv_transpose_output_size(real_torch):
    torch.manual_seed(0)
    m = nn.ConvTranspose2d(4, 2, 3, stride=3, padding=1)
    mt = real_torch.nn.ConvTranspose2d(4, 2, 3, stride=3, padding=1)
    _copy_params(real_torch, m, mt)
    x = X4.astype(np.float32)
    for size in ([14, 17], [2, 4, 15, 16]):
        y = m(torch.tensor(x), output_size=size)
        yt = mt(real_torch.tensor(x), output_size=size)
        assert tuple(y.shape) == tuple(yt.shape)
        np.testing.assert_allclose(npv(y), npv(yt), rtol=1e-5, atol=1e-5)
    for mod, lib in ((m, torch), (mt, real_torch)):
        with pytest.raises(ValueError):
            mod(lib.tensor(x), output_size=[20, 20])
        with pytest.raises(ValueError):
            lib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


# --- padding ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize(
    "x, pad",
    [
        (X3[0], (0, 3)),
        (X4, (2, 1, 1, 3)),
        (X5, (1, 2, 0, 3, 2, 1)),
    ],
    ids=["1d-unbatched", "2d", "3d"],
)
def test_pad_modes_match_torch(real_torch, mode, x, pad):
    compare(real_torch, lambda F, L, a: F.pad(a, pad, mode=mode), (x,))


def test_pad_constant_value_crop_and_dtypes(real_torch):
    compare(real_torch, lambda F, L, a: F.pad(a, (-1, 2, 0, -2), value=3.5), (X4,))
    compare(
        real_torch, lambda F, L, a: F.pad(a, (1, 1, 1, 1, 1, 1, 1, 1)), (X4.astype(np.float32),)
    )
    for lib in (torch, real_torch):
        y = lib.nn.functional.pad(lib.arange(4).reshape(2, 2), (1, 0), value=7)
        assert str(y.dtype) == "torch.int64"
        assert npv(y).tolist() == [[7, 0, 1], [7, 2, 3]]


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda F, L, a: F.pad(a, (1, 2, 3)), X3),
        (lambda F, L, a: F.pad(a, (1,) * 10), X4),
        (lambda F, L, a: F.pad(a, (1, 1), mode="reflect"), X4),
        (lambda F, L, a: F.pad(a, (7, 1), mode="reflect"), X3),
        (lambda F, L, a: F.pad(a, (8, 1), mode="circular"), X3),
        (lambda F, L, a: F.pad(a, (1, 1), mode="reflect", value=2.0), X3),
        (lambda F, L, a: F.pad(a, (-9, 1)), X3),
        (lambda F, L, a: F.pad(a, (1, 1), mode="wrap"), X3),
    ],
)
def test_pad_errors(real_torch, fn, x):
    same_error(real_torch, fn, (x,))


PAD_MODULES = [
    ("ReflectionPad1d", (2,), X3),
    ("ReflectionPad2d", ((1, 0, 2, 1),), X4),
    ("ReplicationPad2d", (2,), X4),
    ("ReplicationPad3d", ((1, 0, 0, 1, 2, 0),), X5),
    ("ZeroPad2d", ((1, 2, 0, 1),), X4),
    ("ConstantPad2d", ((1, 0, 2, 0), 2.0), X4),
    ("ConstantPad3d", (1, 0.5), X5),
    ("CircularPad2d", ((1, 2, 2, 1),), X4),
]


@pytest.mark.parametrize("name, args, x", PAD_MODULES, ids=[m[0] for m in PAD_MODULES])
def test_padding_modules_match_torch(real_torch, name, args, x):
    compare(real_torch, lambda F, L, a: getattr(L.nn, name)(*args)(a), (x,))
    assert repr(getattr(nn, name)(*args)) == repr(getattr(real_torch.nn, name)(*args))


# --- interpolation and pixel shuffle --------------------------------------------------------

INTERP = [
    (X3, "nearest-exact", dict(scale_factor=1.7)),
    (X3, "linear", dict(scale_factor=2.3)),
    (X3, "area", dict(size=4)),
    (X4, "nearest", dict(scale_factor=(0.5, 2.5))),
    (X4, "nearest-exact", dict(scale_factor=1.7)),
    (X4, "bilinear", dict(size=(3, 13), align_corners=True)),
    (X4, "bicubic", dict(size=(7, 4))),
    (X4, "bicubic", dict(scale_factor=(0.5, 2.5), align_corners=True)),
    (X4, "area", dict(size=(3, 4))),
    (X4, "bilinear", dict(scale_factor=1.7, recompute_scale_factor=True)),
    (X5, "trilinear", dict(size=(5, 2, 7))),
    (X5, "area", dict(size=(2, 3, 3))),
]


@pytest.mark.parametrize("x, mode, kw", INTERP, ids=[f"{m[1]}-{m[0].ndim}d-{m[2]}" for m in INTERP])
def test_interpolate_matches_torch(real_torch, x, mode, kw):
    compare(real_torch, lambda F, L, a: F.interpolate(a, mode=mode, **kw), (x,))


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_float32(real_torch, mode):
    x = X4.astype(np.float32)
    compare(real_torch, lambda F, L, a: F.interpolate(a, scale_factor=1.3, mode=mode), (x,))


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda F, L, a: F.interpolate(a, size=3, scale_factor=2.0), X4),
        (lambda F, L, a: F.interpolate(a), X4),
        (lambda F, L, a: F.interpolate(a, size=(3, 4, 5)), X4),
        (lambda F, L, a: F.interpolate(a, size=3, align_corners=True), X4),
        (lambda F, L, a: F.interpolate(a, size=3, mode="bilinear"), X3),
        (lambda F, L, a: F.interpolate(a, size=3, mode="linear"), X4),
        (lambda F, L, a: F.interpolate(a, size=3, mode="cubic"), X4),
        (lambda F, L, a: F.interpolate(a, size=3, recompute_scale_factor=True), X4),
        (lambda F, L, a: F.pixel_shuffle(a, 3), X4),
        (lambda F, L, a: F.pixel_shuffle(a, 2), X4[0, 0]),
        (lambda F, L, a: F.pixel_unshuffle(a, 2), X4),
    ],
)
def test_interpolate_and_shuffle_errors(real_torch, fn, x):
    same_error(real_torch, fn, (x,))


def test_upsample_modules_and_pixel_shuffle(real_torch):
    for name, kw in [
        ("Upsample", dict(scale_factor=2, mode="bilinear")),
        ("Upsample", dict(size=(4, 9), mode="nearest")),
        ("UpsamplingNearest2d", dict(scale_factor=2)),
        ("UpsamplingBilinear2d", dict(size=(3, 8))),
    ]:
        compare(real_torch, lambda F, L, a: getattr(L.nn, name)(**kw)(a), (X4,))
        assert repr(getattr(nn, name)(**kw)) == repr(getattr(real_torch.nn, name)(**kw))
    compare(real_torch, lambda F, L, a: L.nn.PixelShuffle(2)(a), (X4.reshape(1, 8, 5, 6),))
    compare(real_torch, lambda F, L, a: F.pixel_shuffle(a, 2), (X4.reshape(2, 2, 4, 5, 3),))
    compare(
        real_torch, lambda F, L, a: L.nn.PixelUnshuffle(2)(a), (X4.reshape(2, 1, 4, 30)[..., :6],)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(real_torch, lambda F, L, a: F.upsample_bilinear(a, scale_factor=2), (X4,))
    assert repr(nn.PixelShuffle(3)) == repr(real_torch.nn.PixelShuffle(3))


# --- adaptive pooling -----------------------------------------------------------------------

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


# --- dropout --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, shape, channel_shape",
    [
        ("dropout1d", (8, 16, 5), (8, 16, 1)),
        ("dropout1d", (16, 5), (16, 1)),
        ("dropout2d", (8, 16, 3, 2), (8, 16, 1, 1)),
        ("dropout3d", (4, 16, 2, 2, 2), (4, 16, 1, 1, 1)),
        ("dropout3d", (16, 2, 2, 2), (16, 1, 1, 1)),
    ],
)
def test_channel_dropout_drops_whole_channels(name, shape, channel_shape):
    torch.manual_seed(0)
    x = torch.ones(shape, requires_grad=True)
    y = getattr(F, name)(x, p=0.25)
    vals = npv(y)
    flat = vals.reshape(int(np.prod([s for s, c in zip(shape, channel_shape) if c != 1])), -1)
    assert np.isclose(flat, 0.0).sum() + np.isclose(flat, 1.0 / 0.75).sum() == flat.size
    assert (flat.min(axis=1) == flat.max(axis=1)).all()  # a channel is kept or dropped whole
    assert 0 < (flat[:, 0] == 0).sum() < flat.shape[0]
    y.sum().backward()
    np.testing.assert_array_equal(npv(x.grad), vals)
    np.testing.assert_array_equal(npv(getattr(F, name)(x, p=0.25, training=False)), npv(x))


def test_alpha_dropout_statistics_and_values():
    torch.manual_seed(0)
    p = 0.2
    alpha = 1.7580993408473766
    a = 1.0 / np.sqrt((alpha**2 * p + 1) * (1 - p))
    x = torch.tensor(np.random.default_rng(0).standard_normal(20000), requires_grad=True)
    y = F.alpha_dropout(x, p, training=True)
    xs, ys = npv(x), npv(y)
    kept = np.isclose(ys, a * xs + alpha * a * p)
    dropped = np.isclose(ys, -alpha * a * (1 - p))
    assert (kept | dropped).all()
    assert abs(dropped.mean() - p) < 0.02
    assert abs(ys.mean()) < 0.05 and abs(ys.std() - 1) < 0.05  # self-normalising
    y.sum().backward()
    np.testing.assert_allclose(npv(x.grad), np.where(kept, a, 0.0))
    assert F.alpha_dropout(x, p) is x  # training=False by default
    z = npv(F.feature_alpha_dropout(torch.ones(6, 50, 4), 0.5, training=True))
    assert (z.min(axis=2) == z.max(axis=2)).all()


def test_dropout_modules_and_errors(real_torch):
    for name in ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]:
        m, mt = getattr(nn, name)(0.3), getattr(real_torch.nn, name)(0.3)
        assert repr(m) == repr(mt)
        m.eval()
        dims = {"Dropout1d": 3, "Dropout2d": 4}.get(name, 5)
        x = torch.ones((2, 3, 4, 5, 2)[:dims])
        assert m(x) is x
    for lib in (torch, real_torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5))
        with pytest.raises(ValueError):
            lib.nn.functional.alpha_dropout(lib.ones(3), 1.5)
        with pytest.warns(UserWarning, match="dropout2d"):
            lib.nn.functional.dropout2d(lib.ones(2, 3, 4))
    x = torch.ones(4, 8, 3) * 1.0
    h = x * 1.0
    assert F.dropout1d(h, 0.5, inplace=True) is h


# --- unfold / fold --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [dict(kernel_size=2), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(2, 3))],
)
def test_unfold_fold_match_torch(real_torch, kw):
    compare(real_torch, lambda F, L, a: F.unfold(a, **kw), (X4,))
    cols = npv(F.unfold(torch.tensor(X4), **kw))
    compare(real_torch, lambda F, L, a: F.fold(a, (5, 6), **kw), (cols,))
    compare(real_torch, lambda F, L, a: L.nn.Fold((5, 6), **kw)(a), (cols[0],))
    assert repr(nn.Unfold(**kw)) == repr(real_torch.nn.Unfold(**kw))


@pytest.mark.parametrize(
    "fn, x",
    [
        (lambda F, L, a: F.unfold(a, 2), X5),
        (lambda F, L, a: F.unfold(a, 7), X4),
        (lambda F, L, a: F.unfold(a, 2, stride=0), X4),
        (lambda F, L, a: F.fold(a, (5, 6), 2), X3),
        (lambda F, L, a: F.fold(a, (5, 6), 2), np.ones((2, 8, 7))),
    ],
)
def test_unfold_fold_errors(real_torch, fn, x):
    same_error(real_torch, fn, (x,))


def test_double_backward_matches_torch(real_torch):
    x, w = X4[:1, :2, :4, :4], RNG.standard_normal((2, 3, 3, 3))
    cases = [
        lambda F, a, b: F.conv_transpose2d(a, b, stride=2),
        lambda F, a, b: F.pad(a * b.sum(), (1, 2, 1, 1), mode="reflect"),
        lambda F, a, b: F.elu(F.interpolate(a, scale_factor=1.5, mode="bicubic") * b.sum()),
    ]
    for fn in cases:
        res = []
        for lib in (torch, real_torch):
            a, b = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
            y = fn(lib.nn.functional, a, b)
            (g,) = lib.autograd.grad((y * y).sum(), a, create_graph=True)
            (g * g).sum().backward()
            res.append((npv(g), npv(a.grad), npv(b.grad)))
        for c, t in zip(*res):
            np.testing.assert_allclose(c, t, rtol=1e-9, atol=1e-9)
