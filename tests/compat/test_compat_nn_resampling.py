"""compat's padding, interpolation and upsampling, pixel (un)shuffle and fold/unfold
(functional and modules) against real PyTorch.

Forward values, dtypes and gradients of inputs (double backward too) are compared on the
same numbers through ``torch_oracle.compare``, with PyTorch's errors for bad arguments.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from torch_oracle import compare, npv, same_error

import compat.torch as torch
import compat.torch.nn as nn
import compat.torch.nn.functional as F

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 4, 5, 6))
X3 = RNG.standard_normal((2, 4, 7))
X5 = RNG.standard_normal((1, 2, 3, 4, 5))


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


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("size", [3, 4, 7])
def test_interpolate_uint8_nearest(real_torch, mode: str, size: int) -> None:
    x = np.array([[[1, 200, 3], [0, 255, 17]]], dtype=np.uint8)
    outs = [
        lib.nn.functional.interpolate(lib.tensor(x), size=size, mode=mode)
        for lib in (torch, real_torch)
    ]
    assert str(outs[0].dtype) == str(outs[1].dtype) == "torch.uint8"
    np.testing.assert_array_equal(outs[0].numpy(), outs[1].numpy())


@pytest.mark.parametrize(
    "call",
    [lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2), size=(4.0,)),
     lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=(4.0, 4.0)),
     lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2, dtype=lib.int32), scale_factor=2),
     lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2, dtype=lib.int64), scale_factor=2, mode="bicubic")],
)  # fmt: skip
def test_interpolate_errors(real_torch, call: Any) -> None:
    seen = []
    for lib in (torch, real_torch):
        with pytest.raises((TypeError, NotImplementedError)) as info:
            call(lib)
        seen.append((type(info.value).__name__, str(info.value).split(" not implemented")[-1]))
    assert seen[0] == seen[1]
