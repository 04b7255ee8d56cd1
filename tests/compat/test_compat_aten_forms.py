"""``torch.X`` forms PyTorch keeps beside ``nn.functional`` and ``Tensor`` (ATen's
signatures: ``torch.batch_norm``'s order, ``torch.dropout``'s required ``train``, the
losses' integer ``reduction``, ``torch.embedding``'s weight first) and the functions of
their own (windows, ``unravel_index``, ``block_diag``, ``combinations``, the trapezoid
rules, ``histogram``, ``vander``): values, dtypes and gradients against PyTorch 2.13, and
the errors' types and messages."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(0)


def _a(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape)


X3 = _a(2, 3, 8)
X4 = _a(2, 3, 6, 6)
X5 = _a(1, 2, 4, 4, 4)
W1, W2, W3 = _a(4, 3, 3), _a(4, 3, 3, 3), _a(2, 2, 2, 2, 2)
B4 = _a(4)
TGT = _a(2, 3).clip(0.05, None)


class _Stat(np.ndarray):
    """A running statistic: a tensor that does not require grad."""

    def __new__(cls, a):
        return np.asarray(a).view(cls)


#: a +-1 target (PyTorch's hinge and cosine losses leave it out of the graph: no grad)
T2 = _Stat(np.array([1.0, -1.0, 1.0]))

#: (name, args: arrays become tensors requiring grad where floating, others pass)
CASES = [
    ("conv1d", (X3, W1, B4, 1, 1)),
    ("conv2d", (X4, W2, None, 2, 0, 1, 1)),
    ("conv3d", (X5, W3)),
    ("conv_transpose1d", (X3, _a(3, 2, 3), None, 2, 1, 1)),
    ("conv_transpose2d", (X4, _a(3, 2, 2, 2), _a(2), 1, 0, 0, 1, 2)),
    ("conv_transpose3d", (X5, _a(2, 1, 2, 2, 2))),
    ("max_pool1d", (X3, 2)),
    ("max_pool1d_with_indices", (X3, 3, 2, 1)),
    ("max_pool2d", (X4, 2, [], 0, 1, True)),
    ("max_pool3d", (X5, 2)),
    ("avg_pool1d", (X3, 3, 2, 1, False, False)),
    ("adaptive_avg_pool1d", (X3, 3)),
    ("adaptive_max_pool1d", (X3, 3)),
    ("dropout", (X3, 0.5, False)),
    ("alpha_dropout", (X3, 0.5, False)),
    ("feature_alpha_dropout", (X4, 0.5, False)),
    ("layer_norm", (X3, [8], _a(8), _a(8), 1e-5, True)),
    ("group_norm", (X4, 3, _a(3), _a(3))),
    (
        "batch_norm",
        (X4, _a(3), _a(3), _Stat(np.zeros(3)), _Stat(np.ones(3)), True, 0.1, 1e-5, False),
    ),
    ("batch_norm", (X4, None, None, _Stat(_a(3)), _Stat(_a(3, lo=0.5)), False, 0.1, 1e-5, True)),
    ("instance_norm", (X4, _a(3), _a(3), None, None, True, 0.1, 1e-5, False)),
    ("rms_norm", (X3, [8], _a(8))),
    ("embedding", (_a(5, 3), np.array([[0, 4], [2, 2]]))),
    ("embedding", (_a(5, 3), np.array([[0, 4], [2, 2]]), 2)),
    ("pixel_shuffle", (_a(1, 8, 2, 3), 2)),
    ("pixel_unshuffle", (_a(1, 2, 4, 6), 2)),
    ("native_channel_shuffle", (_Stat(X4), 3)),  # (PyTorch has no derivative for it)
    ("prelu", (X4, _a(3))),
    ("selu", (X3,)),
    ("celu", (X3, 0.7)),
    ("rrelu", (X3, 0.1, 0.3, False)),
    ("threshold", (X3, 0.1, -2.0)),
    ("hardshrink", (X3, 0.3)),
    ("bilinear", (_a(4, 3), _a(4, 2), _a(5, 3, 2), _a(5))),
    ("kl_div", (_a(2, 3), TGT)),
    ("kl_div", (_a(2, 3), np.log(TGT), 2)),
    ("kl_div", (_a(2, 3), TGT, 0)),
    ("kl_div", (_a(2, 3), TGT, 5)),
    ("kl_div", (_a(2, 3), -TGT, 2)),  # a negative target: NaN, as xlogy's
    ("poisson_nll_loss", (_a(2, 3), TGT, True, False, 1e-8, 1)),
    ("poisson_nll_loss", (TGT, TGT, False, True, 1e-8, 2)),
    ("margin_ranking_loss", (_a(3), _a(3), T2, 0.1)),
    ("hinge_embedding_loss", (_a(3), T2, 0.5, 2)),
    ("cosine_embedding_loss", (_a(3, 4), _a(3, 4), T2, 0.1, 0)),
    ("cosine_embedding_loss", (_a(3, 4), _a(3, 4), T2, 0.1, 1)),
    ("triplet_margin_loss", (_a(3, 4), _a(3, 4), _a(3, 4), 1.0, 2.0, 1e-6, False, 2)),
    ("triplet_margin_loss", (_a(3, 4), _a(3, 4), _a(3, 4), 1.0, 2.0, 1e-6, True)),
    ("binary_cross_entropy_with_logits", (_a(2, 3), TGT.clip(0, 1), None, _Stat(_a(3, lo=0.5)))),
    ("binary_cross_entropy_with_logits", (_a(2, 3), TGT.clip(0, 1), None, None, 1)),
    ("matrix_power", (_a(3, 3), 3)),
    ("matrix_power", (_a(2, 3, 3), -2)),
]


def _tensors(lib, args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            t = lib.tensor(np.asarray(a))
            if a.dtype.kind == "f" and not isinstance(a, _Stat):
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(a)
    return out


def _flat(res):
    return list(res) if isinstance(res, tuple) else [res]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_form_matches_pytorch(real_torch, name, args):
    outs, grads = {}, {}
    for lib in (ctorch, real_torch):
        ts = _tensors(lib, args)
        res = _flat(getattr(lib, name)(*ts))
        outs[lib] = [r.detach().numpy() for r in res]
        total = sum((r * r).sum() for r in res if r.dtype.is_floating_point)
        if total.requires_grad:
            total.backward()
        grads[lib] = [t.grad.numpy() if t.grad is not None else None for t in ts
                      if isinstance(t, lib.Tensor)]  # fmt: skip
    for c, t in zip(outs[ctorch], outs[real_torch]):
        assert c.dtype == t.dtype and c.shape == t.shape
        np.testing.assert_allclose(c, t, rtol=1e-5, atol=1e-6, equal_nan=True)
    for c, t in zip(grads[ctorch], grads[real_torch]):
        assert (c is None) == (t is None)
        if c is not None:
            np.testing.assert_allclose(c, t, rtol=1e-4, atol=1e-6, equal_nan=True)


FUNCTIONS = [
    ("hann_window", (5,), {}),
    ("hann_window", (6, False), {"dtype": "float64"}),
    ("hann_window", (1,), {}),
    ("hann_window", (0,), {}),
    ("hamming_window", (7, True, 0.5, 0.4), {}),
    ("hamming_window", (4,), {}),
    ("blackman_window", (8, False), {}),
    ("bartlett_window", (5,), {}),
    ("bartlett_window", (6, False), {}),
    ("kaiser_window", (9,), {}),
    ("kaiser_window", (6, False, 5.0), {}),
    ("unravel_index", (np.array([5, 11, -1, 12, 0]), (3, 4)), {}),
    ("unravel_index", (np.array([[7, 3], [1, 0]]), 5), {}),
    ("unravel_index", (np.array(7), (2, 2, 2)), {}),
    ("block_diag", (np.ones((2, 2)), np.array(3.0), np.array([1, 2])), {}),
    ("block_diag", (np.ones((2, 3), np.int32), np.zeros((0, 2))), {}),
    ("block_diag", (), {}),
    ("combinations", (np.array([1.0, 2.0, 3.0, 4.0]),), {}),
    ("combinations", (np.array([1, 2, 3]), 3, True), {}),
    ("combinations", (np.array([1, 2, 3]), 0), {}),
    ("combinations", (np.array([1, 2, 3]), 4), {}),
    ("trapezoid", (np.array([1.0, 2.0, 4.0]),), {}),
    ("trapezoid", (np.array([1, 2, 4]),), {}),
    ("trapezoid", (_a(3, 4), np.array([0.0, 1.0, 3.0, 4.5])), {}),
    ("trapezoid", (_a(3, 4),), {"dx": 0.5, "dim": 0}),
    ("trapz", (np.array([1.0, 2.0, 4.0]),), {"dx": 2.0}),
    ("cumulative_trapezoid", (np.array([1.0, 2.0, 4.0]), np.array([0.0, 1.0, 3.0])), {}),
    ("cumulative_trapezoid", (_a(3, 4),), {"dim": 0}),
    ("histogram", (np.array([1.0, 2.0, 1.0]), 4), {"range": (0.0, 3.0)}),
    ("histogram", (_a(20),), {"weight": _a(20, lo=0.0), "density": True}),
    ("histogram", (_a(20), np.array([-1.0, 0.0, 0.2, 1.0])), {}),
    ("vander", (np.array([1, 2, 3]),), {}),
    ("vander", (np.array([0.5, 2.0]), 4, True), {}),
    ("vander", (np.array([1, 2, 3]), 0), {}),
    ("is_complex", (np.ones(2, np.complex64),), {}),
    ("is_nonzero", (np.array([0.0]),), {}),
    ("is_same_size", (np.ones((2, 3)), np.ones((3, 2))), {}),
    ("split_with_sizes", (np.arange(6.0), [2, 4]), {}),
    ("get_device", (np.ones(2),), {}),
    ("detach", (np.ones(2),), {}),
]


def _call(lib, name, args, kw):
    ts = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    kw = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else getattr(lib, v) if k == "dtype"
              else v) for k, v in kw.items()}  # fmt: skip
    try:
        return _flat(getattr(lib, name)(*ts, **kw))
    except Exception as e:  # the error is the record
        return (type(e).__name__, str(e))


@pytest.mark.parametrize(
    "name,args,kw", FUNCTIONS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(FUNCTIONS)]
)
def test_function_matches_pytorch(real_torch, name, args, kw):
    c, t = _call(ctorch, name, args, kw), _call(real_torch, name, args, kw)
    if isinstance(t, tuple) or isinstance(c, tuple):
        assert c == t
        return
    assert len(c) == len(t)
    for a, b in zip(c, t):
        if not isinstance(b, real_torch.Tensor):
            assert a == b
            continue
        a, b = a.numpy(), b.numpy()
        assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


ERRORS = [
    ("dropout", (X3, 0.5), {}),
    ("kl_div", (_a(2), _a(2), "mean"), {}),
    ("hann_window", (-1,), {}),
    ("hann_window", (4,), {"dtype": "long"}),
    ("unravel_index", (np.array([1.0]), (3, 4)), {}),
    ("block_diag", (np.ones((2, 2, 2)),), {}),
    ("combinations", (np.ones((2, 2)),), {}),
    ("vander", (np.ones((2, 2)),), {}),
]


@pytest.mark.parametrize(
    "name,args,kw", ERRORS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(ERRORS)]
)
def test_errors_match_pytorch(real_torch, name, args, kw):
    c, t = _call(ctorch, name, args, kw), _call(real_torch, name, args, kw)
    assert isinstance(t, tuple)
    assert c[0] == t[0]
    # PyTorch's argument-parser messages list its overloads: compare their first line
    assert c[1].splitlines()[0][:40] == t[1].splitlines()[0][:40] or c[0] == "TypeError"


def test_block_diag_gradient_matches_pytorch(real_torch):
    grads = []
    for lib in (ctorch, real_torch):
        a = lib.tensor(_a(2, 2), requires_grad=True)
        b = lib.tensor(_a(3), requires_grad=True)
        out = lib.block_diag(a, b)
        (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for c, t in zip(*grads):
        np.testing.assert_allclose(c, t)


def test_forms_load_lazily():
    import subprocess
    import sys

    code = (
        "import sys, compat.torch as t; assert 'compat.torch._aten_forms' not in sys.modules;"
        "t.dropout; assert 'compat.torch._aten_forms' in sys.modules;"
        "assert not hasattr(t, 'no_such_name')"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


METHODS = [
    ("sum_to_size", (2, 3, 4), ((3, 1),)),
    ("sum_to_size", (2, 3), (3,)),
    ("sum_to_size", (2, 3), ((2, 1),)),
    ("sum_to_size", (2, 3), (1, 1)),
    ("sum_to_size", (2, 3), (2, 3)),
    ("sum_to_size", (2, 3), (4, 3)),
    ("pin_memory", (2,), ()),
    ("hardshrink", (2, 3), (0.3,)),
    ("histogram", (10,), (3,)),
]


@pytest.mark.parametrize(
    "name,shape,args", METHODS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(METHODS)]
)
def test_method_matches_pytorch(real_torch, name, shape, args):
    data = _a(*shape)
    res = []
    for lib in (ctorch, real_torch):
        x = lib.tensor(data, requires_grad=name != "histogram")
        try:
            out = _flat(getattr(x, name)(*args))
        except Exception as e:  # the error is the record
            res.append((type(e).__name__, str(e)))
            continue
        grads = None
        if x.requires_grad:
            sum(o.sum() * (i + 2) for i, o in enumerate(out)).backward()
            grads = x.grad.numpy()
        res.append(([o.detach().numpy() for o in out], grads))
    c, t = res
    if isinstance(t[0], str):
        assert c == t
        return
    for a, b in zip(c[0], t[0]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)
    if t[1] is not None:
        np.testing.assert_allclose(c[1], t[1])


def test_stft_and_prelu_methods_are_the_functions():
    x = ctorch.tensor(_a(64))
    w = ctorch.hann_window(16, dtype=ctorch.float64)
    s = x.stft(16, window=w, return_complex=True)
    np.testing.assert_array_equal(
        s.numpy(), ctorch.stft(x, 16, window=w, return_complex=True).numpy()
    )
    np.testing.assert_allclose(s.istft(16, window=w, length=64).numpy(), x.numpy(), atol=1e-12)
    y, a = ctorch.tensor(_a(2, 3, 4)), ctorch.tensor([0.25])
    np.testing.assert_array_equal(y.prelu(a).numpy(), ctorch.prelu(y, a).numpy())


def _asarray_record(lib):
    import warnings

    x, y = lib.ones(3), lib.ones(2, requires_grad=True)
    calls = [
        lambda: lib.asarray(x) is x,
        lambda: lib.asarray(x, dtype=lib.float64),
        lambda: lib.asarray(x, copy=True) is x,
        lambda: lib.asarray(x, dtype=lib.float64, copy=False),
        lambda: lib.asarray([1, 2.5]),
        lambda: lib.asarray([1, 2]),
        lambda: lib.asarray(np.ones(2, np.float32)).dtype,
        lambda: lib.asarray(3.5),
        lambda: lib.asarray([1, 2], requires_grad=True),
        lambda: lib.asarray([1.0, 2], requires_grad=True),
        lambda: lib.asarray(y, requires_grad=False).requires_grad,
        lambda: lib.asarray(y, requires_grad=True) is y,
        lambda: lib.asarray(x, dtype=lib.int64, copy=True),
        lambda: lib.tensor([[1, 2], [3]]),
        lambda: lib.tensor([[1, 2], 3]),
        lambda: lib.tensor([[[1], [2]], [[1], [2, 3]]]),
    ]
    out = []
    for f in calls:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(repr(f()))
        except Exception as e:  # the error is the record
            out.append((type(e).__name__, str(e)))
    return out


def test_asarray_and_ragged_data_match_pytorch(real_torch):
    assert _asarray_record(ctorch) == _asarray_record(real_torch)


def _more_record(lib):
    out = []
    e = lib.empty_strided((2, 3), (1, 2), dtype=lib.float64)
    out.append((tuple(e.shape), e.stride(), e.is_contiguous(), e.is_leaf, str(e.dtype)))
    out.append(lib.empty_strided((0, 3), (3, 1)).shape)
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    f = lib.fill(x, 2.0)
    f.sum().backward()
    out.append((f.detach().numpy().tolist(), x.grad.numpy().tolist()))
    out.append(lib.fill(lib.ones(2, dtype=lib.int64), 2.7).numpy().tolist())
    v = lib.tensor(3.0, requires_grad=True)
    r = lib.fill(lib.ones(2), v)
    (r * lib.tensor([1.0, 2.0])).sum().backward()
    out.append((r.detach().numpy().tolist(), float(v.grad)))
    y = lib.ones(4)
    out.append(lib.dropout_(y, 0.5, False) is y)
    out.append(lib.feature_dropout(y.reshape(2, 2), 0.5, False).numpy().tolist())
    out.append(lib.newaxis)
    try:
        lib.fill(lib.ones(2), lib.ones(2))
    except Exception as err:  # the error is the record
        out.append((type(err).__name__, str(err)))
    return out


def test_empty_strided_fill_and_dropout_forms_match_pytorch(real_torch):
    assert _more_record(ctorch) == _more_record(real_torch)


def test_feature_dropout_zeroes_whole_channels():
    ctorch.manual_seed(0)
    x = ctorch.ones(64, 8, 3, 3)
    y = ctorch.feature_dropout(x, 0.5, True)
    per_channel = y.reshape(64, 8, 9)
    # each channel is all zeros or all 2 (= 1 / (1 - p)), both kinds present
    first = per_channel[:, :, :1]
    assert bool((per_channel == first).all())
    assert set(np.unique(first.numpy()).tolist()) == {0.0, 2.0}


def test_shared_memory_is_refused_clearly():
    # PyTorch's Hogwild training shares parameters between processes; a silent copy per
    # process would train nothing the parent sees
    x = ctorch.ones(2)
    assert x.is_shared() is False
    with pytest.raises(NotImplementedError, match="shared-memory tensors"):
        x.share_memory_()
    with pytest.raises(NotImplementedError, match="shared-memory tensors"):
        ctorch.nn.Linear(2, 2).share_memory()
