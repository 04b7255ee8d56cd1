"""Gradients at singular points and extreme inputs, compared with real PyTorch: ``pow`` at
a zero base, ``atan2`` at the origin, ``max``/``min``/``median``/``amax`` over NaN,
``softmax``/``log_softmax`` of huge logits. Each case runs on compat.torch and on
PyTorch (``real_torch`` fixture) and compares values and gradients (NaN, ±inf and the
sign of zero included)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import compat.torch as ctorch

NAN = math.nan


def _run(lib, f, *vals, dtype="float64"):
    xs = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in vals]
    y = f(lib, *xs)
    w = lib.arange(1, y.numel() + 1, dtype=y.dtype).reshape(y.shape)
    (y * w).sum().backward()
    grads = [None if x.grad is None else np.asarray(x.grad.numpy()) for x in xs]
    return np.asarray(y.detach().numpy()), grads


def _same(a, b, rtol=1e-6):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=0, equal_nan=True)


def _compare(real_torch, f, *vals, dtype="float64", rtol=1e-6):
    yc, gc = _run(ctorch, f, *vals, dtype=dtype)
    yt, gt = _run(real_torch, f, *vals, dtype=dtype)
    _same(yc, yt, rtol)
    assert len(gc) == len(gt)
    for a, b in zip(gc, gt):
        assert (a is None) == (b is None)
        if a is not None:
            _same(a, b, rtol)
    return gc


_EXPONENTS = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pow_at_zero_base(real_torch, dtype):
    n = len(_EXPONENTS)
    g = _compare(real_torch, lambda L, a, b: a**b, [0.0] * n, _EXPONENTS, dtype=dtype)
    assert g[1][0] == -np.inf  # d(0**b)/db at b = -2


def test_pow_zero_base_as_a_number(real_torch):
    _compare(real_torch, lambda L, b: 0.0**b, _EXPONENTS)
    _compare(real_torch, lambda L, b: L.pow(0.0, b), _EXPONENTS)


def test_pow_ordinary_and_negative_bases(real_torch):
    _compare(
        real_torch,
        lambda L, a, b: a**b,
        [0.5, 2.0, 3.0, -2.0, -2.0, -0.5],
        [2.0, -1.5, 0.0, 2.0, 0.5, 3.0],
    )
    _compare(real_torch, lambda L, a: a**2.5, [0.0, 1.0, 4.0])
    _compare(real_torch, lambda L, a: a**-1.5, [0.0, 1.0, 4.0])
    _compare(real_torch, lambda L, a: a**0.0, [0.0, -1.0, 4.0])


def test_pow_broadcasts_and_reduces_gradients(real_torch):
    _compare(real_torch, lambda L, a, b: a**b, [[0.0, 1.0, 2.0], [3.0, 0.0, 0.5]], [-1.0, 0.0, 2.0])
    _compare(real_torch, lambda L, a, b: L.pow(a, b), [0.0, 2.0], [[-1.0], [1.5]])


@pytest.mark.parametrize("exponent", ["tensor", 2.0, 3])
def test_pow_in_place_node_and_gradients(real_torch, exponent):
    """``x.pow_(e)`` names PyTorch's node for the exponent's kind (``PowBackward1`` for a
    tensor, ``PowBackward0`` for a number) and gives PyTorch's gradients."""
    got = {}
    for lib in (ctorch, real_torch):
        a = lib.tensor([0.5, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = a * 1.0
        y.pow_(b if exponent == "tensor" else exponent)
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        got[lib] = (
            y.grad_fn.name(),
            np.asarray(a.grad.numpy()),
            None if b.grad is None else np.asarray(b.grad.numpy()),
        )
    (nc, ac, bc), (nt, at, bt) = got[ctorch], got[real_torch]
    assert nc == nt
    _same(ac, at)
    assert (bc is None) == (bt is None)
    if bc is not None:
        _same(bc, bt)


def test_pow_second_derivative(real_torch):
    for lib in (ctorch, real_torch):
        x = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([1.5, 3.0], dtype=lib.float64, requires_grad=True)
        (gx,) = lib.autograd.grad((x**y).sum(), x, create_graph=True)
        hx, hy = lib.autograd.grad(gx.sum(), (x, y))
        if lib is ctorch:
            c = (hx.numpy(), hy.numpy())
        else:
            _same(c[0], hx.numpy())
            _same(c[1], hy.numpy())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_atan2_at_the_origin(real_torch, dtype):
    g = _compare(
        real_torch,
        lambda L, a, b: L.atan2(a, b),
        [0.0, 0.0, -0.0, 1.0, 0.0, 2.0],
        [0.0, -0.0, 0.0, 0.0, 1.0, -3.0],
        dtype=dtype,
    )
    assert g[0][0] == 0.0 and g[1][0] == 0.0


def test_atan2_tiny_arguments(real_torch):
    # x**2 + y**2 underflows to 0 -> zero gradients, as PyTorch (a subnormal sum is not
    # compared: XLA on the CPU flushes subnormals to zero, PyTorch keeps them)
    _compare(real_torch, lambda L, a, b: L.atan2(a, b), [1e-200, 3.0], [1e-200, 0.0])
    _compare(real_torch, lambda L, a, b: L.atan2(a, b), [1e-30], [1e-30], dtype="float32")


_ALL_NAN = [[NAN, NAN, NAN], [NAN, NAN, NAN]]
_SOME_NAN = [[1.0, NAN, 3.0], [NAN, 2.0, NAN]]
_TIES = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]]
_INF = [[1.0, math.inf, 2.0], [-math.inf, 0.0, 5.0]]


@pytest.mark.parametrize(
    "data", [_ALL_NAN, _SOME_NAN, _TIES, _INF], ids=["allnan", "somenan", "ties", "inf"]
)
@pytest.mark.parametrize(
    "red",
    [
        lambda L, x: x.max().reshape(1),
        lambda L, x: x.min().reshape(1),
        lambda L, x: L.max(x).reshape(1),
        lambda L, x: x.median().reshape(1),
        lambda L, x: x.nanmedian().reshape(1),
        lambda L, x: x.amax().reshape(1),
        lambda L, x: x.amin().reshape(1),
        lambda L, x: x.amax(dim=1),
        lambda L, x: x.amin(dim=0, keepdim=True),
        lambda L, x: x.amax(dim=(0, 1)).reshape(1),
        lambda L, x: x.max(dim=1).values,
        lambda L, x: x.min(dim=1).values,
        lambda L, x: x.median(dim=1).values,
        lambda L, x: x.max(dim=0, keepdim=True).values,
    ],
    ids=[
        "max",
        "min",
        "torch.max",
        "median",
        "nanmedian",
        "amax",
        "amin",
        "amax-dim",
        "amin-dim-keepdim",
        "amax-dims",
        "max-dim",
        "min-dim",
        "median-dim",
        "max-dim-keepdim",
    ],
)
def test_reductions_over_nan_inf_and_ties(real_torch, red, data):
    _compare(real_torch, red, data)


@pytest.mark.parametrize("data", [_ALL_NAN, _SOME_NAN, [[3.0, 1.0, 2.0, 2.0]]])
def test_indices_of_dim_reductions_with_nan(real_torch, data):
    for op in ("max", "min", "median", "nanmedian"):
        c = getattr(ctorch.tensor(data), op)(dim=1)
        t = getattr(real_torch.tensor(data), op)(dim=1)
        assert c.indices.tolist() == t.indices.tolist(), op
        _same(c.values.numpy(), t.values.numpy())


def test_median_of_ties_shares_the_gradient(real_torch):
    _compare(real_torch, lambda L, x: x.median().reshape(1), [1.0, 2.0, 2.0, 3.0])
    _compare(real_torch, lambda L, x: x.nanmedian().reshape(1), [1.0, 2.0, NAN, 2.0, 3.0, 5.0])


_BIG = [[1e4, 1e4 - 1, -1e4, 5e3], [3e4, -3e4, 0.0, 1.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "f",
    [
        lambda L, x: L.softmax(x, 1),
        lambda L, x: L.log_softmax(x, -1),
        lambda L, x: L.softmax(x, 0),
        lambda L, x: L.nn.functional.softmax(x, dim=1),
        lambda L, x: L.nn.functional.log_softmax(x, dim=1),
        lambda L, x: L.nn.functional.softmin(x, dim=1),
        lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([1, 0])).reshape(1),
        lambda L, x: L.logsumexp(x * 0 + L.tensor([1.0, 3.0, 0.0, 2.0], dtype=x.dtype), 1),
    ],
)
def test_softmax_family_of_huge_logits_stays_finite(real_torch, f, dtype):
    yc, gc = _run(ctorch, f, _BIG, dtype=dtype)
    assert np.isfinite(yc).all() or np.isneginf(yc).any()
    assert np.isfinite(gc[0]).all()
    _compare(real_torch, f, _BIG, dtype=dtype, rtol=1e-5)


_RELU_IN = [NAN, -0.0, 0.0, -2.0, 3.0, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize(
    "f",
    [
        lambda L, x: L.relu(x),
        lambda L, x: L.nn.functional.relu(x),
        lambda L, x: L.nn.ReLU()(x),
        lambda L, x: L.relu_(x * 1),  # (in place, on a non-leaf)
    ],
    ids=["torch", "functional", "module", "inplace"],
)
def test_relu_keeps_nan_and_negative_zero_and_passes_a_nan_input_s_gradient(real_torch, f, dtype):
    # threshold_backward: the cotangent passes where the result is not <= 0, NaN included
    gc = _compare(real_torch, f, _RELU_IN, dtype=dtype)
    assert gc[0][0] == 1.0
    y = f(ctorch, ctorch.tensor(_RELU_IN, dtype=getattr(ctorch, dtype)))
    assert np.signbit(y.float().numpy()).tolist() == [False, True] + [False] * 5


def test_relu_second_derivative_and_a_nan_cotangent(real_torch):
    def run(lib):
        x = lib.tensor([NAN, -1.0, 0.0, 2.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.relu(x).pow(2).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        y = lib.relu(x)
        (gn,) = lib.autograd.grad(y, x, lib.full_like(y, NAN))
        return [t.detach().numpy() for t in (g, gg, gn)]

    for a, b in zip(run(ctorch), run(real_torch)):
        _same(a, b)
