"""compat's activations (functional, in-place and modules: elu, celu, selu, softplus, the
hard*/soft* family, prelu, rrelu, glu, softmin, Softmax2d, ...) against real PyTorch; relu,
the softmax family's basics and the fused nodes are in test_compat_nn.py.

Inputs include every breakpoint (0, ±lambd, ±3, the clamp bounds), where the gradient is
PyTorch's one-sided choice; forward values, dtypes and input/parameter gradients are
compared, and PyTorch's errors for bad arguments.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import compare, npv, same_error

import compat.torch as torch
import compat.torch.nn as nn

POINTS = np.array([-30.0, -4.0, -3.0, -1.0, -0.5, -0.2, 0.0, 0.2, 0.5, 1.0, 3.0, 4.0, 25.0])

FUNCS = {
    "elu": lambda F, x: F.elu(x, alpha=0.7),
    "celu": lambda F, x: F.celu(x, alpha=1.5),
    "selu": lambda F, x: F.selu(x),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, beta=2.0, threshold=3.0),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_bounds": lambda F, x: F.hardtanh(x, -0.5, 3.0),
    "relu6": lambda F, x: F.relu6(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "mish": lambda F, x: F.mish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "softshrink": lambda F, x: F.softshrink(x, 0.5),
    "hardshrink": lambda F, x: F.hardshrink(x, 0.2),
    "threshold": lambda F, x: F.threshold(x, 0.2, -2.0),
    "rrelu_eval": lambda F, x: F.rrelu(x, 0.1, 0.3),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_activation_matches_torch(real_torch, name):
    fn = FUNCS[name]
    compare(real_torch, lambda F, L, x: fn(F, x), (POINTS,))


@pytest.mark.parametrize("name", ["elu", "hardswish", "mish"])
def test_activation_float32(real_torch, name):
    fn = FUNCS[name]
    compare(real_torch, lambda F, L, x: fn(F, x), (POINTS.astype(np.float32),))


def test_prelu_glu_softmin(real_torch):
    x = np.random.default_rng(1).standard_normal((2, 4, 3))
    x[0, 0, 0] = 0.0
    w = np.array([0.1, -0.2, 0.3, 0.25])
    compare(real_torch, lambda F, L, a, b: F.prelu(a, b), (x, w))
    compare(real_torch, lambda F, L, a, b: F.prelu(a, b), (x, w[:1]))
    compare(real_torch, lambda F, L, a, b: F.prelu(a, b), (x[0, :, 0], w[1:2]))
    compare(real_torch, lambda F, L, a: F.glu(a, 1), (x,))
    compare(real_torch, lambda F, L, a: F.glu(a, -2), (x,))
    compare(real_torch, lambda F, L, a: F.softmin(a, 1), (x,))
    compare(real_torch, lambda F, L, a: F.softmin(a, dim=0, dtype=L.float32), (x,))


@pytest.mark.parametrize(
    "fn, shape",
    [
        (lambda F, L, x: F.glu(x, 0), (3, 2)),
        (lambda F, L, x: F.glu(x, 2), (3, 2)),
        (lambda F, L, x: F.glu(x.sum()), (3, 2)),
        (lambda F, L, x: F.softshrink(x, -1.0), (3,)),
        (lambda F, L, x: F.prelu(x, L.ones(3)), (2, 4)),
        (lambda F, L, x: F.prelu(x, L.ones(2)), (2,)),
        (lambda F, L, x: F.hardtanh(x, 2.0, 1.0), (3,)),
        (lambda F, L, x: F.elu(x.long()), (3,)),
    ],
)
def test_activation_errors(real_torch, fn, shape):
    same_error(real_torch, fn, (np.ones(shape),))


MODULES = [
    ("ELU", {"alpha": 0.5}),
    ("CELU", {"alpha": 2.0}),
    ("SELU", {}),
    ("Hardtanh", {"min_val": -2.0, "max_val": 0.5}),
    ("ReLU6", {}),
    ("Hardswish", {}),
    ("Hardsigmoid", {}),
    ("Mish", {}),
    ("LogSigmoid", {}),
    ("Softsign", {}),
    ("Tanhshrink", {}),
    ("Softplus", {"beta": 0.5, "threshold": 5.0}),
    ("Softshrink", {"lambd": 0.3}),
    ("Hardshrink", {"lambd": 0.3}),
    ("Threshold", {"threshold": 0.1, "value": 7.0}),
    ("GLU", {"dim": 1}),
    ("Softmin", {"dim": 1}),
    ("Softmax2d", {}),
]


@pytest.mark.parametrize("name, kwargs", MODULES, ids=[m[0] for m in MODULES])
def test_activation_module_matches_torch(real_torch, name, kwargs):
    x = np.random.default_rng(2).standard_normal((2, 4, 3)) * 3
    compare(real_torch, lambda F, L, a: getattr(L.nn, name)(**kwargs)(a), (x,))
    assert repr(getattr(nn, name)(**kwargs)) == repr(getattr(real_torch.nn, name)(**kwargs))


def test_prelu_module_learns_per_channel_slope(real_torch):
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    grads = []
    for lib in (torch, real_torch):
        m = lib.nn.PReLU(3, init=0.1)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([0.1, -0.3, 0.5]))
        a = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        out = m(a)
        (out * out).sum().backward()
        grads.append((npv(out), npv(a.grad), npv(m.weight.grad)))
        assert [n for n, _ in m.named_parameters()] == ["weight"]
    for c, t in zip(*grads):
        np.testing.assert_allclose(c, t, rtol=1e-5, atol=1e-6)
    assert repr(nn.PReLU(3)) == repr(real_torch.nn.PReLU(3))


def test_inplace_activations_write_into_input(real_torch):
    x = np.array([-2.0, -0.5, 0.5, 2.0])
    for lib in (torch, real_torch):
        leaf = lib.tensor(x, requires_grad=True)
        h = leaf * 1.0
        out = lib.nn.functional.elu(h, inplace=True)
        assert out is h
        out.sum().backward()
        if lib is torch:
            ours = (npv(h), npv(leaf.grad))
        else:
            np.testing.assert_allclose(ours[0], npv(h))
            np.testing.assert_allclose(ours[1], npv(leaf.grad))
    h = torch.tensor(x)
    nn.Hardtanh(inplace=True)(h)
    assert npv(h).tolist() == [-1.0, -0.5, 0.5, 1.0]


def test_rrelu_training_draws_slopes_in_range():
    torch.manual_seed(0)
    x = -torch.ones(2000)
    m = nn.RReLU(0.1, 0.3)
    y = npv(m(x))
    assert (y <= -0.1).all() and (y >= -0.3).all() and y.std() > 0.03
    m.eval()
    np.testing.assert_allclose(npv(m(x)), -0.2)
    assert npv(m(torch.ones(3))).tolist() == [1.0, 1.0, 1.0]


def test_softmin_and_softmax2d_checks(real_torch):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torch.nn.functional.softmin(torch.ones(2, 3))
    assert any("Implicit dimension" in str(i.message) for i in w)
    for lib in (torch, real_torch):
        with pytest.raises(ValueError):
            lib.nn.Softmax2d()(lib.ones(2, 3))


def test_functional_exports_are_functions(real_torch):
    # a submodule named like a function (e.g. ``dropout``) must not shadow it
    names = torch.nn.functional.__all__
    assert all(callable(getattr(torch.nn.functional, n)) for n in names)
    assert all(hasattr(real_torch.nn.functional, n) for n in names)
    assert all(hasattr(real_torch.nn, n) for n in nn.__all__)
