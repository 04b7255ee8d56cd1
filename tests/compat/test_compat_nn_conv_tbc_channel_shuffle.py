"""``nn.functional.conv_tbc``, ``nn.functional.native_channel_shuffle`` and
``nn.factory_kwargs`` against PyTorch 2.13 (values, gradients, errors)."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(0)
X, W, B = RNG.normal(size=(7, 2, 3)), RNG.normal(size=(3, 3, 4)), RNG.normal(size=4)


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc(pad, real_torch):
    results = []
    for lib in (real_torch, ctorch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
        y = lib.nn.functional.conv_tbc(x, w, b, pad)
        grads = lib.autograd.grad(
            (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum(), (x, w, b)
        )
        results.append([y.detach().numpy(), *(g.numpy() for g in grads)])
    for c, t in zip(results[1], results[0]):
        assert c.shape == t.shape
        np.testing.assert_allclose(c, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "shapes",
    [
        ((7, 2), (3, 3, 4), (4,)),
        ((7, 2, 3), (3, 3), (4,)),
        ((7, 2, 3), (3, 3, 4), (4, 1)),
        ((7, 2, 3), (3, 2, 4), (4,)),
        ((7, 2, 3), (3, 3, 4), (5,)),
    ],
)
def test_conv_tbc_errors(shapes, real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        with pytest.raises(RuntimeError) as e:
            lib.nn.functional.conv_tbc(*(lib.ones(*s) for s in shapes))
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[0] == msgs[1]


def test_native_channel_shuffle(real_torch):
    x = RNG.normal(size=(2, 6, 3, 2))
    outs = []
    for lib in (real_torch, ctorch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.native_channel_shuffle(t, 3)
        outs.append((y.detach().numpy(), y.requires_grad))
        with pytest.raises(
            RuntimeError, match="derivative for aten::native_channel_shuffle is not implemented"
        ):
            y.sum().backward()
        with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
            lib.nn.functional.native_channel_shuffle(t, 4)
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    assert outs[1][1] == outs[0][1]


def test_factory_kwargs(real_torch):
    for lib in (real_torch, ctorch):
        fk = lib.nn.factory_kwargs
        assert fk(None) == {}
        got = fk({"dtype": lib.float64, "factory_kwargs": {"device": "cpu"}})
        assert got == {"dtype": lib.float64, "device": "cpu"}
        assert lib.empty(2, **got).dtype == lib.float64
        with pytest.raises(TypeError, match=r"unexpected kwargs \{'foo'\}"):
            fk({"foo": 1, "dtype": lib.float32})
        with pytest.raises(
            TypeError, match="dtype specified twice, in \\*\\*kwargs and in factory_kwargs"
        ):
            fk({"dtype": lib.float32, "factory_kwargs": {"dtype": lib.float64}})
