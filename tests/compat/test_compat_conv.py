"""compat's convolutions against real PyTorch on the same numbers: conv1d/conv2d and
nn.Conv1d/Conv2d, the transposed and 3-D ones, and the modules' padding modes.

Forward values, ``.backward()`` gradients of input, weight and bias, double backward
(``create_graph=True``), batched gradients, initialisation, ``repr`` and PyTorch's
errors. The ``real_torch`` fixture (``conftest.py``) skips without PyTorch unless
``COMPAT_REQUIRE_TORCH=1``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_oracle import compare, npv, same_error

import compat.torch as torch
import compat.torch.nn as nn
import compat.torch.nn.functional as F

# PyTorch's performance note about its own 'same' padding copy (compat makes no copy)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")

TOL = {np.float64: dict(rtol=1e-10, atol=1e-10), np.float32: dict(rtol=2e-4, atol=2e-5)}


def _pair(real_torch, arrays, requires_grad=True):
    ours = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    theirs = [real_torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    return ours, theirs


# (nd, input shape, weight shape, kwargs)
CASES = [
    (1, (2, 3, 9), (4, 3, 3), {}),
    (1, (2, 4, 10), (6, 2, 3), dict(stride=2, padding=1, dilation=2, groups=2)),
    (1, (3, 9), (2, 3, 4), dict(padding="same")),  # unbatched, even kernel
    (1, (2, 2, 8), (3, 2, 2), dict(padding="valid", stride=(3,))),
    (2, (2, 3, 7, 6), (4, 3, 3, 2), dict(stride=(2, 1), padding=(1, 0))),
    (2, (1, 4, 6, 7), (4, 1, 3, 3), dict(padding="same", dilation=(2, 1), groups=4)),
    (2, (3, 8, 8), (2, 3, 2, 2), dict(stride=2, padding=[1])),  # unbatched
    (2, (2, 6, 9, 5), (6, 2, 3, 2), dict(stride=(1, 2), dilation=2, padding=(2, 1), groups=3)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_functional_forward_and_backward_vs_torch(real_torch, case, bias, dtype):
    nd, xs, ws, kw = case
    rng = np.random.default_rng(len(xs) + len(kw))
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if bias:
        arrays.append(rng.standard_normal(ws[0]))
    arrays = [a.astype(dtype) for a in arrays]
    ours, theirs = _pair(real_torch, arrays)
    f_ours = getattr(F, f"conv{nd}d")
    f_theirs = getattr(real_torch.nn.functional, f"conv{nd}d")
    y, yt = f_ours(*ours, **kw), f_theirs(*theirs, **kw)
    assert tuple(y.shape) == tuple(yt.shape) and str(y.dtype) == str(yt.dtype)
    np.testing.assert_allclose(npv(y), npv(yt), **TOL[dtype])
    ct = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (y * torch.tensor(ct)).sum().backward()
    (yt * real_torch.tensor(ct)).sum().backward()
    for a, b in zip(ours, theirs):
        assert a.grad.dtype == a.dtype
        np.testing.assert_allclose(npv(a.grad), npv(b.grad), **TOL[dtype])


def test_grad_fn_name_and_one_node(real_torch):
    x = torch.randn(2, 3, 5, requires_grad=True)
    w = torch.randn(4, 3, 2, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    y = F.conv1d(x, w, b)
    yt = real_torch.nn.functional.conv1d(
        real_torch.randn(2, 3, 5, requires_grad=True), real_torch.randn(4, 3, 2), None
    )
    assert y.grad_fn.name() == yt.grad_fn.name() == "ConvolutionBackward0"
    assert len(y.grad_fn.next_functions) == 3  # input, weight and bias in one node


@pytest.mark.parametrize("nd", [1, 2])
def test_double_backward_vs_torch(real_torch, nd):
    rng = np.random.default_rng(nd)
    xs, ws = ((2, 4, 7), (4, 2, 3)) if nd == 1 else ((2, 2, 5, 6), (3, 2, 2, 3))
    kw = dict(stride=2, padding=1, groups=2) if nd == 1 else dict(dilation=(1, 2), padding=1)
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])]
    results = []
    for lib, tensors in zip((torch, real_torch), _pair(real_torch, arrays)):
        x, w, b = tensors
        conv = getattr(lib.nn.functional, f"conv{nd}d")
        loss = lib.tanh(conv(x, w, b, **kw)).sum()
        gx, gw = lib.autograd.grad(loss, (x, w), create_graph=True)
        assert gx.requires_grad and gw.requires_grad
        (gx * gx).sum().add((gw * w).sum()).backward()
        results.append([npv(t) for t in (gx, gw, x.grad, w.grad, b.grad)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_batched_grads_vs_torch(real_torch):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((2, 4, 6, 5)), rng.standard_normal((4, 2, 3, 2))]
    kw = dict(stride=(2, 1), padding=1, groups=2)
    out_shape = (2, 4, 3, 6)
    v = rng.standard_normal((3, *out_shape))
    results = []
    for lib, (x, w) in zip((torch, real_torch), _pair(real_torch, arrays)):
        y = lib.nn.functional.conv2d(x, w, **kw)
        assert tuple(y.shape) == out_shape
        grads = lib.autograd.grad(y, (x, w), lib.tensor(v), is_grads_batched=True)
        results.append([npv(g) for g in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def _to_torch(real_torch, module):
    return {k: real_torch.from_numpy(v.numpy().copy()) for k, v in module.state_dict().items()}


@pytest.mark.parametrize(
    "cls,args,kw,xs",
    [
        ("Conv1d", (3, 4, 3), {}, (2, 3, 10)),
        ("Conv1d", (4, 6, 2), dict(stride=2, padding="valid", groups=2, bias=False), (9, 4, 7)),
        ("Conv2d", (3, 8, 3), dict(stride=2, padding=1), (2, 3, 9, 8)),
        ("Conv2d", (4, 4, (3, 2)), dict(padding="same", dilation=(1, 2), groups=4), (4, 6, 7)),
    ],
)
def test_modules_vs_torch(real_torch, cls, args, kw, xs):
    torch.manual_seed(0)
    ours = getattr(nn, cls)(*args, **kw)
    theirs = getattr(real_torch.nn, cls)(*args, **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name in ("kernel_size", "stride", "padding", "dilation", "groups", "padding_mode"):
        assert getattr(ours, name) == getattr(theirs, name), name
    theirs.load_state_dict(_to_torch(real_torch, ours))
    x = np.random.default_rng(1).standard_normal(xs).astype(np.float32)
    xo, xt = torch.tensor(x, requires_grad=True), real_torch.tensor(x, requires_grad=True)
    y, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(npv(y), npv(yt), rtol=1e-5, atol=1e-6)
    (y * y).mean().backward()
    (yt * yt).mean().backward()
    np.testing.assert_allclose(npv(xo.grad), npv(xt.grad), rtol=1e-4, atol=1e-6)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(npv(p.grad), npv(q.grad), rtol=1e-4, atol=1e-6, err_msg=n)


def test_small_conv_net_trains_like_torch(real_torch):
    """A conv → relu → flatten → linear model: same loss and one SGD step as PyTorch."""
    torch.manual_seed(3)

    def build(lib):
        return lib.nn.Sequential(
            lib.nn.Conv2d(1, 4, 3, padding=1),
            lib.nn.ReLU(),
            lib.nn.Conv2d(4, 4, 3, stride=2, groups=2),
            lib.nn.Flatten(),
            lib.nn.Linear(4 * 3 * 3, 3),
        )

    ours, theirs = build(torch), build(real_torch)
    theirs.load_state_dict(_to_torch(real_torch, ours))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 1, 8, 8)).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0])
    losses = []
    for lib, model in ((torch, ours), (real_torch, theirs)):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
    np.testing.assert_allclose(losses[:2], losses[2:], rtol=1e-5)


@pytest.mark.parametrize(
    "cls,args,fan_in",
    [
        ("Conv1d", (16, 32, 5), 80),
        ("Conv2d", (8, 64, 3), 72),
        ("Conv2d", (8, 16, 3, 1, 0, 1, 4), 18),
    ],
)
def test_init_bounds_and_statistics(real_torch, cls, args, fan_in):
    torch.manual_seed(0)
    m = getattr(nn, cls)(*args)
    t = getattr(real_torch.nn, cls)(*args)
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) and the bias rule agree
    for ours, theirs in ((m.weight, t.weight), (m.bias, t.bias)):
        assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype == torch.float32
        assert np.abs(npv(ours)).max() <= bound and np.abs(npv(theirs)).max() <= bound
    w = npv(m.weight).ravel().astype(np.float64)
    n = w.size
    assert np.abs(w).max() > 0.95 * bound
    # uniform on [-b, b]: mean 0 and variance b²/3, within 5 standard errors
    assert abs(w.mean()) < 5 * bound / math.sqrt(3 * n)
    assert abs(np.mean(w * w) - bound**2 / 3) < 5 * math.sqrt(4 / 45) * bound**2 / math.sqrt(n)
    # the bias is drawn on the same bound
    assert np.abs(npv(m.bias)).max() > 0.5 * bound


def test_module_repr_variants_and_dtype(real_torch):
    for cls, args, kw in [
        ("Conv2d", (4, 4, 3), dict(stride=2, padding=1, groups=2, bias=False, dilation=(1, 2))),
        ("Conv1d", (4, 4, 3), dict(padding="same")),
        ("Conv1d", (4, 4, 3), dict(padding="valid")),
        ("Conv1d", (4, 4, 3), dict(padding=0, dilation=1)),
        ("Conv2d", (2, 3, (1, 2)), {}),
    ]:
        ours, theirs = getattr(nn, cls)(*args, **kw), getattr(real_torch.nn, cls)(*args, **kw)
        assert repr(ours) == repr(theirs)
    m = nn.Conv1d(2, 3, 2, dtype=torch.float64)
    assert m.weight.dtype == torch.float64 and m.bias.dtype == torch.float64
    assert m(torch.ones(1, 2, 4, dtype=torch.float64)).dtype == torch.float64


def _errors(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # compared across libraries
        return type(e), str(e).splitlines()[0]
    return None, None


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 2, 3, 3)),
        lambda t: t.nn.functional.conv2d(t.zeros(3, 8, 8), t.zeros(4, 2, 3, 3)),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), groups=2),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 4, 8, 8), t.zeros(3, 2, 3, 3), groups=2),
        lambda t: t.nn.functional.conv2d(t.zeros(8, 8), t.zeros(4, 3, 3, 3)),
        lambda t: t.nn.functional.conv1d(t.zeros(2, 3, 8, 1), t.zeros(4, 3, 3)),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 9, 9)),
        lambda t: t.nn.functional.conv1d(t.zeros(2, 3, 4), t.zeros(4, 3, 3), dilation=2),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), groups=0),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), stride=0),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), dilation=0),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), padding=-1),
        lambda t: t.nn.functional.conv2d(
            t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), stride=2, padding="same"
        ),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), padding="foo"),
        lambda t: t.nn.functional.conv2d(
            t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), stride=(1, 2, 3)
        ),
        lambda t: t.nn.functional.conv1d(t.zeros(2, 3, 8), t.zeros(4, 3, 3), padding=(1, 2)),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), t.zeros(3)),
        lambda t: t.nn.functional.conv2d(
            t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3), t.zeros(4, dtype=t.float64)
        ),
        lambda t: t.nn.functional.conv2d(t.zeros(2, 3, 8, 8), t.zeros(4, 3, 3, 3, dtype=t.float64)),
        lambda t: t.nn.Conv2d(3, 4, 3, groups=2),
        lambda t: t.nn.Conv2d(4, 3, 3, groups=2),
        lambda t: t.nn.Conv2d(4, 4, 3, groups=0),
        lambda t: t.nn.Conv2d(4, 4, 3, stride=2, padding="same"),
    ],
)
def test_errors_match_torch(real_torch, fn):
    ours, theirs = _errors(torch, fn), _errors(real_torch, fn)
    assert theirs[0] is not None and ours[0] is theirs[0]
    # PyTorch's wording; a mismatched weight dtype leaves out its MKLDNN afterthought
    mkldnn = theirs[1].startswith(ours[1]) and "MKLDNN" in theirs[1]
    assert ours[1] == theirs[1] or mkldnn, (ours[1], theirs[1])


def test_other_errors(real_torch):
    for lib in (torch, real_torch):
        with pytest.raises(RuntimeError):  # PyTorch's wording depends on its CPU kernel
            lib.nn.functional.conv2d(
                lib.zeros(1, 3, 4, 4, dtype=lib.float64), lib.zeros(2, 3, 3, 3)
            )
        with pytest.raises(ValueError, match="Invalid padding string 'foo', should be one of"):
            lib.nn.Conv1d(2, 2, 3, padding="foo")
        with pytest.raises(ValueError, match="padding_mode must be one of"):
            lib.nn.Conv1d(2, 2, 3, padding_mode="foo")
        with pytest.raises(TypeError):
            lib.nn.functional.conv2d(lib.zeros(1, 3, 4, 4), 3.0)
    # the non-zeros padding modes are supported (values: test_conv_modules_match_torch)
    assert nn.Conv2d(3, 4, 3, padding_mode="reflect").padding_mode == "reflect"


def test_integer_convolution_vs_torch(real_torch):
    rng = np.random.default_rng(0)
    x, w = rng.integers(-3, 4, (2, 3, 7)), rng.integers(-3, 4, (4, 3, 2))
    ours = F.conv1d(torch.tensor(x), torch.tensor(w), stride=2, padding=1)
    theirs = real_torch.nn.functional.conv1d(
        real_torch.tensor(x), real_torch.tensor(w), stride=2, padding=1
    )
    assert ours.dtype == torch.int64
    np.testing.assert_array_equal(npv(ours), npv(theirs))


# ---------------------------------------------------------------------------
# transposed and 3-D convolution, padding modes (torch_oracle.compare)
# ---------------------------------------------------------------------------

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 4, 5, 6))
X3 = RNG.standard_normal((2, 4, 7))
X5 = RNG.standard_normal((1, 2, 3, 4, 5))

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
