"""float16/bfloat16 activations, normalisations and resampling against PyTorch 2.13:
PyTorch's CPU kernels compute them in float32 and round once ("opmath"), and its
normalisations take float32 parameters with a reduced-precision input ("mixed dtype":
the result keeps the input's dtype) and refuse other dtype combinations in its words.
compat computed these in the reduced dtype itself (values an ulp or more apart in 10-70%
of the elements) and promoted mixed inputs to float32."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import error_of, import_real_torch

import compat.torch as ctorch

LOW = ["bfloat16", "float16"]

#: activation modules PyTorch computes in float32 and rounds once; the second group's
#: backward kernels too (GLU's backward rounds its intermediates: compared by value only)
OPMATH_OUT = ["LogSigmoid()", "Softplus()", "Softshrink(0.3)", "Hardswish()", "Mish()", "GLU()"]
OPMATH_BOTH = [
    "Hardsigmoid()",
    "Hardshrink(0.3)",
    "Hardtanh(-0.7, 0.9)",
    "ELU()",
    "CELU(0.7)",
    "SELU()",
    "LeakyReLU(0.1)",
    "ReLU6()",
    "Threshold(0.1, 20)",
    "PReLU()",
]


def _ulp(dtype: str) -> float:
    return 2.0**-7 if dtype == "bfloat16" else 2.0**-10


def _nearly_same(ours: np.ndarray, theirs: np.ndarray, dtype: str, share: float) -> None:
    """Equal but for at most ``share`` of the elements, each within one ulp (float32's
    exp/log/tanh differ from PyTorch's in the last place now and then: a float16/bfloat16
    rounding then goes the other way)."""
    np.testing.assert_allclose(ours, theirs, rtol=_ulp(dtype), atol=_ulp(dtype) * 2.0**-14)
    assert (ours != theirs).mean() <= share, (ours != theirs).mean()


def _data(seed: int, shape: tuple, scale: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) * scale
    v[..., 0] = 0.1  # at Threshold(0.1)'s threshold once rounded
    return v.astype(np.float32), rng.standard_normal(shape).astype(np.float32)


def _activation(lib, spec: str, dtype: str, v: np.ndarray, g: np.ndarray):
    d = getattr(lib, dtype)
    fn = eval(f"lib.nn.{spec}", {"lib": lib}).to(dtype=d)
    x = lib.tensor(v).to(d).requires_grad_()
    out = fn(x)
    out.backward(lib.tensor(g[..., : out.shape[-1]]).to(d))
    return str(out.dtype), out.detach().float().numpy(), x.grad.float().numpy()


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), scale=st.sampled_from([0.5, 3.0, 20.0]))
@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("spec", OPMATH_OUT + OPMATH_BOTH)
def test_activation_rounds_once_as_pytorch(spec, dtype, seed, scale):
    torch = import_real_torch()
    v, g = _data(seed, (3, 4, 64), scale)
    theirs = _activation(torch, spec, dtype, v, g)
    ours = _activation(ctorch, spec, dtype, v, g)
    assert ours[0] == theirs[0]
    _nearly_same(ours[1], theirs[1], dtype, 0.01)
    if spec in OPMATH_BOTH:
        _nearly_same(ours[2], theirs[2], dtype, 0.01)


def _norm(lib, name: str, dtype: str, pdtype: str, seed: int):
    rng = np.random.default_rng(seed)
    F = lib.nn.functional
    d, pd = getattr(lib, dtype), getattr(lib, pdtype)
    x = lib.tensor((rng.standard_normal((4, 6, 5, 8)) * 3 + 1).astype(np.float32)).to(d)
    x.requires_grad_()
    n = 8 if name == "layer_norm" else 6
    w = lib.tensor(rng.uniform(0.5, 2, n).astype(np.float32)).to(pd).requires_grad_()
    b = lib.tensor(rng.standard_normal(n).astype(np.float32)).to(pd).requires_grad_()
    rm, rv = lib.zeros(6, dtype=pd), lib.ones(6, dtype=pd)
    if name == "layer_norm":
        out = F.layer_norm(x, (8,), w, b)
    elif name == "group_norm":
        out = F.group_norm(x, 3, w, b)
    elif name == "batch_norm":
        out = F.batch_norm(x, rm, rv, w, b, training=True)
    elif name == "batch_norm_eval":
        out = F.batch_norm(x, rm + 0.5, rv * 2, w, b, training=False)
    else:
        out = F.instance_norm(x, weight=w, bias=b)
    g = lib.tensor(rng.standard_normal((4, 6, 5, 8)).astype(np.float32)).to(d)
    out.backward(g)
    return str(out.dtype), out, x.grad, w.grad, rm, rv


NORMS = ["layer_norm", "group_norm", "batch_norm", "batch_norm_eval", "instance_norm"]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", NORMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_mixed_dtype_norm_matches_pytorch(name, dtype, seed):
    # a float16/bfloat16 input with float32 parameters: the input's dtype out, computed in
    # float32 (the result and the input's gradient bit for bit)
    torch = import_real_torch()
    theirs = _norm(torch, name, dtype, "float32", seed)
    ours = _norm(ctorch, name, dtype, "float32", seed)
    assert ours[0] == theirs[0] == f"torch.{dtype}"
    assert str(ours[3].dtype) == str(theirs[3].dtype) == "torch.float32"
    f = lambda t: t.detach().float().numpy()
    _nearly_same(f(ours[1]), f(theirs[1]), dtype, 0.005)
    _nearly_same(f(ours[2]), f(theirs[2]), dtype, 0.005)
    # the weight's float32 gradient and the running statistics (not layer_norm's weight
    # gradient: PyTorch's mixed-dtype kernel sums it in reduced precision, 1-15% from the
    # float64 sum where compat's float32 sum is within 1e-6 of it)
    for k in (4, 5) if name == "layer_norm" else (3, 4, 5):
        np.testing.assert_allclose(f(ours[k]), f(theirs[k]), rtol=4 * _ulp(dtype), atol=1e-5)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm_eval"])
def test_reduced_precision_norm_rounds_once(name, dtype):
    # parameters of the input's dtype: normalised in float32, the result rounded once
    torch = import_real_torch()
    theirs = _norm(torch, name, dtype, dtype, 3)
    ours = _norm(ctorch, name, dtype, dtype, 3)
    f = lambda t: t.detach().float().numpy()
    assert ours[0] == theirs[0]
    assert (f(ours[1]) != f(theirs[1])).mean() < 0.005


PARAM_CASES = [
    ("float32", "bfloat16", "bfloat16"),
    ("bfloat16", "float64", "float64"),
    ("float16", "bfloat16", "bfloat16"),
    ("float64", "float32", "float32"),
    ("float32", "float64", "float64"),
    ("bfloat16", "float32", "bfloat16"),  # mixed, then a bias not float32
    ("bfloat16", "bfloat16", "float32"),  # not mixed: the kernel's own check
]


@pytest.mark.parametrize(("xd", "wd", "bd"), PARAM_CASES)
@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm", "instance_norm"])
def test_norm_parameter_dtype_errors(name, xd, wd, bd):
    def call(lib):
        F = lib.nn.functional
        x = lib.ones(2, 4, 3, dtype=getattr(lib, xd))
        w, b = lib.ones(4, dtype=getattr(lib, wd)), lib.ones(4, dtype=getattr(lib, bd))
        if name == "layer_norm":
            return F.layer_norm(x.transpose(1, 2), (4,), w, b)
        if name == "group_norm":
            return F.group_norm(x, 2, w, b)
        if name == "batch_norm":
            return F.batch_norm(x, None, None, w, b, training=True)
        return F.instance_norm(x, weight=w, bias=b)

    theirs = error_of(lambda: call(import_real_torch()))
    ours = error_of(lambda: call(ctorch))
    assert ours == theirs


def test_batch_norm_running_statistics_count_as_parameters():
    torch = import_real_torch()

    def run(lib, xd, sd, wd):
        F = lib.nn.functional
        x = lib.ones(2, 4, 3, dtype=getattr(lib, xd))
        rm, rv = lib.zeros(4, dtype=getattr(lib, sd)), lib.ones(4, dtype=getattr(lib, sd))
        w = None if wd is None else lib.ones(4, dtype=getattr(lib, wd))
        r = F.batch_norm(x, rm, rv, w, None, training=True)
        return str(r.dtype), str(rm.dtype)

    for args in [
        ("bfloat16", "float32", None),
        ("bfloat16", "bfloat16", "float32"),
        ("bfloat16", "float32", "bfloat16"),
        ("float64", "float32", None),
    ]:
        assert error_of(lambda a=args: run(ctorch, *a)) == error_of(lambda a=args: run(torch, *a))
        if error_of(lambda a=args: run(torch, *a)) == "no error":
            assert run(ctorch, *args) == run(torch, *args)


@pytest.mark.parametrize(
    ("size", "mode"),
    [((3, 4, 11, 7), "nearest"), ((3, 4, 30), "linear"), ((2, 3, 11, 7), "bilinear")],
)
def test_upsampling_gradient_accumulates_in_float32(size, mode):
    # test_nn.test_upsampling_bfloat16: the input's gradient sums 2-4 output gradients per
    # element; PyTorch sums in float32 and rounds once
    torch = import_real_torch()
    rng = np.random.default_rng(5)
    v = rng.standard_normal(size).astype(np.float32)
    outs = []
    for lib in (torch, ctorch):
        x = lib.tensor(v).to(lib.bfloat16).requires_grad_()
        out = lib.nn.Upsample(scale_factor=2, mode=mode)(x)
        g = rng.standard_normal(tuple(out.shape)).astype(np.float32)
        out.backward(lib.tensor(g).to(lib.bfloat16))
        outs.append((out.detach().float().numpy(), x.grad.float().numpy()))
        rng = np.random.default_rng(5)
        rng.standard_normal(size)
    (o1, g1), (o2, g2) = outs
    assert (o1 != o2).mean() < 0.01
    if mode == "nearest":  # (sums of exact values: no order effects)
        np.testing.assert_array_equal(g2, g1)
    np.testing.assert_allclose(g2, g1, rtol=2.0**-7, atol=2.0**-7)
